"""The params.yaml sections of the replay timing: typed, beside the code they configure, so an edit here re-runs
only the stages that read them (finrag.core.params has the base model and the rules every section follows)."""

from __future__ import annotations

from typing import ClassVar

from finrag.core.params import StageParams


class ReplayTimeParams(StageParams):
    section: ClassVar[str] = "replay_time"
    stages: list[str]
    out: str
