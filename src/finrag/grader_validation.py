"""How well does finrag's deterministic grader agree with FinanceBench's human labels?

Every labelled answer (16 files x 150) is graded with ``finrag.scoring.grader.grade``; agreement is reported per
file and overall as Cohen's kappa with a bootstrap 95% interval over the three labels (correct / incorrect /
refusal), a binary kappa (correct vs not), the confusion matrix (rows: human, columns: finrag), and the list of
disagreements for reading. Nothing is written here: the caller (the lead's pipeline stage) writes the returned
``metrics`` and ``disagreements`` (e.g. results/metrics/grader_validation.json, results/grader_disagreements.jsonl).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from tqdm import tqdm

from finrag.humanlabels_fb import LABELS, FBLabelledAnswer, load_labelled_answers
from finrag.scoring.grader import GradeResult, grade
from finrag.stats import agreement, kappa_bootstrap

__all__ = ["agreement_block", "grade_rows", "validate_grader"]


def grade_rows(
    rows: Sequence[FBLabelledAnswer], grader: Callable[..., GradeResult] = grade, progress: bool = True
) -> list[GradeResult]:
    """Grade each labelled answer with ``grader(gold, answer, question)``."""
    it = tqdm(rows, desc="grading FinanceBench answers", disable=not progress, leave=False)
    return [grader(r.gold, r.answer, r.question) for r in it]


def agreement_block(human: Sequence[str], finrag: Sequence[str], seed: int | None = None) -> dict:
    """3-class agreement (finrag.stats.agreement) plus a binary correct-vs-not kappa with its interval."""
    kw = {} if seed is None else {"seed": seed}
    out = agreement(list(human), list(finrag), labels=LABELS, **kw)
    hb = ["correct" if h == "correct" else "not_correct" for h in human]
    fb = ["correct" if f == "correct" else "not_correct" for f in finrag]
    kb = kappa_bootstrap(hb, fb, labels=["correct", "not_correct"], **kw)
    out["binary_kappa"] = kb["kappa"]
    out["binary_kappa_ci"] = kb["ci"]
    out["human_counts"] = dict(Counter(human))
    out["finrag_counts"] = dict(Counter(finrag))
    return out


def validate_grader(
    mirror: Path | None = None,
    out_dir: Path | None = None,
    progress: bool = True,
    files: list[str] | None = None,
) -> dict:
    """Grade every FinanceBench human-labelled answer; return {"metrics": ..., "disagreements": [...]}.

    ``metrics`` has ``overall`` and ``per_file`` agreement blocks, ``methods`` (how many verdicts came from each
    grading method) and ``n_uncertain``. ``out_dir`` is accepted for the stage's signature and recorded only: the
    caller writes files, so a failed run leaves nothing half-written. ``files`` restricts to some results files
    (stems, e.g. ``["gpt-4_oracle"]``).
    """
    rows = load_labelled_answers(mirror, files=files)
    if not rows:
        raise ValueError(f"no labelled FinanceBench answers found (files={files})")
    results = grade_rows(rows, progress=progress)
    by_file: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_file[r.file].append(i)
    human = [r.human for r in rows]
    finrag = [g.verdict for g in results]
    per_file = {
        f: agreement_block([human[i] for i in idx], [finrag[i] for i in idx])
        for f, idx in sorted(by_file.items())
    }
    disagreements = [
        {
            "file": r.file,
            "id": r.financebench_id,
            "question": r.question,
            "gold": r.gold,
            "answer": r.answer,
            "human": r.human,
            "finrag": g.verdict,
            "method": g.method,
            "unit_mismatch": g.unit_mismatch,
            "reason": g.detail,
        }
        for r, g in zip(rows, results, strict=True)
        if r.human != g.verdict
    ]
    metrics = {
        "n": len(rows),
        "labels": LABELS,
        "overall": agreement_block(human, finrag),
        "per_file": per_file,
        "methods": dict(Counter(g.method for g in results)),
        "n_uncertain": sum(g.uncertain for g in results),
        "n_unit_mismatch": sum(g.unit_mismatch for g in results),
        "n_disagreements": len(disagreements),
        "confusion_matrix_note": "rows: human label, columns: finrag verdict, order as in labels",
        "out_dir": str(out_dir) if out_dir is not None else None,
    }
    return {"metrics": metrics, "disagreements": disagreements}
