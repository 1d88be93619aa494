"""Throughput of the trained verifier on claims it has not stored (the path a new file takes): the features
(MiniLM bi-encoder over the evidence sentences, numeric judge) and the classifier, claims per second on this
machine. Prints figures; not a test. Usage: python benchmarks/bench_verifier.py [--n 200] [--benchmark B]"""

from __future__ import annotations

import argparse
import time

from finrag.core.config import mirror_dir
from finrag.ingest.human_claims import LOADERS
from finrag.score.verifier.judges import VerifierJudge


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument(
        "--benchmark", default="attributionbench", choices=["findver", "attributionbench", "expertqa"]
    )
    a = ap.parse_args()
    items = LOADERS[a.benchmark](mirror_dir(required=True)).items[: a.n]
    judge = VerifierJudge(crossfit=False)  # score every claim afresh (no stored out-of-fold score)
    judge.judge_batch(["warm up"], [["warm up passage"]], [f"{a.benchmark}:warm"])
    t0 = time.perf_counter()
    judge.judge_batch([i.claim for i in items], [i.passages for i in items], [i.item_id for i in items])
    dt = time.perf_counter() - t0
    words = sum(len(" ".join(i.passages).split()) for i in items) / max(len(items), 1)
    print(
        f"verifier on {len(items)} {a.benchmark} claims (mean evidence {words:.0f} words): {dt:.1f} s, "
        f"{len(items) / dt:.2f} claims/s"
    )


if __name__ == "__main__":
    main()
