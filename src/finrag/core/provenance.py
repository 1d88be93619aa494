"""Every results file states its inputs, so a figure can be traced back to a stage, its params and its data."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from finrag.core.io import canonical_json, sha256_file, sha256_text
from finrag.core.params import StageParams


def params_hash(params: Mapping | StageParams) -> str:
    """The hash of a params section as params.yaml writes it (a typed section hashes its raw form)."""
    raw = params.as_dict() if isinstance(params, StageParams) else params
    return sha256_text(canonical_json(raw))[:16]


def provenance(
    stage: str, params: Mapping | StageParams, inputs: Iterable[str | Path] = (), datasets: Iterable[str] = ()
) -> dict:
    """A small block stored under `_provenance` in each metrics JSON."""
    files = {}
    for p in inputs:
        path = Path(p)
        if path.is_file():
            files[str(p)] = sha256_file(path)[:16]
    return {
        "stage": stage,
        "params_sha256": params_hash(params),
        "inputs": files,
        "datasets": sorted(datasets),
    }
