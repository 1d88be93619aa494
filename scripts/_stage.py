"""Shared shell for the stage scripts: run a stage function, turn a missing-data error into one line,
and leave results/ as it was when the stage fails (see finrag.core.io.restored_on_failure; DVC keeps the outputs
in place because dvc.yaml marks them `persist: true`)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path

from finrag.core.config import DataUnavailable
from finrag.core.io import restored_on_failure

RESULTS_DIR = Path("results")


def main(fn: Callable[[], object], results_dir: Path = RESULTS_DIR) -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        with restored_on_failure(results_dir):
            fn()
    except DataUnavailable as exc:
        print(f"finrag: {exc}", file=sys.stderr)
        print(f"finrag: {results_dir}/ left as it was", file=sys.stderr)
        sys.exit(2)
