"""How long the study takes to replay, and the check that a replay changes nothing.

Two commands, both DVC's own mechanisms (docs/setup.md):
- the main command, `dvc repro --allow-missing --keep-going`: on a fresh clone every stage either replays or is
  skipped as unchanged (its outputs are in git, or are DVC outputs not pulled whose inputs did not change);
- the verifying run (`finrag verify`): every stage that does not need the embedding matrices re-executed with
  `dvc repro --force --single-item`, one at a time, then results/ and dvc.lock must be byte-identical to HEAD.

The `replay_time` stage times both on a fresh clone of HEAD; `finrag verify` runs the second in place.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import yaml

from finrag.core.machine import machine
from finrag.core.proc import timed_command

MAIN_COMMAND = ["repro", "--allow-missing", "--keep-going"]  # after `dvc`
NOT_PULLED = {"deleted", "not in cache"}


def changed_files(cwd: Path) -> list[str]:
    """results/ and dvc.lock files that differ from HEAD (untracked new files in results/ too)."""
    diff = subprocess.run(["git", "diff", "--name-only", "HEAD", "--", "results/", "dvc.lock"], cwd=cwd,
                          capture_output=True, text=True, check=False).stdout.split()  # fmt: skip
    new = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "--", "results/"], cwd=cwd,
                         capture_output=True, text=True, check=False).stdout.split()  # fmt: skip
    return sorted(set(diff) | set(new))


def stale_stages(dvc: str, cwd: Path, env: dict) -> list[str]:
    """Stages `dvc status` reports for a reason other than outputs or inputs not pulled (a changed command, a
    modified dependency): after the main command there should be none. `always_changed` stages are left out."""
    out = subprocess.run(
        [dvc, "status", "--json"], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    try:
        status = json.loads(out.stdout or "{}")
    except json.JSONDecodeError:
        return [f"dvc status: {out.stdout.strip()[:200]}"]
    stale = []
    for stage, entries in status.items():
        reasons: set[str] = set()
        for entry in entries:
            if isinstance(entry, str):
                reasons.add(entry)
                continue
            for kind in ("changed deps", "changed outs"):
                for value in (entry.get(kind) or {}).values():  # a params file's value: {param: change}
                    reasons.add(value if isinstance(value, str) else "modified params")
            if "changed command" in entry or entry == "changed command":
                reasons.add("changed command")
        if reasons - NOT_PULLED - {"always changed"}:
            stale.append(f"{stage}: {', '.join(sorted(reasons - NOT_PULLED))}")
    return stale


def rerun_stages(
    dvc: str,
    stages: Sequence[str],
    cwd: Path,
    env: dict,
    log: Path,
    echo: Callable[[str], None] | None = None,
) -> list[dict]:
    """Each stage re-executed (`dvc repro --force --single-item`), in order, each timed."""
    steps = []
    for stage in stages:
        secs = timed_command([dvc, "repro", "--force", "--single-item", stage], cwd, env, log)
        steps.append({"step": stage, "seconds": secs})
        if echo:
            echo(f"{stage}: {secs} s")
    return steps


# VIRTUAL_ENV would point uv at another environment. PYTHONDONTWRITEBYTECODE (set in some images) would make every
# stage, a new Python process, recompile each module it imports (about 4 s for scikit-learn and scipy alone): the
# replay runs with Python's default, bytecode cached after the first import.
DROPPED_ENV = ("VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")


def replay_env(mirror: Path | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
    env.update(FINRAG_NO_MLFLOW="1", FINRAG_LLM_MODE="replay")
    if mirror is not None:
        env["FINRAG_MIRROR"] = str(mirror)
    return env


def time_replay(root: Path, mirror: Path, stages: list[str], this_stage: str = "replay_time") -> dict:
    """A fresh clone of HEAD: `uv sync`, the main command (timed; then whether git is clean and which stages
    `dvc status` still calls changed), then the verifying run of `stages` (each timed) and whether results/ and
    dvc.lock are byte-identical to the commit. uv's package cache stays warm: this times the study, not the
    download of its packages (setup_time does)."""
    root = Path(root)
    uv = shutil.which("uv") or "uv"
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="finrag-replay-") as tmp:
        clone, log = Path(tmp) / "finrag", Path(tmp) / "replay.log"
        env = replay_env(mirror)
        timed_command(["git", "clone", "-q", str(root), str(clone)], Path(tmp), env, log)
        steps = [
            {
                "step": "uv sync --frozen",
                "seconds": timed_command([uv, "sync", "--frozen", "-q"], clone, env, log),
            }
        ]
        dvc = str(clone / ".venv" / "bin" / "dvc")
        # every stage but the one measuring (its own lock entry is written when it ends, so at HEAD it is stale)
        targets = [
            name for name in yaml.safe_load((clone / "dvc.yaml").read_text())["stages"] if name != this_stage
        ]
        main_s = timed_command([dvc, *MAIN_COMMAND, *targets], clone, env, log)
        main = {
            "command": "uv run dvc " + " ".join(MAIN_COMMAND),
            "measured_as": f"the same with every stage but {this_stage} (the stage measuring it) as targets",
            "seconds": main_s,
            "changed_after": changed_files(clone),
            "stale_after": [s for s in stale_stages(dvc, clone, env) if not s.startswith(f"{this_stage}:")],
        }
        t0 = time.perf_counter()
        steps += rerun_stages(dvc, stages, clone, env, log)
        replay_s = round(time.perf_counter() - t0, 1)
        diff = changed_files(clone)
    return {
        "commit": commit,
        "release_restored": False,
        "main_command": main,
        "steps": steps,
        "replay_s": replay_s,
        "byte_identical": not diff,
        "changed": diff,
        "model_calls": "none: FINRAG_LLM_MODE=replay (a call missing from llm_cache/ stops the stage)",
        "machine": machine(),
    }
