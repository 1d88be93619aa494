"""One typed model per params.yaml section, checked when a stage starts.

Why: a typo in params.yaml (`max_token: 64`), a wrong type (`k: five`) or a key a stage no longer reads would
otherwise surface deep inside a stage, or never. Each section is a pydantic model with `extra="forbid"`; a stage
script calls `ScoreParams.load()` and reads attributes (`p.answers_dir`), and a bad section stops the stage at once
with one line naming the section, the key and the problem. `tests/test_params.py` validates every section of the
committed params.yaml and checks that every section has a model.

Nested blocks that a library checks itself (a model backend's settings, the verifier's training parameters, the
synthetic study's thresholds) stay `dict[str, Any]` here, so each rule has one owner. Provenance hashes and MLflow
see the section exactly as written (`as_dict()`), never the defaults filled in, so a new optional field with a
default does not change the hash of results computed before it existed.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from finrag.core.config import params

Spec = dict[str, Any]  # a block another layer validates (a backend's settings, a judge's parameters)


class ParamsError(ValueError):
    """A params.yaml section that does not match its model; the message is one line per problem."""


class StageParams(BaseModel):
    """A params.yaml section. Subclasses name their section and their fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    section: ClassVar[str] = ""
    _raw: dict[str, Any] = PrivateAttr(default_factory=dict)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Self:
        try:
            model = cls.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(x) for x in e['loc']) or '(section)'}: {e['msg']}" for e in exc.errors()
            )
            raise ParamsError(f"params.yaml, section '{cls.section}': {problems}") from None
        model._raw = copy.deepcopy(raw)
        return model

    @classmethod
    def load(cls, path: Path | None = None) -> Self:
        """The section from params.yaml (or `path`), validated."""
        return cls.from_dict(params(cls.section, path=path))

    def as_dict(self) -> dict[str, Any]:
        """The section exactly as params.yaml writes it (for provenance hashes, tracking, and libraries that
        take a plain mapping)."""
        return copy.deepcopy(self._raw)


