"""Stage verifier_train: the claim verifier (gradient boosting over alignment features), cross-fitted over the
human dev sets' groups; its out-of-fold scores, thresholds and the study judge's combination."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.config import mirror_dir
from finrag.core.io import write_json
from finrag.core.provenance import provenance
from finrag.score.verifier.params import VerifierTrainParams
from finrag.score.verifier.train import train_verifier


def run() -> None:
    p = VerifierTrainParams.load()
    metrics = train_verifier(Path(p.pairs), Path(p.out_dir), p.train, mirror_dir(required=True), p.numeric)
    out = {k: v for k, v in metrics.items() if k != "seconds"}  # wall times vary: logged, never written
    out["_provenance"] = provenance(
        "17_verifier_train", p, datasets=["edgar_train", "tatqa-dev", "human-dev"]
    )
    write_json(Path(p.metrics_out), out)


if __name__ == "__main__":
    main(run)
