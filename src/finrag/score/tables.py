"""The study's tables from the per-answer records of finrag.score.evaluate (`ScoredAnswer`; pure functions,
JSON-ready dicts).

Conventions (each a documented choice):

- A *system* is generator (backend/model) x context mode x prompt style x series (the run id without its
  replicate suffix, evaluate.series_of: a temperature-0 run and a sampled series stay apart). Its headline figures use its first
  replicate only (the lowest replicate index present), so every question counts once and the Wilson intervals
  are not narrowed by repeated samples of the same question; the spread over replicates is `replicates`.
- Headline tables (`runs`, `two_by_two`, the final-system rule) cover questions to be answered
  (expected behaviour "" or "answer") of the kinds in `main_kinds` (None = all such kinds); trick questions have
  their own table; the declining table covers every question.
- Proportions are Wilson 95% intervals (finrag.core.stats.proportion); "fully grounded" is counted over answers that
  make at least one claim (scored answers); "both" / "correct" / "declined" over all answers.
- Correlation between the evidence recall of the passages a model saw and groundedness: Spearman's rho
  (scipy.stats.spearmanr) per generator over answers with both defined, with a 95% percentile bootstrap interval
  that resamples QUESTIONS (all answers of a drawn question go in together), because a question's answers under
  several prompts and contexts are not independent.
- NaN never reaches the output: undefined values are None.

`params` (the `score:` section) keys used here: main_kinds, selection {metric, contexts, tie_tolerance, cost},
correlation {n_resamples, seed}.
"""

from __future__ import annotations

import math
import operator
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

import numpy as np
from scipy.stats import spearmanr

from finrag.core.stats import DEFAULT_SEED, agreement, mean_ci, proportion
from finrag.score.flags import FLAGS
from finrag.score.record import ScoredAnswer

T = TypeVar("T")

SYSTEM_KEYS = ("generator", "context_mode", "prompt_style", "series")
ANSWER_BEHAVIOURS = ("", "answer")
TRICK_PREFIX = "trick_"
DEFAULT_SELECTION = {
    "metric": "correct_and_grounded",
    "contexts": ["retrieved"],
    "tie_tolerance": 0.0,
    "cost": "tokens",
}
# the prompt templates of the study's first round (before 2026-12-07): the earlier rule's candidates used them
FIRST_ROUND = frozenset({"plain@1", "quote@1", "cot@1", "decline@1"})
# the headline shares computed per replicate, by name (the name is also the column of the replicates table)
REPLICATE_METRICS = ("correct", "fully_grounded", "declined", "correct_and_grounded")  # ScoredAnswer fields

__all__ = [
    "build_tables",
    "correlation_table",
    "cost_table",
    "declining_table",
    "llm_judge_table",
    "main_series",
    "primary_replicate",
    "replicate_table",
    "run_table",
    "scatter_points",
    "select_final",
    "splitter_table",
    "trick_table",
    "two_by_two",
]


# ------------------------------------------------------------------------------------------------------ helpers


