"""A stage that fails (a replay miss, a crash half-way) leaves results/ as it was (issue 22, probe 6)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import yaml

from finrag.core.config import DataUnavailable
from finrag.core.io import restored_on_failure, write_json

ROOT = Path(__file__).resolve().parents[2]


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _results(tmp_path: Path) -> Path:
    res = tmp_path / "results"
    write_json(res / "metrics" / "eval_main.json", {"kappa": 0.5})
    (res / "scores.jsonl").write_text('{"a": 1}\n')
    return res


def _half_done_stage(res: Path) -> None:
    write_json(res / "metrics" / "eval_main.json", {"kappa": 0.9})  # rewritten
    (res / "scores.jsonl").unlink()  # removed
    (res / "plots").mkdir()
    (res / "plots" / "new.png").write_bytes(b"png")  # created
    raise RuntimeError("cache miss (replay mode)")


def test_a_failing_body_leaves_results_byte_identical(tmp_path: Path) -> None:
    res = _results(tmp_path)
    before = _snapshot(res)
    with pytest.raises(RuntimeError, match="cache miss"), restored_on_failure(res):
        _half_done_stage(res)
    assert _snapshot(res) == before


def test_success_and_exit_zero_keep_the_new_outputs(tmp_path: Path) -> None:
    res = _results(tmp_path)
    with restored_on_failure(res):
        write_json(res / "metrics" / "eval_main.json", {"kappa": 0.9})
    assert b"0.9" in (res / "metrics" / "eval_main.json").read_bytes()
    with pytest.raises(SystemExit), restored_on_failure(res):
        write_json(res / "metrics" / "eval_main.json", {"kappa": 0.7})
        sys.exit(0)
    assert b"0.7" in (res / "metrics" / "eval_main.json").read_bytes()


def test_a_non_zero_exit_and_ctrl_c_restore(tmp_path: Path) -> None:
    res = _results(tmp_path)
    before = _snapshot(res)
    for exc in (SystemExit(1), KeyboardInterrupt()):
        with pytest.raises(type(exc)), restored_on_failure(res):
            write_json(res / "metrics" / "eval_main.json", {"kappa": 0.1})
            raise exc
        assert _snapshot(res) == before


def _stage_shell():
    spec = importlib.util.spec_from_file_location("_stage", ROOT / "scripts" / "_stage.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_stage_shell_restores_and_exits_2_on_missing_data(tmp_path: Path, capsys) -> None:
    res = _results(tmp_path)
    before = _snapshot(res)

    def stage() -> None:
        write_json(res / "metrics" / "eval_main.json", {"kappa": 0.2})
        raise DataUnavailable("the mirror lacks 3M_2018_10K.pdf")

    with pytest.raises(SystemExit) as ei:
        _stage_shell().main(stage, results_dir=res)
    assert ei.value.code == 2
    assert _snapshot(res) == before
    err = capsys.readouterr().err
    assert "3M_2018_10K.pdf" in err and "left as it was" in err


def test_every_git_tracked_results_output_is_persistent() -> None:
    """DVC deletes a stage's outputs before running it unless they are `persist: true`; the git-tracked ones under
    results/ must survive a failed run."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    missing = []
    for name, stage in stages.items():
        body = stage.get("do", stage)
        for kind in ("outs", "metrics", "plots"):
            for out in body.get(kind, []) or []:
                if not isinstance(out, dict):
                    continue
                ((path, opts),) = out.items()
                if path.startswith("results/") and opts.get("cache") is False and not opts.get("persist"):
                    missing.append(f"{name}: {path}")
    assert not missing, missing
    assert any("results/" in str(o) for s in stages.values() for o in (s.get("do", s).get("metrics") or []))
