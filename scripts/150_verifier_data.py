"""Stage verifier_data: the claim verifier's training pairs (inline-XBRL claims from the training-only EDGAR
filings, TAT-QA dev claims, the human-labelled sets with their cross-fitting groups); never FinanceBench."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.config import mirror_dir
from finrag.score.verifier.build import build_training_data
from finrag.score.verifier.params import VerifierDataParams


def run() -> None:
    p = VerifierDataParams.load()
    build_training_data(mirror_dir(required=True), Path(p.out_dir), p.as_dict())


if __name__ == "__main__":
    main(run)
