"""The job as a SkyPilot task: one GPU (H200 preferred, H100 accepted), spot with managed recovery, the pinned GPU
stack installed in `setup`, `run` = `arena jobs run` (gate → train → score) at the pinned commits.

Built here as the plain YAML config SkyPilot reads (`sky.Task.from_yaml_config` validates it against SkyPilot's
own schema; `render_yaml` is what `sky jobs launch` takes by hand). Secrets are named, never valued: their values
are given at launch (`--secret NAME`), from the launching job's environment.

Configuration (environment variables; in Actions, repository variables and secrets):
  ARENA_SKYPILOT_ENDPOINT   the SkyPilot API server (required to launch or poll)
  ARENA_ARTIFACT_BUCKET     a bucket URL (s3://, gs://, r2://, ...) mounted at /artifacts for checkpoints and
                            results (required)
  ARENA_SUITE_SOURCE        the private suite: a bucket URL copied to /suite (required; never this repository)
  ARENA_GPU_TYPES           accelerators in order of preference (default H200,H100)
  ARENA_USE_SPOT            spot instances with recovery (default true)
  ARENA_SECRETS             the secrets the job receives, by name (default HF_TOKEN)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import yaml

from launch.spec import JobSpec

ARTIFACTS = "/artifacts"
SUITE = "/suite"
WORKDIR = "~/arena"
ENV_CHECKOUT = "~/arena-env"
BUCKET = re.compile(r"^(s3|gs|r2|cos|oci|azure|https)://[A-Za-z0-9._/-]+$")
SECRET_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
GPU_TYPE = re.compile(r"^[A-Za-z0-9-]{1,32}$")
REPOSITORY_URL = "https://github.com/{repository}.git"
# What `setup` installs: the arena at its pinned commit with the GPU stack (pins in pyproject.toml's train and gpu
# extras), and the environment's files at the PR's commit, taken out of git without running anything from them.
SETUP = """\
set -euo pipefail
command -v docker >/dev/null || { curl -fsSL https://get.docker.com | sudo sh; }
sudo usermod -aG docker "$USER" || true
if [ ! -d {workdir}/.git ]; then git clone --filter=blob:none "$ARENA_REPOSITORY_URL" {workdir}; fi
cd {workdir}
git fetch --quiet origin "$ARENA_COMMIT" "+refs/pull/$ARENA_PR/head:refs/remotes/origin/pr-$ARENA_PR" || \\
  git fetch --quiet origin "$ARENA_COMMIT" "$ARENA_ENV_COMMIT"
git checkout --quiet --detach "$ARENA_COMMIT"
rm -rf {env_checkout} && mkdir -p {env_checkout}
git archive "$ARENA_ENV_COMMIT" "environments/$ARENA_ENV_NAME" | tar -x -C {env_checkout}
python3 -m venv ~/arena-venv
~/arena-venv/bin/pip install --quiet --upgrade pip
~/arena-venv/bin/pip install --quiet -e '.[train,gpu]'
"""
RUN = """\
set -euo pipefail
echo "arena-job: SkyPilot task $SKYPILOT_TASK_ID (stable across recoveries), artifacts in $ARENA_JOB_OUT"
cd {workdir}
export ARENA_JOB_ENVIRONMENT="$HOME/arena-env/environments/$ARENA_ENV_NAME"
# The job talks to Docker as the docker group (setup added the user to it; this shell predates that).
exec sg docker -c "$HOME/arena-venv/bin/arena jobs run"
"""


class SkyPilotConfigError(ValueError):
    """Missing or malformed SkyPilot configuration; the message names the variable and what to set."""


@dataclass(frozen=True)
class SkyPilotConfig:
    """Where jobs run and what they may use."""

    endpoint: str
    artifact_bucket: str
    suite_source: str
    gpu_types: tuple[str, ...] = ("H200", "H100")
    use_spot: bool = True
    secrets: tuple[str, ...] = ("HF_TOKEN",)
    disk_gb: int = 512

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SkyPilotConfig:
        """The configuration from environment variables; SkyPilotConfigError names what is missing or wrong."""
        missing = [name for name in ("ARENA_SKYPILOT_ENDPOINT", "ARENA_ARTIFACT_BUCKET", "ARENA_SUITE_SOURCE")
                   if not (env.get(name) or "").strip()]
        if missing:
            raise SkyPilotConfigError(f"{', '.join(missing)} not set: the SkyPilot backend needs the API server's "
                                      "URL, a bucket for artifacts and the private suite's bucket (README, "
                                      "'One-time set-up')")
        endpoint = env["ARENA_SKYPILOT_ENDPOINT"].strip().rstrip("/")
        if not re.match(r"^https?://[^\s/]+", endpoint):
            raise SkyPilotConfigError(f"ARENA_SKYPILOT_ENDPOINT={endpoint!r}: give the API server's URL, e.g. "
                                      "https://skypilot.example.org")
        for name in ("ARENA_ARTIFACT_BUCKET", "ARENA_SUITE_SOURCE"):
            if not BUCKET.match(env[name].strip()):
                raise SkyPilotConfigError(f"{name}={env[name]!r}: give a bucket URL such as s3://name/path")
        gpus = tuple(g.strip() for g in (env.get("ARENA_GPU_TYPES") or "H200,H100").split(",") if g.strip())
        secrets = tuple(s.strip() for s in (env.get("ARENA_SECRETS") or "HF_TOKEN").split(",") if s.strip())
        bad = [g for g in gpus if not GPU_TYPE.match(g)] + [s for s in secrets if not SECRET_NAME.match(s)]
        if bad or not gpus:
            raise SkyPilotConfigError(f"ARENA_GPU_TYPES / ARENA_SECRETS: {bad[0] if bad else 'empty'!r} is not a "
                                      "GPU type or secret name")
        spot = (env.get("ARENA_USE_SPOT") or "true").strip().lower()
        if spot not in ("true", "false"):
            raise SkyPilotConfigError(f"ARENA_USE_SPOT={spot!r}: true or false")
        return cls(endpoint, env["ARENA_ARTIFACT_BUCKET"].strip(), env["ARENA_SUITE_SOURCE"].strip(), gpus,
                   spot == "true", secrets)


def task_config(spec: JobSpec, config: SkyPilotConfig) -> dict:
    """The SkyPilot task YAML (as a dict) for one job."""
    if spec.repository is None or spec.arena_commit is None or spec.pr is None:
        raise SkyPilotConfigError("a SkyPilot job needs the repository, the arena's commit and the PR in its "
                                  "description (the bot's launch request gives them)")
    resources: dict = {"any_of": [{"accelerators": f"{gpu}:1"} for gpu in config.gpu_types],
                       "disk_size": config.disk_gb}
    if config.use_spot:
        # Preempted: the controller relaunches the job (same SKYPILOT_TASK_ID, same artifact folder), which resumes
        # from its newest checkpoint; a failure of the job itself is not retried.
        resources.update(use_spot=True, job_recovery={"strategy": "EAGER_NEXT_REGION", "max_restarts_on_errors": 0})
    return {
        "name": spec.name,
        "resources": resources,
        "envs": {"ARENA_REPOSITORY_URL": REPOSITORY_URL.format(repository=spec.repository),
                 "ARENA_COMMIT": spec.arena_commit, "ARENA_ENV_COMMIT": spec.commit,
                 "ARENA_ENV_NAME": spec.environment, "ARENA_PR": str(spec.pr), "ARENA_JOB_SPEC": spec.to_json(),
                 "ARENA_JOB_OUT": f"{ARTIFACTS}/{spec.artifact_path}", "ARENA_SUITE": SUITE,
                 "HF_HUB_DISABLE_TELEMETRY": "1"},
        "secrets": {name: None for name in config.secrets},
        "file_mounts": {ARTIFACTS: {"source": config.artifact_bucket, "mode": "MOUNT"},
                        SUITE: {"source": config.suite_source, "mode": "COPY"}},
        "setup": SETUP.replace("{workdir}", WORKDIR).replace("{env_checkout}", ENV_CHECKOUT),
        "run": RUN.replace("{workdir}", WORKDIR),
    }


def render_yaml(spec: JobSpec, config: SkyPilotConfig) -> str:
    """The task as YAML a person can read and launch by hand (`sky jobs launch FILE --secret HF_TOKEN`)."""
    header = (f"# The arena's job for {spec.environment} at {spec.commit[:12]}, as `arena launch --backend skypilot`"
              " builds it.\n# Launch by hand: sky jobs launch this.yaml " +
              " ".join(f"--secret {name}" for name in config.secrets) + "\n")
    return header + yaml.dump(task_config(spec, config), Dumper=_BlockDumper, sort_keys=False, width=100)


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (setup, run) as literal blocks, as a person would write them."""


_BlockDumper.add_representer(str, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))
