"""The floating-point type a local (transformers) model runs in.

bfloat16 on a GPU, and on a CPU with bfloat16 matrix instructions (Intel AMX or AVX512-BF16, listed in
/proc/cpuinfo): there a prompt's encoding, most of a small model's time, is about three times faster than in float32
(a 1,450-token prompt of the 135M model: 2.3-2.5 s against 4.8-8.1 s on one core, docs/TRAINING.md). Elsewhere
float32, since a CPU without those instructions emulates bfloat16 slowly. `ARENA_LOCAL_DTYPE=float32` (or
`bfloat16`) fixes it. The type changes the replies' numbers, so whatever caches replies keys them by it.
"""

from __future__ import annotations

import os
from pathlib import Path

DTYPE_VARIABLE = "ARENA_LOCAL_DTYPE"
DTYPES = ("bfloat16", "float32")
BF16_FLAGS = frozenset({"amx_bf16", "avx512_bf16"})


def cpu_has_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether the CPU lists a bfloat16 matrix instruction set (False where /proc/cpuinfo cannot be read)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            return bool(BF16_FLAGS & set(line.partition(":")[2].split()))
    return False


def local_dtype(device: str, cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """ARENA_LOCAL_DTYPE when set, else bfloat16 on a GPU or a CPU with bfloat16 instructions, else float32."""
    chosen = os.environ.get(DTYPE_VARIABLE, "").strip()
    if chosen:
        if chosen not in DTYPES:
            raise ValueError(f"{DTYPE_VARIABLE}={chosen!r}: give one of {', '.join(DTYPES)}")
        return chosen
    return "bfloat16" if device != "cpu" or cpu_has_bf16(cpuinfo) else "float32"


def default_dtype() -> str:
    """The type a LocalBackend opened on its default device (a GPU where torch sees one) runs in."""
    if os.environ.get(DTYPE_VARIABLE, "").strip():
        return local_dtype("cpu")
    import torch

    return local_dtype("cuda" if torch.cuda.is_available() else "cpu")