class Block(BaseModel):
    """A nested block with fields of its own; unknown keys are errors too."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------- ingest


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


# ---------------------------------------------------------------- retrieve


class Corpus(Block):
    dir: str
    chunks_dir: str
    collections: list[str] | None = None


class ChunkParams(StageParams):
    section: ClassVar[str] = "chunk"
    chunkers: dict[str, Spec]
    corpora: dict[str, Corpus]


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


class EmbedParams(StageParams):
    section: ClassVar[str] = "embed"
    chunks_dir: str
    out_dir: str
    cache_dir: str
    batch_size: int
    embedders: dict[str, Spec]


class RerankerParams(StageParams):
    section: ClassVar[str] = "reranker"
    tatqa: str
    out_dir: str
    metrics_out: str
    train: Spec = {}


class Bm25(Block):
    k1: float = 1.5
    b: float = 0.75
    language: Literal["en", "es"] = "en"


class RetrieveParams(StageParams):
    section: ClassVar[str] = "retrieve"
    chunks_dir: str
    embeddings_dir: str
    questions: str
    out_dir: str
    methods: list[str]
    k: int
    bm25: Bm25
    store: Literal["faiss", "qdrant"] = "faiss"
    embedders: dict[str, Spec]
    depth: int
    rrf_k: int
    rrf_weights: list[float] | None = None
    rerank_depth: int
    rerank_max_length: int
    rerank_precision: Literal["auto", "bf16", "fp32"] = "auto"
    rerank_cache: str
    reranker: str


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


class ContextsParams(StageParams):
    section: ClassVar[str] = "contexts"
    selected: str
    questions: str
    k: int
    modes: list[Literal["retrieved", "oracle"]]
    out: str
    metrics_out: str


# ---------------------------------------------------------------- generate

CacheMode = Literal["replay", "auto", "record"]  # finrag.llm.cache.MODES


class GenerateParams(StageParams):
    section: ClassVar[str] = "generate"
    questions: str
    contexts: str
    chunks_dir: str
    cache_dir: str
    cache_mode: CacheMode = "replay"
    answers_dir: str
    stats_dir: str
    decoding: Spec
    backends: dict[str, Spec]
    run_families: list[str]
    families: dict[str, Spec]


# ---------------------------------------------------------------- score


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
    cache_dir: str
    cache_mode: CacheMode = "replay"
    citations: bool = True
    grader: Spec = {}
    main_kinds: list[str]
    replicate_suffix: str
    selection: Spec
    correlation: Spec
    progress: bool = True
    metrics_out: str
    generation_out: str
    records_out: str
    plots_dir: str


class GraderValidationParams(StageParams):
    section: ClassVar[str] = "grader_validation"
    metrics_out: str
    disagreements_out: str


class VerifierDataParams(StageParams):
    section: ClassVar[str] = "verifier_data"
    out_dir: str
    seed: int
    xbrl_per_filing: int
    max_words: int
    progress: bool = True


class VerifierTrainParams(StageParams):
    section: ClassVar[str] = "verifier_train"
    pairs: str
    out_dir: str
    metrics_out: str
    train: Spec  # finrag.score.verifier.train checks it
    numeric: Spec  # the numeric judge's parameters (finrag.score.judges.numeric.NumericJudge)


# ---------------------------------------------------------------- trust and report


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


class PredictionsParams(StageParams):
    section: ClassVar[str] = "predictions"
    file: str
    caveats: str | None = None
    metrics_out: str


# ---------------------------------------------------------------- synthetic


class SyntheticCorpusParams(StageParams):
    section: ClassVar[str] = "synthetic_corpus"
    out_dir: str
    seed: int
    generator: Spec = {}


class SyntheticBm25(Block):
    k1: float = 1.5
    b: float = 0.75


class QuestionSample(Block):
    per_kind: int
    seed: int


class SyntheticGenerateParams(StageParams):
    section: ClassVar[str] = "synthetic_generate"
    corpus_dir: str
    chunks: str
    bm25: SyntheticBm25
    k: int
    sample: QuestionSample
    run_id: str
    style: str
    backend: str
    backend_params: Spec = {}
    decoding: Spec
    cache_dir: str
    cache_mode: CacheMode = "replay"
    answers_out: str
    stats_out: str


class SyntheticStudyParams(StageParams):
    section: ClassVar[str] = "synthetic_study"
    corpus_dir: str
    chunks: str
    answers: str | None = None
    bm25: SyntheticBm25
    study: Spec  # finrag.synthetic.study checks it
    metrics_out: str
    per_question_out: str


# ---------------------------------------------------------------- the service and the timing stages


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


class ReplayTimeParams(StageParams):
    section: ClassVar[str] = "replay_time"
    stages: list[str]
    out: str


SECTIONS: dict[str, type[StageParams]] = {
    cls.section: cls
    for cls in (
        DataParams,
        IngestParams,
        QuestionsParams,
        ChunkParams,
        GridParams,
        EmbedParams,
        RerankerParams,
        RetrieveParams,
        SelectParams,
        RetrieveFilteredParams,
        RetrieveFinanceParams,
        RetrieveFinanceDenseParams,
        ContextsParams,
        GenerateParams,
        ScoreParams,
        GraderValidationParams,
        VerifierDataParams,
        VerifierTrainParams,
        AgreementParams,
        PredictionsParams,
        SyntheticCorpusParams,
        SyntheticGenerateParams,
        SyntheticStudyParams,
        ServeParams,
        ServeLoadParams,
        SetupTimeParams,
        ReplayTimeParams,
    )
}


def check_all(path: Path | None = None) -> dict[str, StageParams]:
    """Every section of params.yaml validated; a section without a model is an error too."""
    data = params(path=path)
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise ParamsError(f"params.yaml has sections no model describes: {unknown}")
    return {name: SECTIONS[name].from_dict(section) for name, section in data.items()}
