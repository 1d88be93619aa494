"""The params.yaml sections of scoring the study: typed, beside the code they configure, so an edit here re-runs
only the stages that read them (finrag.core.params has the base model and the rules every section follows)."""

from __future__ import annotations

from typing import ClassVar

from finrag.core.params import Block, CacheMode, Spec, StageParams


class JudgeChoice(Block):
    name: str
    params: Spec = {}
    selected_by: str | None = None  # the agreement results whose selected judge this must be


class ScoreParams(StageParams):
    section: ClassVar[str] = "score"
    families: list[str]
    answers_dir: str
    questions: str
    judge: JudgeChoice
    llm_judge: Spec | None = None
    llm_splitter: Spec | None = None
    llm_grader: Spec | None = None
    # the LLM grader on the rule's candidates' uncertain grades, as a sensitivity table only (never the records)
    grader_sensitivity: Spec | None = None
    cache_dir: str
    cache_mode: CacheMode = "replay"
    citations: bool = True
    grader: Spec = {}
    main_kinds: list[str]
    replicate_suffix: str
    selection: Spec
    # below this judge-human kappa (worst benchmark) a groundedness difference is reported as descriptive only
    min_judge_kappa: float = 0.4
    correlation: Spec
    progress: bool = True
    metrics_out: str
    generation_out: str
    records_out: str
    plots_dir: str
