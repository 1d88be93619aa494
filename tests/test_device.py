"""The device choice (finrag.core.device) without a GPU: CUDA when torch sees one, else MPS, else the CPU;
FINRAG_DEVICE overrides and fails clearly when it names a device that is not there."""

from __future__ import annotations

import types

import pytest

from finrag.core import device as dev


@pytest.fixture
def machine(monkeypatch):
    def set_(cuda=False, mps=False):
        monkeypatch.setattr(dev, "_cuda_available", lambda: cuda)
        monkeypatch.setattr(dev, "_mps_available", lambda: mps)

    return set_


def test_cuda_first_then_mps_then_cpu(machine):
    machine(cuda=True, mps=True)
    assert dev.choose_device({}) == "cuda"
    machine(cuda=False, mps=True)
    assert dev.choose_device({}) == "mps"
    machine()
    assert dev.choose_device({}) == "cpu"


def test_the_environment_overrides(machine):
    machine(cuda=True)
    assert dev.choose_device({"FINRAG_DEVICE": "cpu"}) == "cpu"
    assert dev.choose_device({"FINRAG_DEVICE": "cuda:1"}) == "cuda:1"


@pytest.mark.parametrize("name", ["cuda", "mps", "tpu"])
def test_a_device_that_is_not_there_fails_with_its_name(machine, name):
    machine()
    with pytest.raises(dev.DeviceUnavailable, match=name):
        dev.choose_device({"FINRAG_DEVICE": name})


def test_precision_gpu_fp16_cpu_unchanged():
    assert dev.gpu_precision("cuda:0", "auto") == "fp16"
    assert dev.gpu_precision("cuda", "fp32") == "fp32"
    assert dev.gpu_precision("cpu", "auto") is None  # the caller's CPU rule applies, as before
    assert dev.device_type("cuda:1") == "cuda"


def test_llama_offloads_only_where_its_build_can(monkeypatch):
    monkeypatch.delenv("FINRAG_DEVICE", raising=False)
    gpu_build = types.SimpleNamespace(llama_supports_gpu_offload=lambda: True)
    cpu_build = types.SimpleNamespace(llama_supports_gpu_offload=lambda: False)
    assert dev.llama_gpu_layers(gpu_build) == -1
    assert dev.llama_gpu_layers(cpu_build) == 0
    assert dev.llama_gpu_layers(types.SimpleNamespace()) == 0
    assert dev.llama_gpu_layers(gpu_build, requested=12) == 12
    monkeypatch.setenv("FINRAG_DEVICE", "cpu")
    assert dev.llama_gpu_layers(gpu_build) == 0


def test_this_machine_gets_a_device_torch_accepts():
    import torch

    torch.empty(1, device=dev.choose_device())
