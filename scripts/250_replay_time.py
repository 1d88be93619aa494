"""Stage replay_time: a fresh clone of HEAD replays every stage that needs no embedding, each timed, and
checks results/ and dvc.lock come out byte-identical. Needs FINRAG_MIRROR and uv; commit first (it clones HEAD)."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.config import mirror_dir, repo_root
from finrag.core.io import write_json
from finrag.release.params import ReplayTimeParams
from finrag.release.replay import time_replay


def run() -> None:
    p = ReplayTimeParams.load()
    mirror = mirror_dir()
    if mirror is None:
        raise SystemExit("replay_time needs the data mirror: set FINRAG_MIRROR")
    result = time_replay(repo_root(), mirror, list(p.stages))
    write_json(Path(p.out), result)
    if not result["byte_identical"]:
        raise SystemExit(f"replay_time: the replay changed {result['changed']}")


if __name__ == "__main__":
    main(run)
