"""The example job that launch/examples/arena-job.yaml is rendered from (a test keeps the file in step)."""

from __future__ import annotations

from launch.skypilot_task import SkyPilotConfig
from launch.spec import JobSpec

EXAMPLE_SPEC = JobSpec("ledger-reconciliation", "4f2a9c1d7e3b5a6f8091a2b3c4d5e6f708192a3b", "qwen3-8b-grpo-lora",
                       "full", "vllm", repository="posttrain-arena/arena",
                       arena_commit="9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a291807", pr=42, requested_by="maintainer",
                       package_digest="sha256:" + "3c" * 32, author="contributor", max_hours=24.0,
                       max_gpu_hours=24.0, suite_name="arena-heldout", suite_version="1.0.0",
                       suite_digest="sha256:" + "9a" * 32)
EXAMPLE_CONFIG = SkyPilotConfig("https://skypilot.example.org", "s3://arena-artifacts",
                                "s3://arena-private-suite/v1",
                                "ghcr.io/posttrain-arena/arena-job@sha256:" + "5e" * 32)
