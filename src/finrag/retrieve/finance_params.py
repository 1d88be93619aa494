"""The params.yaml sections of the finance-aware rows beyond the grid: typed, beside the code they configure, so an edit here re-runs
only the stages that read them (finrag.core.params has the base model and the rules every section follows)."""

from __future__ import annotations

from typing import ClassVar, Literal

from finrag.core.params import StageParams


class RetrieveFinanceParams(StageParams):
    section: ClassVar[str] = "retrieve_finance"
    chunker: str
    methods: list[str]
    filters: list[Literal["none", "company_period"]]
    documents: str
    questions: str
    score_kinds: list[str]
    metrics_out: str
    plot_out: str


class RetrieveFinanceDenseParams(RetrieveFinanceParams):
    section: ClassVar[str] = "retrieve_finance_dense"
    embedder: str
    runs_dir: str  # its runs (top-k ids and scores per row), in git: evaluate_finance_dense scores them
