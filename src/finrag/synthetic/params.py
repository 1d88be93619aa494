"""The params.yaml sections of the synthetic study: typed, beside the code they configure, so an edit here re-runs
only the stages that read them (finrag.core.params has the base model and the rules every section follows)."""

from __future__ import annotations

from typing import ClassVar

from finrag.core.params import Block, CacheMode, Spec, StageParams


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
