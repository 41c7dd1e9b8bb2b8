"""The job as a SkyPilot task: one GPU (H200 preferred, then H100: SkyPilot's `ordered`), on VM clouds only (they
give the job a Docker daemon for the package's sandbox; Kubernetes pods and RunPod do not), spot with managed
recovery, the whole GPU stack in a job image pinned by digest (`image_id: docker:`), `run` = `arena jobs run` at the
pinned commits.

Built here as the plain YAML config SkyPilot reads (`sky.Task.from_yaml_config` validates it against SkyPilot's
own schema; `render_yaml` is what `sky jobs launch` takes by hand). Secrets are named, never valued: their values
are given at launch (`--secret NAME`), from the launching job's environment.

A recovery starts training within minutes: the machine pulls the job image (the Python stack, vLLM and the CUDA
libraries; launch/image/Dockerfile, built and pushed by the job-image workflow), checks out the arena's commit and
installs it alone (`--no-deps`), takes the package out of git byte for byte (`arena jobs extract`), and the job reads
its checkpoints back from the artifact bucket. The job's container reaches the machine's Docker daemon through its
socket (`config.docker.run_options`); the package's containers are its siblings, built without a route anywhere but
the package registries (sandbox.build_isolation, with the job image as the egress proxy's image).

Configuration (environment variables; in Actions, repository variables and secrets):
  ARENA_SKYPILOT_ENDPOINT   the SkyPilot API server (required to launch or poll)
  ARENA_ARTIFACT_BUCKET     a bucket URL (s3://, gs://, r2://, ...) mounted at /artifacts with MOUNT_CACHED; the
                            job works on local disk and mirrors finished files there (launch.artifacts) (required)
  ARENA_SUITE_SOURCE        the private suite: a bucket URL copied to /suite (required; never this repository)
  ARENA_JOB_IMAGE           the job image, pinned: registry/name@sha256:<digest> (required; the job-image
                            workflow's summary prints it)
  ARENA_GPU_TYPES           accelerators in order of preference (default H200,H100)
  ARENA_CLOUDS              VM clouds in order of preference (default aws,gcp; kubernetes and runpod are refused)
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
LOCAL_WORK = "~/arena-work"
BUCKET = re.compile(r"^(s3|gs|r2|cos|oci|azure|https)://[A-Za-z0-9._/-]+$")
SECRET_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
GPU_TYPE = re.compile(r"^[A-Za-z0-9-]{1,32}$")
PINNED_IMAGE = re.compile(r"^[a-z0-9][a-z0-9._/:-]{0,200}@sha256:[0-9a-f]{64}$")
VM_CLOUDS = ("aws", "gcp", "azure", "lambda", "nebius", "oci", "paperspace", "fluidstack", "cudo", "do", "vast")
NO_DAEMON = ("kubernetes", "k8s", "runpod", "ssh")  # a pod or a container: no Docker daemon for the sandbox
REPOSITORY_URL = "https://github.com/{repository}.git"
VENV = "/opt/arena-venv"  # the job image's Python environment (launch/image/Dockerfile)
# What `setup` does on a fresh machine: the arena at its pinned commit on top of the image's pinned stack, and the
# package's files at the PR's commit, taken out of git byte for byte (no git attribute applies; the job compares
# their digest with the verdict's before it starts).
SETUP = """\
set -euo pipefail
if [ ! -d {workdir}/.git ]; then git clone --filter=blob:none "$ARENA_REPOSITORY_URL" {workdir}; fi
cd {workdir}
git fetch --quiet origin "$ARENA_COMMIT" "+refs/pull/$ARENA_PR/head:refs/remotes/origin/pr-$ARENA_PR" || \\
  git fetch --quiet origin "$ARENA_COMMIT" "$ARENA_ENV_COMMIT"
git checkout --quiet --detach "$ARENA_COMMIT"
{venv}/bin/pip install --quiet --no-deps -e .
rm -rf {env_checkout}
{venv}/bin/arena jobs extract --repository . --commit "$ARENA_ENV_COMMIT" --environment "$ARENA_ENV_NAME" \\
  --out {env_checkout}
