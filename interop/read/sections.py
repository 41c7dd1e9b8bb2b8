"""The config sections Harbor's task.toml and BenchFlow's task.md share (BenchFlow's came from Harbor)."""

from __future__ import annotations

from interop.read.tables import Table
from interop.source_task import InteropError, SourceAuthor, Sourced

NO_NETWORK = "no-network"
HOST_ENV = "holds host environment variables; the arena passes none into the task's containers"
# Metadata keys that may name the task's field of work, in the order they are tried for the domain.
DOMAIN_KEYS = ("domain", "category", "subcategory", "field", "subfield")
RESOURCES = ("build_timeout_sec", "cpus", "memory_mb", "memory", "storage_mb", "storage", "gpus", "os")


def read_package(task: Table) -> None:
    """[task] / task: name, version, description (the title), authors and keywords (tags)."""
    source = task.source
    if task.has("name"):
        source.name = Sourced(task.text("name"), task.where("name"))
    if task.has("version"):
        source.version = Sourced(task.text("version"), task.where("version"))
    if task.has("description"):
        source.title = Sourced(task.text("description"), task.where("description"))
    for index, author in enumerate(task.items("authors")):
        if isinstance(author, dict) and author.get("name"):
            where = task.locator.where((*task.path, "authors", index))
            source.authors.append(SourceAuthor(str(author["name"]), _handle(author), where))
    source.tags += [Sourced(k, task.where("keywords")) for k in task.items("keywords") if isinstance(k, str)]
    task.report_unread()


def _handle(author: dict) -> str | None:
    for key in ("github", "github_handle"):
        if isinstance(author.get(key), str) and author[key].strip():
            return author[key].strip().lstrip("@")
    return None


