"""Shared fixtures. Real-data tests use `mirror`, which skips with a clear reason when no mirror is set."""

from __future__ import annotations

from pathlib import Path

import pytest

from finrag.core.config import mirror_dir


@pytest.fixture(scope="session")
def mirror() -> Path:
    m = mirror_dir()
    if m is None:
        pytest.skip(
            "real-data mirror absent: set FINRAG_MIRROR to a copy of the data mirror to run this test"
        )
    return m
