"""The verifying replay (`replay_time`, `finrag verify`) re-executes every recorded generation family: a family added to
`generate.run_families` but not to `replay_time.stages` leaves its answers missing in the clean clone, and the stages
that read them fail there (conditions did once, 2026-12-08)."""

from __future__ import annotations

import yaml

from finrag.core.config import repo_root


def test_every_run_family_is_replayed_by_the_verifying_run():
    params = yaml.safe_load((repo_root() / "params.yaml").read_text(encoding="utf-8"))
    stages = set(params["replay_time"]["stages"])
    missing = [f for f in params["generate"]["run_families"] if f"generate@{f}" not in stages]
    assert not missing, f"add to replay_time.stages: {', '.join(f'generate@{f}' for f in missing)}"
