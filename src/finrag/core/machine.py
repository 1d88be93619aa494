"""What this machine is, for every timing figure and for the choices that depend on the CPU: its cores, platform
and the vector extensions that decide encoder speed (on AVX2 alone mpnet encodes about 4x slower than with
AVX-512; bf16 is native only with AMX or AVX512-BF16)."""

from __future__ import annotations

import functools
import os
import platform
from pathlib import Path

CPU_FLAGS_OF_NOTE = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")


@functools.cache
def cpu_flags() -> tuple[str, ...]:
    """The flags of CPU_FLAGS_OF_NOTE this CPU has (empty where /proc/cpuinfo is not there)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    flags = set(text.split())
    return tuple(f for f in CPU_FLAGS_OF_NOTE if f in flags)


def cpu_has_native_bf16() -> bool:
    """True when the CPU multiplies bf16 natively (Intel AMX or AVX512-BF16); elsewhere bf16 is emulated and slow."""
    return any(f in cpu_flags() for f in ("amx_bf16", "avx512_bf16"))


def machine() -> dict:
    return {"cpus": os.cpu_count(), "platform": platform.platform(), "cpu_flags": list(cpu_flags())}
