"""Shared shell for the numbered stage scripts: run a stage function, turn a missing-data error into one line."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from finrag.config import DataUnavailable


def main(fn: Callable[[], object]) -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        fn()
    except DataUnavailable as exc:
        print(f"finrag: {exc}", file=sys.stderr)
        sys.exit(2)
