"""How often does a judge find support by chance? Each answer's figure claims are judged a second time against the
passages of *another* question (same run, the question `offset` places later in sorted order). Support found there
is support a claim gets from passages picked for something else: the judge's false-support rate on easy negatives,
with no human label needed. It is no upper bound on that rate: near misses (the same company's other year) are
harder to reject than another question's passages. The same claims judged on their own passages give the
comparison."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from finrag.core.contracts import Answer
from finrag.core.stats import wilson_interval
from finrag.score.claims import passage_texts, split_claims

DEFAULT_OFFSET = 7


def _how(verdict) -> str:
    """How a claim was judged: its verdict, or for a supported claim how the numeric judge matched its figures
    ("supported" for a judge that does not say, such as the trained verifier)."""
    if verdict.verdict != "supported":
        return verdict.verdict
    figures = (verdict.detail or {}).get("figures")
    if figures is None:
        return "supported"
    kinds = sorted({f.get("match", "?") for f in figures})
    return "+".join(kinds) or "no figure"


def mismatched_passages_check(answers: Sequence[Answer], judge, offset: int = DEFAULT_OFFSET) -> dict:
    """Figure claims judged on their own passages and on another question's passages (see the module docstring)."""
    by_run: dict[str, dict[str, Answer]] = defaultdict(dict)
    for a in answers:
        by_run[a.run_id].setdefault(a.qid, a)
    own: Counter[str]
    other: Counter[str]
    own, other = Counter(), Counter()
    n = 0
    for run in sorted(by_run):
        qids = sorted(by_run[run])
        if len(qids) < 2:
            continue
        step = offset if len(qids) > offset else 1  # never the question itself
        for i, qid in enumerate(qids):
            a, b = by_run[run][qid], by_run[run][qids[(i + step) % len(qids)]]
            claims = [c.text for c in split_claims(a.text) if c.figures]
            if not claims:
                continue
            n += len(claims)
            own.update(_how(v) for v in judge.judge_batch(claims, passage_texts(a.passages)))
            other.update(_how(v) for v in judge.judge_batch(claims, passage_texts(b.passages)))

    def share(c: Counter) -> dict:
        k = sum(v for how, v in c.items() if how not in ("unsupported", "contradicted"))
        lo, hi = wilson_interval(k, n) if n else (None, None)
        return {
            "supported": k,
            "p": k / n if n else None,
            "ci": [lo, hi],
            "by_match": dict(sorted(c.items())),
        }

    return {
        "offset": offset,
        "n_claims": n,
        "own_passages": share(own),
        "other_question_passages": share(other),
    }
