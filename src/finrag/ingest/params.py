"""The params.yaml sections of ingest: typed, beside the code they configure, so an edit here re-runs
only the stages that read them (finrag.core.params has the base model and the rules every section follows)."""

from __future__ import annotations

from typing import ClassVar, Literal

from finrag.core.params import StageParams


class DataParams(StageParams):
    section: ClassVar[str] = "data"
    mirror: str = "data/mirror"


class IngestParams(StageParams):
    section: ClassVar[str] = "ingest"
    include: Literal["all", "financebench"] = "all"
    align_threshold: float
    align_number_threshold: float
    max_file_mb: float = 100
    fetch: bool = True


class QuestionsParams(StageParams):
    section: ClassVar[str] = "questions"
    financebench: str
    trick: str
    documents: str
    out: str
    metrics_out: str
