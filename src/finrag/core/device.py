"""Which accelerator a model runs on: chosen, not assumed.

CUDA when present (in fp16), else Apple's MPS, else the CPU; `FINRAG_DEVICE` overrides (`cpu`, `cuda`, `cuda:1`,
`mps`). The CPU path is what every recorded matrix and score was computed with, so it is unchanged; a GPU's
results differ in the last bits, and each model records its precision in its revision, so caches never mix the
two. torch is imported only when asked, so that importing this module costs nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

ENV = "FINRAG_DEVICE"


class DeviceUnavailable(RuntimeError):
    """FINRAG_DEVICE names a device this machine does not have."""


def _cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def _mps_available() -> bool:
    import torch

    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def choose_device(env: Mapping[str, str] | None = None) -> str:
    """The torch device for encoders and re-rankers: FINRAG_DEVICE, else cuda, else mps, else cpu."""
    env = os.environ if env is None else env
    forced = env.get(ENV, "").strip().lower()
    if forced:
        if forced.startswith("cuda") and not _cuda_available():
            raise DeviceUnavailable(f"{ENV}={forced} but torch sees no CUDA device (unset it to use the CPU)")
        if forced == "mps" and not _mps_available():
            raise DeviceUnavailable(f"{ENV}=mps but torch sees no MPS device (unset it to use the CPU)")
        if not (forced == "cpu" or forced == "mps" or forced.startswith("cuda")):
            raise DeviceUnavailable(f"{ENV}={forced!r}: expected cpu, cuda, cuda:N or mps")
        return forced
    if _cuda_available():
        return "cuda"
    if _mps_available():
        return "mps"
    return "cpu"


def device_type(device: str) -> str:
    """ "cuda:1" -> "cuda" (what torch.autocast takes)."""
    return device.split(":", 1)[0]


def gpu_precision(device: str, precision: str) -> str | None:
    """On a GPU an "auto" precision means fp16 (a 4 GB card holds the encoders and a batch of 32 in it);
    None on the CPU, where the caller's own rule (bf16 where the CPU has it natively) applies unchanged."""
    if device_type(device) == "cpu":
        return None
    return "fp16" if precision == "auto" else precision


def llama_gpu_layers(llama_cpp_module: object, requested: int | None = None) -> int:
    """Layers llama.cpp offloads: `requested` if given, else all (-1) where the installed build can offload
    (llama_supports_gpu_offload) and FINRAG_DEVICE does not say cpu, else 0."""
    if requested is not None:
        return requested
    if os.environ.get(ENV, "").strip().lower() == "cpu":
        return 0
    supports = getattr(llama_cpp_module, "llama_supports_gpu_offload", None)
    return -1 if callable(supports) and supports() else 0
