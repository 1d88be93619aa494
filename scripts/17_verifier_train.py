"""Stage 17 verifier_train: one MiniLM cross-encoder per cross-fitting fold (resumable from checkpoints; a
finished fold is kept). `--fold N` trains one fold only, so folds can run side by side, one a core."""

from __future__ import annotations

import argparse
from pathlib import Path

from _stage import main
from finrag.config import params
from finrag.io import write_json
from finrag.provenance import provenance
from finrag.verifier.train import train_verifier


def run() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fold", type=int, action="append", help="train only this fold (repeatable)")
    a = ap.parse_args()
    p = params("verifier_train")
    metrics = train_verifier(Path(p["pairs"]), Path(p["out_dir"]), p["train"], folds=a.fold)
    if a.fold is None:  # the stage's metrics: without wall times, so a replay writes the same bytes
        keep = {"train_pairs", "train_by_source", "validation", "train_loss", "steps", "bf16", "torch_threads"}
        out = {
            "base_model": metrics["base_model"],
            "folds": {k: {x: v[x] for x in sorted(keep) if x in v} for k, v in metrics["folds"].items()},
            "seconds_train": {k: v.get("seconds_train") for k, v in metrics["folds"].items()},
            "train_pairs_per_s": {k: v.get("train_pairs_per_s") for k, v in metrics["folds"].items()},
        }
        out["_provenance"] = provenance("17_verifier_train", p, datasets=["edgar_train", "tatqa-dev", "human-dev"])
        write_json(Path(p["metrics_out"]), out)


if __name__ == "__main__":
    main(run)
