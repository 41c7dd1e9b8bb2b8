"""Scripted agents: the oracle and the do-nothing agent, and the fixed command list the probes are built on.

Each is a few lines of the agent interface. Validation's dynamic checks, scoring's suite check and `arena run` share
them, which is why they sit here, below all three.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sandbox.agent_interface import Action, EndScene, Observation, Shell
from taskpkg.loader import ORACLE_INTERPRETERS
from taskpkg.package import TaskPackage

NOP_FLOOR = 0.0  # the most an instance may score when the agent does nothing


@dataclass
class ScriptedAgent:
    """Runs a fixed list of shell commands in the first scene, then ends every scene."""

    name: str
    commands: list[str] = field(default_factory=list)
    timeout_s: float = 60.0
    files: dict[str, bytes] = field(default_factory=dict)

    def provision(self, package: TaskPackage) -> dict[str, bytes]:
        """Files this agent brings, by path under /arena/."""
        return self.files

    def act(self, observation: Observation) -> Action:
        """The next command, or EndScene when none is left."""
        if self.commands:
            return Shell(self.commands.pop(0), self.timeout_s)
        return EndScene()


def oracle_agent(package: TaskPackage) -> ScriptedAgent:
    """Copies oracle/ in and runs its entrypoint as the agent would, within the oracle timeout."""
    files = {f"oracle/{path.relative_to(package.oracle_dir).as_posix()}": path.read_bytes()
             for path in sorted(package.oracle_dir.rglob("*"))
             if path.is_file() and not path.is_symlink() and "__pycache__" not in path.parts}
    entry = package.oracle_entrypoint
    interpreter = ORACLE_INTERPRETERS[entry[entry.rfind("."):]]
    return ScriptedAgent("oracle", [f"{interpreter} /arena/oracle/{entry}"], package.limits.oracle_timeout_s, files)


def nop_agent() -> ScriptedAgent:
    """Does nothing: the floor every other scripted agent is compared with."""
    return ScriptedAgent("nop")
