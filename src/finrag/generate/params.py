"""The params.yaml sections of generation: typed, beside the code they configure, so an edit here re-runs
only the stages that read them (finrag.core.params has the base model and the rules every section follows)."""

from __future__ import annotations

from typing import ClassVar

from finrag.core.params import CacheMode, Spec, StageParams


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
    conditions_dir: str  # the context_conditions stage's files: a family's `contexts` may name one
    families: dict[str, Spec]