def read_metadata(meta: Table) -> None:
    """[metadata]: author, difficulty, category, subcategory, tags and licence; other keys are reported."""
    source = meta.source
    name = meta.text("author_name")
    github = meta.text("author_github")
    meta.read.add("author_email")
    if name or github:
        source.authors.insert(0, SourceAuthor(name or str(github), github.lstrip("@") if github else None,
                                              meta.where("author_name" if name else "author_github")))
    if meta.has("difficulty"):
        source.difficulty = Sourced(meta.text("difficulty"), meta.where("difficulty"))
    for key in DOMAIN_KEYS:
        value = meta.get(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item.strip():
                source.domain_hints.append((f"{_label(meta)}.{key}", Sourced(item.strip(), meta.where(key))))
    source.tags += [Sourced(t, meta.where("tags")) for t in meta.items("tags") if isinstance(t, str)]
    if meta.has("license"):
        source.license = Sourced(meta.text("license"), meta.where("license"))
    if meta.has("title") and source.title is None:
        source.title = Sourced(meta.text("title"), meta.where("title"))
    meta.report_unread("has no place in the native frontmatter; dropped")


def _label(table: Table) -> str:
    return ".".join(str(p) for p in table.path) or "top level"


def read_agent(agent: Table) -> None:
    """[agent]: the timeout; who runs the agent and its network are reported."""
    limit(agent, "timeout_sec", "agent_timeout_s")
    if agent.has("user"):
        agent.source.todo("environment/Dockerfile", f"the source runs the agent as {agent.get('user')!r} "
                          f"({agent.where('user')}); the arena runs it as UID 1000 in /workspace: make the files it "
                          "must change writable by UID 1000")
    network(agent, "[agent]" if agent.locator.file.endswith(".toml") else "agent")
    agent.lose("prompt_prefix", "is run-specific harness text; not part of the prompt")
    agent.report_unread()


def read_verifier(verifier: Table, sandbox_key: str) -> None:
    """[verifier]: the timeout and a separate verifier environment; settings the arena fixes or forbids are reported."""
    source = verifier.source
    limit(verifier, "timeout_sec", "verifier_timeout_s")
    if verifier.get("type", "test-script") != "test-script":
        source.mapped(verifier.where("type"), f"verifier.type is {verifier.get('type')!r}; the test script is used "
                      "(the arena needs a deterministic verifier: a judge that calls a model cannot run without a "
                      "network)")
    user = verifier.get("user")
    if user not in (None, "root", 0):
        source.lost(verifier.where("user"), f"verifier.user {user!r}: the arena runs the verifier as root")
    verifier.lose("env", HOST_ENV)
    network(verifier, "[verifier]" if verifier.locator.file.endswith(".toml") else "verifier")
    _verifier_environment(verifier, sandbox_key)
    if verifier.has("service") and verifier.get("service") != "main":
        source.lost(verifier.where("service"), "a verifier in another compose service is not supported: the arena "
                    "has one container")
    verifier.lose("collect", "hooks in other services are not supported")
    verifier.lose("reward_range", "is not supported: an arena reward lies in [0, 1] (outside is a verifier error)")
    for key in ("judge", "memory", "hardening", "pytest_plugins"):
        verifier.lose(key, "has no arena equivalent; ignored")
    verifier.report_unread()


def _verifier_environment(verifier: Table, sandbox_key: str) -> None:
    """`environment_mode = "separate"` and [verifier.environment]: where the source's verifier runs."""
    source = verifier.source
    mode_key = f"{sandbox_key}_mode"
    mode = verifier.text(mode_key)
    env = verifier.table(sandbox_key)
    if mode not in (None, "shared", "separate"):
        raise InteropError(verifier.locator.file, f"verifier.{mode_key} is {mode!r}", "Use shared or separate.",
                           verifier.locator.line((*verifier.path, mode_key)))
    if mode == "shared" or (mode is None and not env.data):
        env.report_unread("is ignored: in shared mode the verifier runs in the agent's environment")
        return
    source.verifier_separate = verifier.where(mode_key if mode else sandbox_key)
    image = env.text("docker_image") or env.text("image")
    if image:
        source.verifier_image_ref = Sourced(image, env.where("docker_image" if env.has("docker_image") else "image"))
    for key in RESOURCES:
        env.lose(key, "(the separate verifier's own resources) is not used: the arena verifies with the package's "
                 "limits")
    network(env, f"[verifier.{sandbox_key}]" if verifier.locator.file.endswith(".toml") else f"verifier.{sandbox_key}")
    env.lose("env", HOST_ENV)
    env.lose("workdir", "is not used: the tests run in the task's working directory")
    env.report_unread()


def read_artifacts(top: Table) -> None:
    """Top-level `artifacts`: what a separate verifier receives from the agent's container."""
    if not top.get("artifacts"):
        return
    if top.source.verifier_separate:
        top.source.mapped(top.where("artifacts"), "artifacts: the arena's verifier starts from the agent's whole "
                          "final filesystem, so these paths are where the tests look for them")
    else:
        top.lose("artifacts", "are not collected by the arena")


def read_solution(solution: Table) -> None:
    """[solution] / oracle: its timeout (BenchFlow) and env."""
    limit(solution, "timeout_sec", "oracle_timeout_s")
    solution.lose("env", HOST_ENV)
    solution.report_unread()


def read_sandbox(env: Table, label: str) -> None:
    """[environment] / sandbox: build time, resources, image, workdir and network; the rest is reported."""
    source = env.source
    limit(env, "build_timeout_sec", "build_timeout_s")
    for key, legacy, native in (("memory_mb", "memory", "memory_mb"), ("storage_mb", "storage", "storage_mb")):
        value = env.size_mb(key, legacy)
        if value is not None:
            source.limits[native] = Sourced(value, env.where(key if env.has(key) else legacy))
    limit(env, "cpus", "cpus")
    image = env.text("docker_image") or env.text("image")
    if image:
        source.docker_image = Sourced(image, env.where("docker_image" if env.has("docker_image") else "image"))
    if env.has("workdir"):
        source.workdir = env.text("workdir")
    if str(env.get("os", "linux")).lower() != "linux":
        raise InteropError(env.locator.file, f"the task targets {env.get('os')!r} containers",
                           "The arena runs Linux containers only; port the task to Linux.", env.locator.line(
                               (*env.path, "os")))
    if env.get("gpus", 0):
        source.lost(env.where("gpus"), f"gpus {env.get('gpus')}: the arena gives tasks no GPU")
    env.lose("gpu_types", "has no arena equivalent")
    env.lose("tpu", "has no arena equivalent")
    env.lose("mcp_servers", "are not available to arena agents (the agent interface is shell commands and file "
             "writes)")
    env.lose("env", HOST_ENV)
    env.lose("skills_dir", "has no arena equivalent")
    env.lose("healthcheck", "has no arena equivalent; the agent starts when instance setup is done")
    if env.has("setup_commands"):
        source.todo("environment/Dockerfile", f"{env.where('setup_commands')}: setup_commands are not run by the "
                    "arena; move them into environment/Dockerfile as RUN lines")
    env.read.add("setup_commands")
    env.lose("bugswarm_image_tag", "has no arena equivalent")
    network(env, label, baseline=True)
    env.report_unread()


def limit(table: Table, key: str, native: str) -> None:
    """Record a numeric source setting as a native limit."""
    value = table.number(key)
    if value is not None:
        table.source.limits[native] = Sourced(value, table.where(key))


def network(table: Table, role: str, baseline: bool = False) -> None:
    """Record a network policy other than none; the baseline also records a policy left at the public default."""
    for key in ("allowed_hosts", "blocked_urls", "blocked_hosts"):
        table.read.add(key)
    mode = table.get("network_mode")
    allow = table.get("allow_internet")
    if mode is None and allow is not None:
        mode = "public" if allow else NO_NETWORK
        key = "allow_internet"
    else:
        key = "network_mode"
    if mode is None and baseline:
        table.source.network.append(Sourced(f"{role}: no network policy declared, so the format's default "
                                            "'public' applied", table.where() or table.source.config_file))
    elif mode is not None and mode != NO_NETWORK:
        hosts = table.get("allowed_hosts") or []
        extra = f" ({', '.join(map(str, hosts))})" if hosts else ""
        table.source.network.append(Sourced(f"{role}: network_mode {mode!r}{extra}", table.where(key)))
