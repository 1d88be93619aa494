"""FinanceBench's model answers with HUMAN correctness labels (16 files, 150 answers each, in the mirror).

Each row of ``financebench/results/*.jsonl`` has ``financebench_id, model_name, eval_mode, temp, question,
gold_answer, model_answer, label`` with ``label`` one of ``Correct Answer`` / ``Incorrect Answer`` / ``Refusal``.

Which gold: the humans labelled against the row's ``gold_answer``, so a string gold there is used as is (it can
differ from today's ``financebench_open_source.jsonl``: ``financebench_id_00070`` was relabelled upstream). Numeric
golds in the result files are bare numbers with the unit lost (``0.019`` for "1.9%", ``1577`` for "$1577.00");
there the open-source answer text is used when it states the same value, so the grader sees the unit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from finrag.core.config import mirror_dir
from finrag.core.io import read_jsonl
from finrag.score.numbers import extract_figures

__all__ = [
    "HUMAN_LABELS",
    "LABELS",
    "FBLabelledAnswer",
    "load_financebench_gold",
    "load_labelled_answers",
    "results_files",
]

HUMAN_LABELS = {"Correct Answer": "correct", "Incorrect Answer": "incorrect", "Refusal": "refusal"}
LABELS = ["correct", "incorrect", "refusal"]


@dataclass(frozen=True)
class FBLabelledAnswer:
    """One model answer with its human label (mapped to LABELS; ``human_raw`` keeps the source spelling)."""

    file: str  # stem of the results file, e.g. "gpt-4_oracle"
    financebench_id: str
    model_name: str
    eval_mode: str
    question: str
    gold: str
    gold_source: str  # "row" | "open_source" (see module docstring)
    answer: str
    human: str
    human_raw: str
    question_type: str = ""


def results_files(mirror: Path | None = None) -> list[Path]:
    """The human-labelled results files, sorted by name."""
    m = Path(mirror) if mirror is not None else mirror_dir(required=True)
    return sorted((m / "financebench" / "results").glob("*.jsonl"))


def load_financebench_gold(mirror: Path | None = None) -> dict[str, dict]:
    """financebench_open_source.jsonl keyed by financebench_id."""
    m = Path(mirror) if mirror is not None else mirror_dir(required=True)
    rows = read_jsonl(m / "financebench" / "financebench_open_source.jsonl")
    return {r["financebench_id"]: r for r in rows}


def _same_number(num: float, text: str) -> bool:
    for f in extract_figures(text):
        if f.is_year:
            continue
        v = f.value / f.scale
        if abs(v - num) <= 1e-9 * max(1.0, abs(num)):
            return True
        if f.is_percent and abs(v / 100.0 - num) <= 1e-9 * max(1.0, abs(num)):
            return True
    return False


def _pick_gold(row_gold, open_gold: str | None) -> tuple[str, str]:
    if isinstance(row_gold, str) and row_gold.strip():
        return row_gold, "row"
    is_number = isinstance(row_gold, int | float) and not isinstance(row_gold, bool)
    if is_number and open_gold is not None and _same_number(float(row_gold), str(open_gold)):
        return str(open_gold), "open_source"
    if row_gold is None or (isinstance(row_gold, str) and not row_gold.strip()):
        if open_gold is not None:
            return str(open_gold), "open_source"
        raise ValueError("row has no gold answer and its id is not in financebench_open_source.jsonl")
    return str(row_gold), "row"


def load_labelled_answers(
    mirror: Path | None = None, files: list[str] | None = None
) -> list[FBLabelledAnswer]:
    """All labelled answers (optionally only the results files whose stems are in ``files``)."""
    fb = load_financebench_gold(mirror)
    out: list[FBLabelledAnswer] = []
    for path in results_files(mirror):
        if files is not None and path.stem not in files:
            continue
        for i, r in enumerate(read_jsonl(path), 1):
            raw = r.get("label")
            if raw not in HUMAN_LABELS:
                raise ValueError(f"{path}:{i}: unknown human label {raw!r}")
            fid = r["financebench_id"]
            meta = fb.get(fid, {})
            try:
                gold, src = _pick_gold(r.get("gold_answer"), meta.get("answer"))
            except ValueError as exc:
                raise ValueError(f"{path}:{i}: {exc}") from exc
            out.append(
                FBLabelledAnswer(
                    file=path.stem,
                    financebench_id=fid,
                    model_name=str(r.get("model_name", "")),
                    eval_mode=str(r.get("eval_mode", "")),
                    question=str(r.get("question") or meta.get("question", "")),
                    gold=gold,
                    gold_source=src,
                    answer="" if r.get("model_answer") is None else str(r["model_answer"]),
                    human=HUMAN_LABELS[raw],
                    human_raw=raw,
                    question_type=str(meta.get("question_type", "")),
                )
            )
    return out
