"""The params.yaml sections of the service and its timing stages: typed, beside the code they configure, so an edit here re-runs
only the stages that read them (finrag.core.params has the base model and the rules every section follows)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from finrag.core.params import Block, StageParams


class QueueParams(Block):
    workers: int = Field(1, ge=1, description="answers computed at once (each holds the model)")
    max_waiting: int = Field(8, ge=0, description="requests waiting for a worker; one more gets 503")
    retry_after_s: int = Field(2, ge=1)


class StoreParams(Block):
    """Where the live dense search keeps the selected setup's vectors: faiss in memory (default), or Qdrant
    embedded in a folder (`path`, reused across restarts) or a Qdrant server (`url`). FINRAG_SERVE_QDRANT
    overrides: a URL (http...) or a folder."""

    kind: str = "faiss"
    path: str | None = None
    url: str | None = None
    collection: str = "finrag-serve"


class ServeParams(StageParams):
    """The `serve:` section of params.yaml (checked at start-up: an unknown key is an error); finrag.serve reads it."""

    section: ClassVar[str] = "serve"
    host: str = "127.0.0.1"
    port: int = 8080
    cache_dir: str = "llm_cache"
    cache_mode: str = "auto"  # FINRAG_LLM_MODE overrides: replay refuses a live miss with 409
    backend: str | None = (
        None  # None: the selected system's own; else a generate.backends name (FINRAG_SERVE_BACKEND)
    )
    eval_metrics: str = "results/metrics/eval_main.json"
    agreement_metrics: str = "results/metrics/judge_agreement.json"
    records: str = "results/scores/records.jsonl"
    documents: str = "data/corpus/documents.jsonl"
    max_question_chars: int = 2000
    max_top_k: int = 50
    timeout_s: float = 60.0
    answer_memo: int = Field(
        4096, ge=0, description="finished responses kept in memory (the cached-answer path)"
    )
    rate_limit_per_minute: int = Field(120, ge=1, description="per API key, when FINRAG_API_KEYS is set")
    queue: QueueParams = Field(default_factory=QueueParams)  # type: ignore[arg-type]
    store: StoreParams = Field(default_factory=StoreParams)


class LoadGoal(Block):
    requests_per_s: float
    p99_ms: float


class ServeLoadParams(StageParams):
    section: ClassVar[str] = "serve_load"
    users: list[int]
    duration_s: int
    live_questions: int
    seed: int
    goal: LoadGoal
    out: str


class SetupTimeParams(StageParams):
    section: ClassVar[str] = "setup_time"
    question: str
    cold_package_cache: bool = True
    out: str
