"""Where things are: the data mirror, the repository root, params.yaml sections.

The product never names a fixed data folder; the mirror is found through `FINRAG_MIRROR` or `params.yaml: data.mirror`.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Literal, overload

import yaml

FINANCEBENCH_COMMIT = "cc39aeb4afdf33909ee1412188bf89035950c2eb"
FINANCEBENCH_RAW = f"https://raw.githubusercontent.com/patronus-ai/financebench/{FINANCEBENCH_COMMIT}"


class DataUnavailable(RuntimeError):
    """Raised when a stage needs real data that is neither mirrored nor downloadable. Message is one line."""


def repo_root() -> Path:
    env = os.environ.get("FINRAG_ROOT")
    if env:
        return Path(env).resolve()
    here = Path.cwd().resolve()
    for p in [here, *here.parents]:
        if (p / "params.yaml").exists() and (p / "src" / "finrag").exists():
            return p
    return Path(__file__).resolve().parents[3]


@cache
def _params_file(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh) or {}


def params(section: str | None = None, path: Path | None = None) -> dict:
    """Read params.yaml (or one section of it: each stage reads only its own)."""
    p = path or repo_root() / "params.yaml"
    data = _params_file(str(p))
    if section is None:
        return data
    if section not in data:
        raise KeyError(f"params.yaml has no section '{section}'")
    return data[section]


@overload
def mirror_dir(required: Literal[True]) -> Path: ...
@overload
def mirror_dir(required: bool = False) -> Path | None: ...
def mirror_dir(required: bool = False) -> Path | None:
    """The local mirror of real data (financebench/, edgar/, humanlabels/, tatqa/), or None."""
    env = os.environ.get("FINRAG_MIRROR")
    candidates = [env] if env else []
    try:
        cfg = params("data").get("mirror")
        if cfg:
            candidates.append(str(repo_root() / cfg) if not os.path.isabs(cfg) else cfg)
    except (KeyError, FileNotFoundError):
        pass
    for c in candidates:
        if c and Path(c).is_dir():
            return Path(c).resolve()
    if env:  # set, but not a folder: say so rather than carry on as if no mirror had been named
        raise DataUnavailable(f"FINRAG_MIRROR is set to {env}, which is not a folder")
    if required:
        raise DataUnavailable(
            "real filings are not available: set FINRAG_MIRROR to a local copy of the data mirror "
            "(layout: financebench/, edgar/, humanlabels/, tatqa/); see README, 'Data'. Without real data, run "
            "the synthetic study: dvc repro synthetic_study"
        )
    return None
