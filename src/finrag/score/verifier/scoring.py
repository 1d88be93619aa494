"""Loading the trained verifier: a clear one-line error when it has not been trained or pulled."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from finrag.core.config import DataUnavailable


class VerifierMissing(DataUnavailable):
    pass


def _need(path: Path) -> Path:
    if not path.exists():
        raise VerifierMissing(
            f"the trained verifier is not at {path.parent} ({path.name} missing): run `dvc pull verifier_train` "
            "(from a DVC remote or a release) or train it with `dvc repro verifier_train` (about 10 minutes on 2 "
            "cores, with the data mirror)"
        )
    return path


def read_calibration(model_dir: Path) -> dict:
    return json.loads(_need(Path(model_dir) / "calibration.json").read_text(encoding="utf-8"))


def load_model(model_dir: Path, name: str = "model.pkl"):
    """The fitted classifier (our own stage output, so unpickling it is trusting our own file)."""
    with open(_need(Path(model_dir) / name), "rb") as fh:
        return pickle.load(fh)  # noqa: S301
