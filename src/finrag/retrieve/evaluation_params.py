"""The params.yaml sections of what is made of the retrieval runs: the grid, the selection, the filtered rows, the frozen contexts: typed, beside the code they configure, so an edit here re-runs
only the stages that read them (finrag.core.params has the base model and the rules every section follows)."""

from __future__ import annotations

from typing import ClassVar, Literal

from finrag.core.params import Block, StageParams


class GridParams(StageParams):
    section: ClassVar[str] = "grid"
    chunkers: list[str]
    embedders: list[str]
    methods: list[str]
    questions: str
    score_kinds: list[str]
    chunks_dir: str
    runs_dir: str
    metrics_out: str
    plot_out: str


class SelectionRule(Block):
    metric: str
    tie_tolerance: float = 0.0
    cost_order: dict[str, list[str]]


class SelectParams(StageParams):
    section: ClassVar[str] = "select"
    grid: str
    out: str
    rule: SelectionRule


class RetrieveFilteredParams(StageParams):
    section: ClassVar[str] = "retrieve_filtered"
    selected: str
    documents: str
    score_kinds: list[str]
    run_out: str
    metrics_out: str


class ContextsParams(StageParams):
    section: ClassVar[str] = "contexts"
    selected: str
    questions: str
    k: int
    modes: list[Literal["retrieved", "oracle"]]
    out: str
    metrics_out: str