"""
RUN = """\
set -euo pipefail
echo "arena-job: SkyPilot task $SKYPILOT_TASK_ID (stable across recoveries), artifacts in $ARENA_JOB_OUT"
cd {workdir}
export ARENA_JOB_ENVIRONMENT="$HOME/arena-env/environments/$ARENA_ENV_NAME"
exec {venv}/bin/arena jobs run
"""


class SkyPilotConfigError(ValueError):
    """Missing or malformed SkyPilot configuration; the message names the variable and what to set."""


@dataclass(frozen=True)
class SkyPilotConfig:
    """Where jobs run and what they may use."""

    endpoint: str
    artifact_bucket: str
    suite_source: str
    job_image: str
    gpu_types: tuple[str, ...] = ("H200", "H100")
    clouds: tuple[str, ...] = ("aws", "gcp")
    use_spot: bool = True
    secrets: tuple[str, ...] = ("HF_TOKEN",)
    disk_gb: int = 512

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SkyPilotConfig:
        """The configuration from environment variables; SkyPilotConfigError names what is missing or wrong."""
        missing = [name for name in ("ARENA_SKYPILOT_ENDPOINT", "ARENA_ARTIFACT_BUCKET", "ARENA_SUITE_SOURCE",
                                     "ARENA_JOB_IMAGE") if not (env.get(name) or "").strip()]
        if missing:
            raise SkyPilotConfigError(f"{', '.join(missing)} not set: the SkyPilot backend needs the API server's "
                                      "URL, a bucket for artifacts, the private suite's bucket and the job image "
                                      "(README, 'One-time set-up')")
        image = env["ARENA_JOB_IMAGE"].strip()
        if not PINNED_IMAGE.match(image):
            raise SkyPilotConfigError(f"ARENA_JOB_IMAGE={image!r}: pin the job image by digest, e.g. "
                                      "ghcr.io/OWNER/arena-job@sha256:<64 hex> (the job-image workflow prints it)")
        clouds = tuple(c.strip().lower() for c in (env.get("ARENA_CLOUDS") or "aws,gcp").split(",") if c.strip())
        no_daemon = [c for c in clouds if c in NO_DAEMON or c not in VM_CLOUDS]
        if no_daemon or not clouds:
            raise SkyPilotConfigError(f"ARENA_CLOUDS: {no_daemon[0] if no_daemon else 'empty'!r} gives the job no "
                                      f"Docker daemon for the sandbox; use VM clouds ({', '.join(VM_CLOUDS)})")
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
        return cls(endpoint, env["ARENA_ARTIFACT_BUCKET"].strip(), env["ARENA_SUITE_SOURCE"].strip(), image, gpus,
                   clouds, spot == "true", secrets)


def task_config(spec: JobSpec, config: SkyPilotConfig) -> dict:
    """The SkyPilot task YAML (as a dict) for one job."""
    if spec.repository is None or spec.arena_commit is None or spec.pr is None:
        raise SkyPilotConfigError("a SkyPilot job needs the repository, the arena's commit and the PR in its "
                                  "description (the bot's launch request gives them)")
    # Preference order: the first GPU type on each cloud in turn, then the next GPU type.
    resources: dict = {"ordered": [{"infra": cloud, "accelerators": f"{gpu}:1"}
                                   for gpu in config.gpu_types for cloud in config.clouds],
                       "image_id": f"docker:{config.job_image}", "disk_size": config.disk_gb}
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
                 "ARENA_JOB_OUT": f"{ARTIFACTS}/{spec.artifact_path}",
                 "ARENA_JOB_WORK": f"{LOCAL_WORK}/{spec.artifact_path}", "ARENA_JOB_GPUS": "1",
                 "ARENA_SUITE": SUITE, "ARENA_BUILD_ISOLATION": "registries",
                 "ARENA_BUILD_PROXY_IMAGE": config.job_image, "HF_HUB_DISABLE_TELEMETRY": "1"},
        "secrets": {name: None for name in config.secrets},
        # The job's container drives the machine's Docker daemon: the package's sandbox containers are siblings.
        "config": {"docker": {"run_options": ["-v /var/run/docker.sock:/var/run/docker.sock"]}},
        "file_mounts": {ARTIFACTS: {"source": config.artifact_bucket, "mode": "MOUNT_CACHED"},
                        SUITE: {"source": config.suite_source, "mode": "COPY"}},
        "setup": SETUP.replace("{workdir}", WORKDIR).replace("{env_checkout}", ENV_CHECKOUT).replace("{venv}", VENV),
        "run": RUN.replace("{workdir}", WORKDIR).replace("{venv}", VENV),
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
