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

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError

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


CacheMode = Literal["replay", "auto", "record"]  # finrag.llm.cache.MODES
