"""Stage setup_time: from a fresh clone of this repository (HEAD) with the data mirror to the service's first
answer, each step timed. Needs FINRAG_MIRROR and uv."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.config import mirror_dir, repo_root
from finrag.core.io import write_json
from finrag.serve.loadtest import run_setup_time
from finrag.serve.params import SetupTimeParams


def run() -> None:
    p = SetupTimeParams.load()
    mirror = mirror_dir()
    if mirror is None:
        raise SystemExit("setup_time needs the data mirror: set FINRAG_MIRROR")
    write_json(
        Path(p.out),
        run_setup_time(repo_root(), mirror, question=p.question, cold_package_cache=p.cold_package_cache),
    )


if __name__ == "__main__":
    main(run)
