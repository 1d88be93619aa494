"""The params.yaml sections of agreement with humans: the grader and the judges: typed, beside the code they configure, so an edit here re-runs
only the stages that read them (finrag.core.params has the base model and the rules every section follows)."""

from __future__ import annotations

from typing import ClassVar, Literal

from finrag.core.params import Block, CacheMode, Spec, StageParams


class GraderValidationParams(StageParams):
    section: ClassVar[str] = "grader_validation"
    metrics_out: str
    disagreements_out: str


class TransferSource(Block):
    source: str  # the verifier_train stage's metrics: leave_one_source_out holds every candidate's kappa
    keys: dict[str, str]  # candidate -> its entry under each benchmark there


class CostBound(Block):
    source: str  # the judge_cost stage's metrics
    cpu_hours_max: float  # to score every study claim


class JudgeSelection(Block):
    candidates: list[str]
    benchmarks: list[str]
    # "transfer" (written 2026-12-06): leave-one-source-out kappa, cost bound, service; "dev": the first rule
    rule: Literal["dev", "transfer"] = "dev"
    transfer: TransferSource | None = None
    cost: CostBound | None = None
    service: list[str] = []  # judges the service can run on a new answer (no model call)


class ModelJudges(Block):
    sample_sizes: dict[str, int | None]
    cache_dir: str
    cache_mode: CacheMode = "replay"
    backends: dict[str, Spec] = {}
    runs: dict[str, Spec]
    pairs: list[tuple[str, str]] = []  # AI-vs-AI pairs, also drawn in the forest plot
    pairs_among: list[str] = []  # every pair of these judges too (model or not): the agreement matrix
    # what a judge is built from (beside itself and, for a model judge, its model): a pair sharing a part agrees
    # partly by construction, so the seed study's lesson is also given over the pairs that share nothing
    shared_parts: dict[str, list[str]] = {}

    def all_pairs(self) -> list[tuple[str, str]]:
        """`pairs`, then every pair of `pairs_among` not already listed (in either order)."""
        from itertools import combinations

        seen = {frozenset(pair) for pair in self.pairs}
        extra = [(a, b) for a, b in combinations(self.pairs_among, 2) if frozenset((a, b)) not in seen]
        return [*self.pairs, *extra]


class AgreementParams(StageParams):
    section: ClassVar[str] = "agreement"
    judges: list[str]
    selection: JudgeSelection | None = None
    sample_sizes: dict[str, int | None]
    seed: int
    finrag_labels: str
    judge_params: dict[str, Spec] = {}
    # a judge with some of its params changed, on the same claims: what one capability is worth (e.g. the numeric
    # judge without its derived figures); {name: {judge, params}}
    ablations: dict[str, Spec] = {}
    model_judges: ModelJudges | None = None
    metrics_out: str
    verdicts_out: str | None = None  # every judge's verdict per human-labelled claim (git-tracked, small)
    forest_plot: str
    matrix_plot: str | None = None  # every judge pair's kappa per benchmark, as a heat map
