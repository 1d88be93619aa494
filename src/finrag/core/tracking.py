"""MLflow mirror of each stage's params and metrics, in a local file store (git-ignored `mlruns/`).

DVC owns ordering and caching; MLflow is only a browsable mirror, so a tracking failure never fails a stage.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping
from typing import Any

from finrag.core.config import repo_root
from finrag.core.params import StageParams

log = logging.getLogger(__name__)


def _flatten(d: Mapping, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, f"{key}."))
        else:
            out[key] = v
    return out


def _numeric(d: Mapping) -> dict[str, float]:
    return {
        k: float(v)
        for k, v in _flatten(d).items()
        if isinstance(v, int | float) and not isinstance(v, bool) and v == v  # drop NaN
    }


@contextlib.contextmanager
def stage_run(stage: str, params: Mapping | StageParams | None = None, nested: bool = False) -> Iterator[Any]:
    """Open an MLflow run for a stage; yields a logger with .metrics(dict) (no-op when MLflow is unusable)."""
    if os.environ.get("FINRAG_NO_MLFLOW"):
        yield _NullRun()
        return
    try:
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        import mlflow

        if not nested:
            mlflow.set_tracking_uri((repo_root() / "mlruns").as_uri())
            mlflow.set_experiment("finrag")
        mlflow.start_run(run_name=stage, nested=nested)
    except Exception as exc:  # noqa: BLE001 - tracking must never fail a stage
        log.warning("MLflow unavailable (%s); stage continues without tracking", exc)
        yield _NullRun()
        return
    if isinstance(params, StageParams):
        params = params.as_dict()
    if params:
        try:
            mlflow.log_params({k: str(v)[:500] for k, v in _flatten(params).items()})
        except Exception as exc:  # noqa: BLE001 - a rejected parameter name must not fail the stage
            log.warning("MLflow refused the stage's params (%s); the run goes on without them", exc)
    try:
        yield _MlflowRun(mlflow)
    finally:
        try:
            mlflow.end_run()
        except Exception as exc:  # noqa: BLE001
            log.warning("MLflow could not close the run (%s)", exc)


class _NullRun:
    def metrics(self, d: Mapping) -> None:
        pass


class _MlflowRun:
    def __init__(self, mlflow):
        self._m = mlflow

    def metrics(self, d: Mapping) -> None:
        with contextlib.suppress(Exception):
            self._m.log_metrics(_numeric(d))
