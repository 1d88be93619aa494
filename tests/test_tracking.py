"""MLflow tracking must never fail a stage: not when it is off, not when it refuses a parameter or a close."""

from __future__ import annotations

import sys
import types

from finrag.core import tracking


def test_tracking_off_is_a_no_op(monkeypatch):
    monkeypatch.setenv("FINRAG_NO_MLFLOW", "1")
    with tracking.stage_run("s", {"a": 1}) as run:
        run.metrics({"x": 1.0})


def test_mlflow_errors_in_params_metrics_or_close_do_not_fail_the_stage(monkeypatch, tmp_path):
    monkeypatch.delenv("FINRAG_NO_MLFLOW", raising=False)
    calls = []

    def boom(*a, **k):
        calls.append("boom")
        raise ValueError("rejected")

    fake = types.SimpleNamespace(
        set_tracking_uri=lambda *a, **k: None,
        set_experiment=lambda *a, **k: None,
        start_run=lambda *a, **k: calls.append("start"),
        log_params=boom,
        log_metrics=boom,
        end_run=boom,
    )
    monkeypatch.setitem(sys.modules, "mlflow", fake)
    monkeypatch.setattr(tracking, "repo_root", lambda: tmp_path)
    ran = False
    with tracking.stage_run("s", {"bad key!": 1}) as run:
        run.metrics({"x": 1.0})
        ran = True
    assert ran and calls == ["start", "boom", "boom", "boom"]
