"""How well does finrag's deterministic grader agree with FinanceBench's human labels?

Every labelled answer (16 files x 150) is graded with ``finrag.score.grader.grade``; agreement is reported per
file and overall as Cohen's kappa with a bootstrap 95% interval over the three labels (correct / incorrect /
refusal), a binary kappa (correct vs not), the confusion matrix (rows: human, columns: finrag), and the list of
disagreements for reading. Nothing is written here: the caller (the lead's pipeline stage) writes the returned
``metrics`` and ``disagreements`` (e.g. results/metrics/grader_validation.json, results/grader_disagreements.jsonl).

Where the grader and the FinanceBench labellers differ (read off the disagreements; no item is special-cased):

* Tolerance. The grader's 1% band is looser than the labellers on metric questions (65.2% for 65.4%, 93.55 for
  93.86 were labelled incorrect) and stricter on small percentages (0.5% for 0.4%, 7.8% for 7.9% were labelled
  correct). Humans were not consistent between the two.
* "Not mentioned" for a gold of "none"/"0": labellers mostly call "the filing does not mention any ..." a refusal
  (and occasionally correct); the grader always calls it a refusal unless the answer states the zero.
* Caveated answers: a refusal cue plus related figures is a refusal for the labellers unless a result is stated;
  the grader approximates "stated" by a computed "= x" or a concluding sentence, and errs both ways.
* Paraphrased free text ("packaging industry" for "a global leader in packaging production") has low word
  recall; lists and multi-part golds are judged on the gold's first sentence only.
* Answers that paste filing text can contain the gold number by chance and are then graded correct.
* Label noise: identical answers to the same question sometimes carry different labels, and a few labels follow
  an upstream gold that was later corrected (financebench_id_00070).
* Per-file kappas are lower than the overall one: part of the overall agreement is between-file (closed-book
  and retrieval-failure files are mostly refusals, which both raters find easily).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from finrag.core.stats import agreement, kappa_bootstrap
from finrag.score.grader import GradeResult, grade
from finrag.trust.human_answers import LABELS, FBLabelledAnswer, load_labelled_answers

__all__ = ["agreement_block", "grade_rows", "strict_verdict", "validate_grader"]


def grade_rows(
    rows: Sequence[FBLabelledAnswer], grader: Callable[..., GradeResult] = grade, progress: bool = True
) -> list[GradeResult]:
    """Grade each labelled answer with ``grader(gold, answer, question)``."""
    it = tqdm(rows, desc="grading FinanceBench answers", disable=not progress, leave=False)
    return [grader(r.gold, r.answer, r.question) for r in it]


def strict_verdict(g: GradeResult) -> str:
    """The verdict as the study counts it: an uncertain "correct" is not correct (here: "incorrect")."""
    return "incorrect" if g.uncertain and g.verdict == "correct" else g.verdict


def agreement_block(human: Sequence[str], finrag: Sequence[str], seed: int | None = None) -> dict:
    """3-class agreement (finrag.core.stats.agreement) plus a binary correct-vs-not kappa with its interval."""
    kw: dict[str, Any] = {} if seed is None else {"seed": seed}
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
    strict = [strict_verdict(g) for g in results]
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
        # the study's rule: an uncertain grade is never correct (taken as "incorrect" against the three labels)
        "overall_strict": agreement_block(human, strict),
        "per_file_strict_binary_kappa": {
            f: agreement_block([human[i] for i in idx], [strict[i] for i in idx])["binary_kappa"]
            for f, idx in sorted(by_file.items())
        },
        "n_uncertain_correct": sum(g.uncertain and g.verdict == "correct" for g in results),
        "per_file": per_file,
        "methods": dict(Counter(g.method for g in results)),
        "n_uncertain": sum(g.uncertain for g in results),
        "n_unit_mismatch": sum(g.unit_mismatch for g in results),
        "n_disagreements": len(disagreements),
        "confusion_matrix_note": "rows: human label, columns: finrag verdict, order as in labels",
        "out_dir": str(out_dir) if out_dir is not None else None,
    }
    return {"metrics": metrics, "disagreements": disagreements}
