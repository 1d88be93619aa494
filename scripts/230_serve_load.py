"""Stage serve_load: load-test `finrag serve` on this machine (cached answers at several user counts, the
live path per stage) and write the figures the README prints. Timing figures: they move with the machine."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.config import repo_root
from finrag.core.io import write_json
from finrag.serve.loadtest import run_load_test
from finrag.serve.params import ServeLoadParams


def run() -> None:
    p = ServeLoadParams.load()
    out = run_load_test(
        repo_root(),
        users=p.users,
        duration_s=p.duration_s,
        live_questions=p.live_questions,
        seed=p.seed,
        goal_rps=p.goal.requests_per_s,
        goal_p99_ms=p.goal.p99_ms,
    )
    write_json(Path(p.out), out)


if __name__ == "__main__":
    main(run)
