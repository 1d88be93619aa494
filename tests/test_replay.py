"""The replay checks (finrag.release.replay): after the README's main command, `dvc status` may list outputs not
pulled, never a changed dependency, command or parameter."""

from __future__ import annotations

import json
import stat

from finrag.core.machine import machine
from finrag.release.replay import stale_stages

STATUS = {
    "embed@page-mpnet": [{"changed outs": {"data/embeddings/page/mpnet.npy": "not in cache"}}],
    "contexts": [{"changed deps": {"data/embeddings/page/mpnet.npy": "deleted"}}],
    "predictions": ["always changed"],
    "score": [{"changed deps": {"src/finrag/score/grader.py": "modified"}}],
    "serve_load": [{"changed deps": {"params.yaml": {"serve.port": "modified"}}}, "changed command"],
}


def test_only_stages_changed_for_a_reason_other_than_missing_data_are_stale(tmp_path):
    fake = tmp_path / "dvc"
    fake.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(STATUS)}\nEOF\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    stale = stale_stages(str(fake), tmp_path, {})
    assert stale == ["score: modified", "serve_load: changed command, modified params"]


def test_every_timing_names_the_cpu_flags():
    m = machine()
    assert m["cpus"] >= 1 and isinstance(m["cpu_flags"], list)
