"""The set-up resolves both ways from one pyproject: here torch comes from this workplace's wheel folder
(`/opt/wheels`, the committed uv.lock), elsewhere `UV_NO_SOURCES=1` takes torch 2.13.0 from PyPI instead (README,
"Set-up"). Checked with uv itself, without installing anything; the PyPI side needs the package index."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from finrag.core.config import repo_root

UV = shutil.which("uv")
pytestmark = pytest.mark.skipif(UV is None, reason="uv is not on PATH (pip install uv)")


def _uv(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([UV, *args], cwd=repo_root(), capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})}, check=False)  # fmt: skip


def test_the_committed_lock_is_current_with_the_local_wheel():
    res = _uv("lock", "--check")
    assert res.returncode == 0, res.stderr
    lock = (repo_root() / "uv.lock").read_text(encoding="utf-8")
    assert 'version = "2.13.0+cpu"' in lock and "/opt/wheels" in lock


def test_without_the_local_wheel_folder_torch_resolves_from_pypi():
    before = (repo_root() / "uv.lock").read_bytes()
    res = _uv("lock", "--dry-run", env={"UV_NO_SOURCES": "1"})
    out = res.stdout + res.stderr
    if res.returncode != 0 and any(s in out for s in ("Failed to fetch", "offline", "dns error", "connect")):
        pytest.skip(f"the package index is not reachable: {out.strip().splitlines()[-1]}")
    assert res.returncode == 0, out
    assert "torch v2.13.0+cpu -> v2.13.0" in out  # PyPI's build of the same release
    assert (repo_root() / "uv.lock").read_bytes() == before  # a dry run: the committed lock is untouched
