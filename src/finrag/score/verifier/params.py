"""The params.yaml sections of the trained verifier: its data and its training: typed, beside the code they configure, so an edit here re-runs
only the stages that read them (finrag.core.params has the base model and the rules every section follows)."""

from __future__ import annotations

from typing import ClassVar

from finrag.core.params import Spec, StageParams


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
