"""What every view reads: the results files, by stem, and a loud failure when one (or a key in it) is missing.

A view never prints "not run": a section whose results file is absent cannot be rendered, and the error names
the file and the stage that writes it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# the stage that writes each results file (for the one-line error when it is missing)
STAGES = {
    "conditions": "conditions",
    "context_conditions": "context_conditions",
    "contexts": "contexts_summary",
    "eval_main": "score",
    "grader_validation": "grader_validation",
    "ingest": "ingest",
    "judge_agreement": "agreement",
    "judge_cost": "agreement",
    "judge_error": "judge_error",
    "predictions": "predictions",
    "questions": "questions",
    "rebuild_cost": "rebuild_cost",
    "replay_time": "replay_time",
    "reranker": "reranker",
    "retrieval_filtered": "evaluate_filtered",
    "retrieval_finance": "retrieve_finance",
    "retrieval_finance_dense": "evaluate_finance_dense",
    "retrieval_grid": "grid",
    "selected_setup": "select_setup",
    "serve_load": "serve_load",
    "setup_time": "setup_time",
    "synthetic_generation": "synthetic_generate",
    "synthetic_study": "synthetic_study",
    "verifier_train": "verifier_train",
}
TOP_LEVEL = {"selected_setup"}  # results/*.json rather than results/metrics/*.json


class MissingResults(LookupError):
    """A results file, or a key a section needs in it, is absent: the section cannot be rendered."""


def path_of(stem: str) -> str:
    return f"results/{stem}.json" if stem in TOP_LEVEL else f"results/metrics/{stem}.json"


@dataclass(frozen=True)
class Results:
    """Every results file, keyed by stem, plus the generation families params.yaml plans."""

    data: Mapping[str, Any]
    planned_families: list[str] | None = None
    files: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, data: Mapping[str, Any] | Results) -> Results:
        if isinstance(data, Results):
            return data
        data = dict(data)
        planned = data.pop("planned_families", None)
        return cls(data=data, planned_families=planned)

    def path(self, stem: str) -> str:
        return self.files.get(stem) or path_of(stem)

    def has(self, stem: str) -> bool:
        return stem in self.data

    def need(self, stem: str, *keys: str) -> Any:
        """The file's content (or the value at `keys` in it); a missing file or key raises MissingResults."""
        if stem not in self.data:
            stage = STAGES.get(stem, "?")
            raise MissingResults(f"{self.path(stem)} is missing (written by stage `{stage}`)")
        return dig(self.data[stem], keys, self.path(stem))

    def stems(self) -> list[str]:
        return sorted(self.data)


def dig(value: Any, keys: tuple[str, ...] | list[str], where: str) -> Any:
    done: list[str] = []
    for k in keys:
        if not isinstance(value, Mapping) or k not in value:
            raise MissingResults(f"{where} has no `{'.'.join([*done, k])}`")
        value = value[k]
        done.append(k)
    return value


View = Callable[[Results], Any]
VIEWS: dict[str, View] = {}


def view(name: str) -> Callable[[View], View]:
    """Register the function that computes section `name` (templates/NAME.md.j2 renders what it returns)."""

    def deco(fn: View) -> View:
        VIEWS[name] = fn
        return fn

    return deco