def clean(obj):
    """JSON-ready: NaN/inf -> None, numpy scalars -> Python, tuples -> lists."""
    if isinstance(obj, Mapping):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [clean(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _get(r: ScoredAnswer, k: str):
    """A system key's value (SYSTEM_KEYS and the like name both the field and the table's column)."""
    return (r.series or r.run_id) if k == "series" else getattr(r, k)


def _group(records: Iterable[ScoredAnswer], keys: Sequence[str]) -> dict[tuple, list[ScoredAnswer]]:
    out: dict[tuple, list[ScoredAnswer]] = defaultdict(list)
    for r in records:
        out[tuple(_get(r, k) for k in keys)].append(r)
    return dict(sorted(out.items(), key=lambda kv: tuple(str(x) for x in kv[0])))


def _prop(recs: Sequence[T], hit: Callable[[T], bool], base: Callable[[T], bool] | None = None) -> dict:
    pool = [r for r in recs if base is None or base(r)]
    return clean(proportion(sum(1 for r in pool if hit(r)), len(pool)))


def _mean(recs: Sequence[ScoredAnswer], value: Callable[[ScoredAnswer], float | None]) -> dict:
    vals = [v for v in map(value, recs) if v is not None]
    return clean(mean_ci(vals))


def primary_replicate(records: Sequence[ScoredAnswer]) -> list[ScoredAnswer]:
    """Records of each system's lowest replicate index."""
    first: dict[tuple, int] = {}
    for r in records:
        k = tuple(_get(r, x) for x in SYSTEM_KEYS)
        first[k] = min(first.get(k, r.replicate), r.replicate)
    return [r for r in records if r.replicate == first[tuple(_get(r, x) for x in SYSTEM_KEYS)]]


def main_series(records: Sequence[ScoredAnswer]) -> list[ScoredAnswer]:
    """One series per generator x context x prompt style: the temperature-0 run where there is one (its series is
    its run id), else the lowest replicate of a sampled series. Tables that pool prompt styles or contexts use it,
    so a question counts once per style, not once more for each sampled series of the same prompt."""
    prim = primary_replicate(records)

    def rank(r: ScoredAnswer) -> tuple[bool, str]:
        series = str(_get(r, "series"))
        return ("*" in series, series)

    best: dict[tuple, tuple[bool, str]] = {}
    for r in prim:
        k = tuple(_get(r, x) for x in SYSTEM_KEYS[:3])
        best[k] = min(best.get(k, rank(r)), rank(r))
    return [r for r in prim if rank(r) == best[tuple(_get(r, x) for x in SYSTEM_KEYS[:3])]]


def headline(records: Sequence[ScoredAnswer], main_kinds: Sequence[str] | None = None) -> list[ScoredAnswer]:
    """Records of questions to be answered, of the given kinds (None = all)."""
    kinds = set(main_kinds) if main_kinds else None
    return [
        r for r in records if r.expected_behaviour in ANSWER_BEHAVIOURS and (kinds is None or r.kind in kinds)
    ]


def _scored(r: ScoredAnswer) -> bool:
    return r.n_claims > 0


def _tokens(r: ScoredAnswer) -> int:
    return r.input_tokens + r.output_tokens


# ------------------------------------------------------------------------------------------------------- tables


def run_groups(
    records: Sequence[ScoredAnswer], main_kinds: Sequence[str] | None = None
) -> dict[tuple, list[ScoredAnswer]]:
    """The run table's rows before they are summarised: per system (SYSTEM_KEYS), its lowest replicate's answers to
    the questions to be answered of the main kinds. Other stages (judge error) group the same way through it."""
    return _group(headline(primary_replicate(records), main_kinds), SYSTEM_KEYS)


def run_table(records: Sequence[ScoredAnswer], main_kinds: Sequence[str] | None = None) -> list[dict]:
    """Per system: correct, fully grounded (of scored answers), declined, both — Wilson 95% CI and n each."""
    rows = []
    for key, recs in run_groups(records, main_kinds).items():
        row = dict(zip(SYSTEM_KEYS, key, strict=True))
        row.update(
            backend=recs[0].backend,
            model=recs[0].model,
            run_ids=sorted({r.run_id for r in recs}),
            templates=sorted({r.template_id for r in recs}),
            replicate=recs[0].replicate,
            n=len(recs),
            n_scored=sum(1 for r in recs if _scored(r)),
            correct=_prop(recs, lambda r: r.correct),
            fully_grounded=_prop(recs, lambda r: r.fully_grounded, _scored),
            declined=_prop(recs, lambda r: r.declined),
            correct_and_grounded=_prop(recs, lambda r: r.correct_and_grounded),
            correct_or_grounded=_prop(recs, lambda r: r.correct_or_grounded),
            lenient_correct=_prop(recs, lambda r: r.lenient_correct),
            # the headline's steps, so each change's effect is read off one row: the earlier endpoint (uncertain
            # grades taken as given, flags ignored), then strict grading alone, then (correct_and_grounded) flags
            earlier_correct=_prop(recs, lambda r: r.earlier_correct),
            earlier_correct_and_grounded=_prop(recs, lambda r: r.earlier_correct and r.fully_grounded),
            lenient_correct_and_grounded=_prop(recs, lambda r: r.lenient_correct and r.fully_grounded),
            strict_correct_and_grounded_flags_ignored=_prop(recs, lambda r: r.correct and r.fully_grounded),
            grounded_unflagged=_prop(recs, lambda r: r.grounded_unflagged, _scored),
            n_flagged=sum(1 for r in recs if r.flags),
            flag_counts=flag_counts(recs),
            unflagged=_unflagged_block([r for r in recs if not r.flags]),
            unit_mismatch=sum(1 for r in recs if r.unit_mismatch),
            uncertain_grades=sum(1 for r in recs if r.grade_uncertain),
            llm_grades=sum(1 for r in recs if r.grade_method == "llm"),
            cut_at_max_tokens=sum(1 for r in recs if r.cut_at_max_tokens),
            groundedness=_mean(recs, lambda r: r.groundedness),
            citation_recall=_mean(recs, lambda r: r.citation_recall),
            citation_precision=_mean(recs, lambda r: r.citation_precision),
            evidence_recall=_mean(recs, lambda r: r.evidence_recall),
            tokens=sum(_tokens(r) for r in recs),
            tokens_per_answer=sum(_tokens(r) for r in recs) / len(recs),
            cost_usd=round(sum(r.cost_usd for r in recs), 6),
        )
        rows.append(row)
    return clean(rows)


def flag_counts(recs: Sequence[ScoredAnswer]) -> dict[str, int]:
    """How many answers carry each answer-quality flag (every flag named, 0 where none does)."""
    return {f: sum(1 for r in recs if f in r.flags) for f in FLAGS}


def _unflagged_block(recs: Sequence[ScoredAnswer]) -> dict:
    """The headline shares on the answers without a flag (each table gives them beside the shares on all)."""
    return clean(
        {
            "n": len(recs),
            "n_scored": sum(1 for r in recs if _scored(r)),
            "correct": _prop(recs, lambda r: r.correct),
            "fully_grounded": _prop(recs, lambda r: r.fully_grounded, _scored),
            "declined": _prop(recs, lambda r: r.declined),
            "correct_and_grounded": _prop(recs, lambda r: r.correct_and_grounded),
        }
    )


def pooled_groups(
    records: Sequence[ScoredAnswer], main_kinds: Sequence[str] | None = None
) -> dict[tuple, list[ScoredAnswer]]:
    """The two-by-two's groups: per generator x context, prompt styles pooled (one series per style)."""
    return _group(headline(main_series(records), main_kinds), SYSTEM_KEYS[:2])


def two_by_two(records: Sequence[ScoredAnswer], main_kinds: Sequence[str] | None = None) -> list[dict]:
    """Per generator x context (prompt styles pooled): correct x fully grounded counts and shares of all answers.

    matrix rows: correct, not correct (incorrect or refusal); columns: fully grounded, not fully grounded.
    """
    rows = []
    for (gen, ctx), recs in pooled_groups(records, main_kinds).items():
        c = {
            "correct_grounded": sum(1 for r in recs if r.correct and r.fully_grounded),
            "correct_ungrounded": sum(1 for r in recs if r.correct and not r.fully_grounded),
            "not_correct_grounded": sum(1 for r in recs if not r.correct and r.fully_grounded),
            "not_correct_ungrounded": sum(1 for r in recs if not r.correct and not r.fully_grounded),
        }
        n = len(recs)
        rows.append(
            {
                "generator": gen,
                "context_mode": ctx,
                "prompt_styles": sorted({r.prompt_style for r in recs}),
                "n": n,
                "counts": c,
                "shares": {k: v / n for k, v in c.items()},
                "matrix": [
                    [c["correct_grounded"], c["correct_ungrounded"]],
                    [c["not_correct_grounded"], c["not_correct_ungrounded"]],
                ],
                "n_declined": sum(1 for r in recs if r.declined),
                "n_without_claims": sum(1 for r in recs if not _scored(r)),
                "n_flagged": sum(1 for r in recs if r.flags),
                # the same cells with a flagged answer counted as not grounded
                "correct_grounded_unflagged": sum(1 for r in recs if r.correct and r.grounded_unflagged),
                "not_correct_grounded_unflagged": sum(
                    1 for r in recs if not r.correct and r.grounded_unflagged
                ),
            }
        )
    return clean(rows)


def trick_table(records: Sequence[ScoredAnswer]) -> list[dict]:
    """Per generator x trick kind x context (prompt styles pooled): did what was asked, declined, flagged a false
    premise, answered with the made-up figure (false-premise questions only for the last two)."""
    rows = []
    tricks = [r for r in main_series(records) if r.kind.startswith(TRICK_PREFIX)]
    for (gen, kind, ctx), recs in _group(tricks, ("generator", "kind", "context_mode")).items():
        fp = kind == "trick_false_premise" or any(r.false_premise is not None for r in recs)
        rows.append(
            {
                "generator": gen,
                "kind": kind,
                "context_mode": ctx,
                "expected_behaviour": sorted({r.expected_behaviour for r in recs}),
                "n": len(recs),
                "correct": _prop(recs, lambda r: r.correct),
                "answered_correctly": _prop(recs, lambda r: r.verdict_source == "grader" and r.correct),
                "declined": _prop(recs, lambda r: r.declined),
                "flagged_false_premise": _prop(recs, lambda r: r.false_premise == "flagged") if fp else None,
                "used_premise": _prop(recs, lambda r: r.false_premise == "used") if fp else None,
                "used_made_up_figure": _prop(recs, lambda r: bool(r.used_made_up_figure)) if fp else None,
                "n_flagged": sum(1 for r in recs if r.flags),
            }
        )
    return clean(rows)


def trick_run_table(records: Sequence[ScoredAnswer]) -> list[dict]:
    """Per system (its lowest replicate) x trick kind, prompts not pooled: so one prompt's behaviour on the trick
    questions can be set against another's on the same questions (e.g. whether allowing to decline stops the model
    flagging a false premise)."""
    rows = []
    tricks = [r for r in primary_replicate(records) if r.kind.startswith(TRICK_PREFIX)]
    for key, recs in _group(tricks, (*SYSTEM_KEYS, "kind")).items():
        fp = key[-1] == "trick_false_premise" or any(r.false_premise is not None for r in recs)
        row = dict(zip((*SYSTEM_KEYS, "kind"), key, strict=True))
        row.update(
            templates=sorted({r.template_id for r in recs}),
            n=len(recs),
            correct=_prop(recs, lambda r: r.correct),
            declined=_prop(recs, lambda r: r.declined),
            flagged_false_premise=_prop(recs, lambda r: r.false_premise == "flagged") if fp else None,
            used_made_up_figure=_prop(recs, lambda r: bool(r.used_made_up_figure)) if fp else None,
            n_flagged=sum(1 for r in recs if r.flags),
        )
        rows.append(row)
    return clean(rows)


def declining_table(records: Sequence[ScoredAnswer]) -> list[dict]:
    """Per system: should-decline x did-decline confusion (did = `withheld`: declined, or flagged a false premise),
    with decline recall, precision and the false-decline rate; and declines among answerable questions whose
    evidence was not in the passages (a justified-looking decline)."""
    rows = []
    for key, recs in _group(primary_replicate(records), SYSTEM_KEYS).items():
        sd = [r for r in recs if r.should_decline]
        sa = [r for r in recs if not r.should_decline]
        tp, fn = sum(r.withheld for r in sd), sum(not r.withheld for r in sd)
        fp, tn = sum(r.withheld for r in sa), sum(not r.withheld for r in sa)
        no_ev = [r for r in sa if r.evidence_recall is not None and r.evidence_recall == 0]
        row = dict(zip(SYSTEM_KEYS, key, strict=True))
        row.update(
            n=len(recs),
            confusion={
                "should_decline": {"withheld": tp, "answered": fn},
                "should_answer": {"withheld": fp, "answered": tn},
            },
            matrix=[[tp, fn], [fp, tn]],
            decline_recall=proportion(tp, tp + fn),
            decline_precision=proportion(tp, tp + fp),
            false_decline_rate=proportion(fp, fp + tn),
            declined_without_evidence=proportion(sum(r.withheld for r in no_ev), len(no_ev)),
            n_flagged=sum(1 for r in recs if r.flags),
        )
        rows.append(row)
    return clean(rows)


MAX_DEGENERATE_SHARE = (
    0.05  # bootstrap resamples with a constant variable tolerated before no interval is given
)


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    return float(spearmanr(x, y).statistic)


def correlation_table(
    records: Sequence[ScoredAnswer], n_resamples: int = 2000, seed: int = DEFAULT_SEED
) -> list[dict]:
    """Per generator: Spearman's rho between evidence recall of the passages seen and groundedness, with a
    question-level (cluster) percentile bootstrap 95% CI and p-value; all contexts and prompt styles of the main
    series pooled."""
    rows = []
    pairs = [r for r in main_series(records) if r.evidence_recall is not None and r.groundedness is not None]
    for (gen,), recs in _group(pairs, ("generator",)).items():
        x = np.array([r.evidence_recall for r in recs], dtype=float)
        y = np.array([r.groundedness for r in recs], dtype=float)
        qids = sorted({r.qid for r in recs})
        by_q: dict[Any, list[int]] = {q: [] for q in qids}
        for i, r in enumerate(recs):
            by_q[r.qid].append(i)
        groups = [np.array(by_q[q]) for q in qids]
        rho = _spearman(x, y)
        degenerate = 0
        pval = float("nan")
        ci = [float("nan"), float("nan")]
        if math.isfinite(rho) and len(qids) >= 3:
            rng = np.random.default_rng(seed)
            boots = []
            for _ in range(n_resamples):
                idx = np.concatenate([groups[j] for j in rng.integers(0, len(groups), len(groups))])
                boots.append(_spearman(x[idx], y[idx]))
            b = np.array(boots)
            degenerate = int(np.sum(~np.isfinite(b)))
            b = b[np.isfinite(b)]
            # a resample where one variable is constant has no rho; dropping many of them would keep only the
            # resamples that hold the few varying answers and bias the interval (here: no interval at all)
            if b.size and degenerate <= MAX_DEGENERATE_SHARE * n_resamples:
                ci = [float(np.percentile(b, 2.5)), float(np.percentile(b, 97.5))]
                # two-sided, from the same question-level resamples as the interval (answers to one question are
                # not independent, so spearmanr's own p-value would be too small)
                pval = float(min(1.0, 2 * min(np.mean(b <= 0), np.mean(b >= 0))))
        rows.append(
            {
                "generator": gen,
                "n": len(recs),
                "n_questions": len(qids),
                "spearman_rho": rho,
                "p_value": pval,
                "ci": ci,
                "ci_method": f"percentile bootstrap over questions, {n_resamples} resamples, seed {seed}",
                "p_method": "two-sided share of the question-level bootstrap on the far side of 0",
                "degenerate_resamples": degenerate,
                "mean_evidence_recall": float(x.mean()),
                "mean_groundedness": float(y.mean()),
            }
        )
    return clean(rows)


def scatter_points(records: Sequence[ScoredAnswer]) -> dict[str, list[list[float]]]:
    """{generator: [[evidence_recall, groundedness], ...]} for the scatter plot (the main series, as the table)."""
    out: dict[str, list[list[float]]] = defaultdict(list)
    for r in main_series(records):
        if r.evidence_recall is not None and r.groundedness is not None:
            out[r.generator].append([round(r.evidence_recall, 4), round(r.groundedness, 4)])
    return {k: out[k] for k in sorted(out)}


def select_final(run_rows: Sequence[dict], rule: Mapping | None = None) -> dict:
    """The final system by the rule fixed in params: the highest share of `metric` among systems of the allowed
    contexts; systems within `tie_tolerance` of the best are tied and the one with fewer tokens per answer
    (rule cost "tokens") or lower cost ("cost_usd") wins; then by name, for a deterministic choice."""
    rule = {**DEFAULT_SELECTION, **dict(rule or {})}
    contexts = rule.get("contexts")
    named = rule.get("candidates")  # the declared candidate series; None: every system of the contexts
    cands = [
        r
        for r in run_rows
        if (not contexts or r["context_mode"] in contexts)
        and (named is None or r["series"] in named)
        and r[rule["metric"]]["p"] is not None
    ]
    missing = sorted(set(named or ()) - {r["series"] for r in cands})
    if not cands:
        return {
            "system": None,
            "value": None,
            "rule": rule,
            "candidates_missing": missing,
            "reason": "no system matches the rule's contexts and candidates",
        }
    cost_key = {"tokens": "tokens_per_answer", "cost_usd": "cost_usd"}[rule["cost"]]
    best = max(r[rule["metric"]]["p"] for r in cands)
    tied = [r for r in cands if r[rule["metric"]]["p"] >= best - float(rule["tie_tolerance"]) - 1e-12]
    tied.sort(key=lambda r: (r[cost_key], *(str(r[k]) for k in SYSTEM_KEYS)))
    win = tied[0]
    ranking = sorted(
        cands, key=lambda r: (-r[rule["metric"]]["p"], r[cost_key], r["generator"], r["prompt_style"])
    )

    def brief(r: dict) -> dict:
        return {
            **{k: r[k] for k in SYSTEM_KEYS},
            "value": r[rule["metric"]]["p"],
            "ci": r[rule["metric"]]["ci"],
            "n": r[rule["metric"]]["n"],
            cost_key: r[cost_key],
        }

    return clean(
        {
            "system": {
                **{k: win[k] for k in SYSTEM_KEYS},
                "backend": win["backend"],
                "model": win["model"],
                "run_ids": win["run_ids"],
            },  # fmt: skip
            "metric": rule["metric"],
            "value": win[rule["metric"]]["p"],
            "ci": win[rule["metric"]]["ci"],
            "n": win[rule["metric"]]["n"],
            cost_key: win[cost_key],
            "tied_with": [brief(r) for r in tied[1:]],
            "ranking": [brief(r) for r in ranking],
            "candidates_missing": missing,  # declared candidates not (yet) scored: the pick is among the others
            "rule": rule,
        }
    )


def _share(
    recs: Sequence[ScoredAnswer],
    hit: Callable[[ScoredAnswer], bool],
    base: Callable[[ScoredAnswer], bool] | None = None,
) -> float | None:
    pool = [r for r in recs if base is None or base(r)]
    return sum(1 for r in pool if hit(r)) / len(pool) if pool else None


def replicate_table(records: Sequence[ScoredAnswer], main_kinds: Sequence[str] | None = None) -> list[dict]:
    """Per system: each headline share computed per replicate index, then mean and sample standard deviation
    (ddof=1; None with a single replicate) over replicates."""
    rows = []
    for key, recs in _group(headline(records, main_kinds), SYSTEM_KEYS).items():
        reps = sorted({r.replicate for r in recs})
        row = dict(zip(SYSTEM_KEYS, key, strict=True))
        row.update(replicates=reps, n_replicates=len(reps))
        for m in REPLICATE_METRICS:
            hit = operator.attrgetter(m)
            base = _scored if m == "fully_grounded" else None
            vals = [_share([r for r in recs if r.replicate == i], hit, base) for i in reps]
            vals = [v for v in vals if v is not None]
            row[m] = {
                "values": vals,
                "mean": statistics.fmean(cast("list[float]", vals)) if vals else None,
                "sd": statistics.stdev(cast("list[float]", vals)) if len(vals) > 1 else None,
            }
        rows.append(row)
    return clean(rows)


def cost_table(records: Sequence[ScoredAnswer], judge_costs: Sequence[dict] | None = None) -> dict:
    """Generation per run (calls, tokens, model seconds, USD) and the judges' costs as measured by the stage."""
    runs = []
    for (run_id,), recs in _group(records, ("run_id",)).items():
        runs.append(
            {
                "run_id": run_id,
                **{k: _get(recs[0], k) for k in (*SYSTEM_KEYS, "replicate")},
                "calls": len(recs),
                "input_tokens": sum(r.input_tokens for r in recs),
                "output_tokens": sum(r.output_tokens for r in recs),
                "seconds": round(sum(r.latency_s for r in recs), 1),
                "cost_usd": round(sum(r.cost_usd for r in recs), 6),
            }
        )
    total = {
        k: sum(r[k] for r in runs) for k in ("calls", "input_tokens", "output_tokens", "seconds", "cost_usd")
    }
    total["seconds"], total["cost_usd"] = round(total["seconds"], 1), round(total["cost_usd"], 6)
    return clean({"generation": runs, "generation_total": total, "judges": list(judge_costs or [])})


def run_summary(records: Sequence[ScoredAnswer]) -> dict[str, dict]:
    """Per run id, the plain shares that docs/predictions.yaml names (eval_main.summary.<run>.<metric>): correct
    and fully grounded of all FinanceBench answers (P08 speaks of "answers", so an answer with no claim counts as
    not fully grounded here); fully_grounded_of_scored of the answers that make a claim (the run table's base);
    declined of the questions whose expected behaviour is to decline (unanswerable from these reports, as P09
    states); withheld (declined, or flagged the premise) of all questions that should not be answered as asked
    (unanswerable and false-premise, as in the declining table)."""
    by_run: dict[str, list[ScoredAnswer]] = defaultdict(list)
    for r in records:
        by_run[r.run_id].append(r)
    out = {}
    for run_id, recs in sorted(by_run.items()):
        main = [r for r in recs if r.kind == "financebench"]
        out[run_id] = {
            "n": len(main),
            "correct": _share(main, lambda r: r.correct),
            "fully_grounded": _share(main, lambda r: r.fully_grounded),
            "fully_grounded_of_scored": _share(main, lambda r: r.fully_grounded, _scored),
            "declined_when_should": _share(
                recs, lambda r: r.declined, lambda r: r.expected_behaviour == "decline"
            ),
            "withheld_when_should": _share(recs, lambda r: r.withheld, lambda r: r.should_decline),
        }
    return out


def llm_judge_table(records: Sequence[ScoredAnswer], seed: int = DEFAULT_SEED) -> dict | None:
    """The LLM judge beside the primary judge on the same sampled answers and the same claims (None without a
    sample): per series, the share of sampled answers with claims that each calls fully grounded (every
    replicate's answers count: the comparison is paired, answer by answer); pooled, claim-level agreement on
    supported vs not, kappa with a bootstrap interval over answers (one answer's claims are not independent)."""
    sampled = [r for r in records if r.llm_sampled and r.llm_n_claims]
    if not sampled:
        return None

    def shares(recs: Sequence[ScoredAnswer]) -> dict:
        return {
            "primary_fully_grounded": _prop(recs, lambda r: bool(r.fully_grounded)),
            "llm_fully_grounded": _prop(recs, lambda r: bool(r.llm_fully_grounded)),
        }

    rows = [
        {"series": series, "n": len(recs), **shares(recs)}
        for (series,), recs in _group(sampled, ("series",)).items()
    ]
    primary, llm, answer_ids = [], [], []
    for r in sampled:
        by_id = {c.claim_id: c.verdict for c in r.llm_claims or []}
        for c in r.claims:
            if c.claim_id in by_id:
                primary.append("supported" if c.verdict == "supported" else "not supported")
                llm.append("supported" if by_id[c.claim_id] == "supported" else "not supported")
                answer_ids.append(f"{r.run_id}|{r.qid}")
    pair = agreement(primary, llm, labels=["supported", "not supported"], seed=seed, groups=answer_ids)
    return clean(
        {
            "judges": [
                sorted({r.judge for r in sampled}),
                sorted({r.llm_judge for r in sampled if r.llm_judge}),
            ],
            "questions": len({r.qid for r in sampled}),
            "answers": len(sampled),
            **shares(sampled),
            "series": rows,
            "claims": pair,
        }
    )


def splitter_table(records: Sequence[ScoredAnswer], seed: int = DEFAULT_SEED) -> dict | None:
    """The deterministic claim splitter against the LLM splitter on the LLM judge's sampled answers (None when the
    LLM splitter is off): per splitter, claims per answer, answers left with no claim, and the share each judge
    calls fully grounded (of answers with claims); then, per judge, how often the answer-level verdict (fully
    grounded or not) is the same under both splitters (kappa over answers with claims under both). The LLM judge's
    columns are None when it did not judge the LLM splitter's claims (`score.llm_splitter.llm_judge: false`)."""
    sampled = [(r, r.llm_split) for r in records if r.llm_split]
    if not sampled:
        return None
    # each answer under each splitter: claims, and each judge's answer-level verdict (read by judge name below)
    views: dict[str, list[dict[str, Any]]] = {
        "deterministic": [
            {"n": r.n_claims, "primary": r.fully_grounded, "llm": r.llm_fully_grounded} for r, _ in sampled
        ],
        "llm": [
            {"n": s.n_claims, "primary": s.fully_grounded, "llm": s.llm_fully_grounded} for _, s in sampled
        ],
    }
    llm_judged = all(s.llm_fully_grounded is not None or not s.n_claims for _, s in sampled)
    rows = []
    for name, vs in views.items():
        with_claims = [v for v in vs if v["n"]]
        rows.append(
            {
                "splitter": name,
                "answers": len(vs),
                "claims": sum(v["n"] for v in vs),
                "claims_per_answer": round(sum(v["n"] for v in vs) / len(vs), 3),
                "no_claim": sum(1 for v in vs if not v["n"]),
                "primary_fully_grounded": _prop(with_claims, lambda v: bool(v["primary"])),
                "llm_fully_grounded": (
                    _prop(with_claims, lambda v: bool(v["llm"]))
                    if llm_judged or name == "deterministic"
                    else None
                ),
            }
        )
    both = [(d, m) for d, m in zip(views["deterministic"], views["llm"], strict=True) if d["n"] and m["n"]]
    labels = ["fully grounded", "not"]
    same = {}
    for judge in ("primary", "llm") if llm_judged else ("primary",):
        same[judge] = agreement(
            [labels[0] if d[judge] else labels[1] for d, _ in both],
            [labels[0] if m[judge] else labels[1] for _, m in both],
            labels=labels,
            seed=seed,
        )
    return clean(
        {
            "judges": [
                sorted({r.judge for r, _ in sampled}),
                sorted({r.llm_judge for r, _ in sampled if r.llm_judge}),
            ],
            "answers": len(sampled),
            "llm_judged": llm_judged,
            "llm_fell_back": sum(1 for _, s in sampled if s.fell_back),
            "splitters": rows,
            "answers_with_claims_under_both": len(both),
            "same_verdict": same,
        }
    )


def build_tables(records: Sequence[ScoredAnswer], params: Mapping | None = None, judge_costs=None) -> dict:
    """Every table of the scoring stage (see the module docstring for `params`)."""
    params = dict(params or {})
    kinds = params.get("main_kinds")
    corr = dict(params.get("correlation") or {})
    runs = run_table(records, kinds)
    judges = sorted({r.judge for r in records})
    llm_judges = sorted({r.llm_judge for r in records if r.llm_judge})
    tables = {
        "meta": {
            "n_records": len(records),
            "kinds": sorted({r.kind for r in records}),
            "main_kinds": list(kinds) if kinds else None,
            "judges": judges,
            "llm_judges": llm_judges,
            "n_llm_sampled": sum(1 for r in records if r.llm_sampled),
        },
        "runs": runs,
        "two_by_two": two_by_two(records, kinds),
        "trick": trick_table(records),
        "trick_runs": trick_run_table(records),
        "declining": declining_table(records),
        "correlation": correlation_table(
            records, n_resamples=int(corr.get("n_resamples", 2000)), seed=int(corr.get("seed", DEFAULT_SEED))
        ),
        "scatter_points": scatter_points(records),
        "final_system": select_final(runs, params.get("selection")),
        # the rule as it was before 2026-12-07 (the earlier grading, flags ignored, every retrieved system of the
        # first round's prompts a candidate), on the same records: what the headline was
        "final_system_earlier_rule": select_final(
            runs,
            {
                **DEFAULT_SELECTION,
                "metric": "earlier_correct_and_grounded",
                "contexts": ["retrieved"],
                "candidates": [r["series"] for r in runs if all(t in FIRST_ROUND for t in r["templates"])],
            },
        ),
        "replicates": replicate_table(records, kinds),
        "cost": cost_table(records, judge_costs),
    }
    llm_table = llm_judge_table(records)
    if llm_table is not None:
        tables["llm_judge"] = llm_table
    split_table = splitter_table(records)
    if split_table is not None:
        tables["splitters"] = split_table
    return tables
