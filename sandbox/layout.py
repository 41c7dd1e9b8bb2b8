"""Where things live inside the sandbox's containers (the runtime contract of docs/SPEC.md)."""

WORKSPACE = "/workspace"
AGENT_USER = "1000:1000"
INSTANCE_DIR = "/arena/instance"
VERIFIER_DIR = "/arena/verifier"
VERIFIER = f"{VERIFIER_DIR}/verifier.py"
OUTPUT = "/arena/output/reward.json"
