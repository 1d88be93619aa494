"""The params.yaml sections of agreement with humans: the grader and the judges: typed, beside the code they configure, so an edit here re-runs
only the stages that read them (finrag.core.params has the base model and the rules every section follows)."""

from __future__ import annotations

from typing import ClassVar

from finrag.core.params import Block, CacheMode, Spec, StageParams


class GraderValidationParams(StageParams):
    section: ClassVar[str] = "grader_validation"
    metrics_out: str
    disagreements_out: str


class JudgeSelection(Block):
    candidates: list[str]
    benchmarks: list[str]


class ModelJudges(Block):
    sample_sizes: dict[str, int | None]
    cache_dir: str
    cache_mode: CacheMode = "replay"
    backends: dict[str, Spec] = {}
    runs: dict[str, Spec]
    pairs: list[tuple[str, str]] = []


class AgreementParams(StageParams):
    section: ClassVar[str] = "agreement"
    judges: list[str]
    selection: JudgeSelection | None = None
    sample_sizes: dict[str, int | None]
    seed: int
    finrag_labels: str
    judge_params: dict[str, Spec] = {}
    model_judges: ModelJudges | None = None
    metrics_out: str
    forest_plot: str
