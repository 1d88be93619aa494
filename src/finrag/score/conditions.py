"""The study-validity comparisons, each paired on the same questions: where the gold passage sits (gold first against
a seeded shuffle of the same passages), retrieval quality (three nested retrieval levels), and model size (the
smaller and the larger local model), per generator, over the per-answer records the scorer writes.

Every comparison uses only the questions that every run in it answered (and, per metric, where the metric is
defined in every run), so a generator recorded on a declared draw of questions is compared on that draw (its n is
in the table). Intervals: Wilson for a proportion, a bootstrap over questions for a mean, a paired difference and
the change per level; tests: exact McNemar for a paired difference of yes/no outcomes, and a within-question
permutation test for the change over levels (the level labels of each question's answers shuffled among
themselves, so the test assumes nothing about how the outcomes are distributed); every p also Holm-adjusted over
all the tests of the stage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from finrag.core.params import StageParams
from finrag.core.stats import mean_ci, proportion
from finrag.score.record import ScoredAnswer

BINARY = ("correct", "fully_grounded", "grounded_unflagged", "correct_and_grounded", "declined")
GRADED = ("citation_recall", "citation_precision")


class LevelRuns(BaseModel):
    model_config = ConfigDict(extra="forbid")
    runs: list[str]  # one run per level, level 1 first


class PositionRuns(BaseModel):
    model_config = ConfigDict(extra="forbid")
    gold_first: str
    shuffled: str


class SizeRuns(BaseModel):
    model_config = ConfigDict(extra="forbid")
    small: str
    large: str


class ConditionsParams(StageParams):
    section: ClassVar[str] = "conditions"
    records: str  # the score stage's per-answer records (the frozen conditions' runs)
    answers_dir: str
    families: list[
        str
    ]  # the condition families' answers, scored here with the score stage's judge and grader
    questions: str
    contexts: str  # the frozen contexts (level 1 and the gold-first order)
    conditions_dir: str
    chunks_dir: str
    levels: list[str]  # the context each level shows: a frozen mode or a condition's name, level 1 first
    position: dict[str, PositionRuns]  # generator label -> its two runs
    dose: dict[str, LevelRuns]  # generator label -> its runs per level
    model_size: dict[str, SizeRuns] = {}  # prompt/context label -> the smaller and the larger model's runs
    metrics: list[str]
    n_resamples: int
    seed: int
    metrics_out: str
    plot_out: str


def outcome(record: ScoredAnswer, metric: str) -> float | None:
    """One answer's value of a metric: 1/0 for a yes/no one, the score for a graded one (None where undefined)."""
    value = getattr(record, metric)
    if value is None:
        return None
    return float(value)


def _table(records: Sequence[ScoredAnswer], runs: Sequence[str], metric: str) -> tuple[list[str], np.ndarray]:
    """Questions answered in every run (sorted) and their outcomes, one column per run (NaN where undefined)."""
    by_run: dict[str, dict[str, float | None]] = {r: {} for r in runs}
    for rec in records:
        if rec.run_id in by_run:
            by_run[rec.run_id][rec.qid] = outcome(rec, metric)
    qids = sorted(set.intersection(*(set(v) for v in by_run.values()))) if runs else []
    values = np.array(
        [[np.nan if by_run[r][q] is None else by_run[r][q] for r in runs] for q in qids], dtype=float
    )
    return qids, values.reshape(len(qids), len(runs))


def defined_everywhere(values: np.ndarray) -> np.ndarray:
    """The rows (questions) of a question-by-run table where the metric is defined in every run: what every
    paired comparison and trend is computed on."""
    return values[~np.isnan(values).any(axis=1)]


def _share(values: np.ndarray, binary: bool, n_resamples: int, seed: int) -> dict:
    """A yes/no outcome's share with its Wilson interval, or a graded outcome's mean with its bootstrap interval,
    over the questions where it is defined."""
    kept = values[~np.isnan(values)]
    n = int(kept.size)
    if n == 0:
        return {"n": 0, "value": None, "ci": None}
    if binary:
        share = proportion(int(kept.sum()), n)
        return {"n": n, "k": share["k"], "value": share["p"], "ci": share["ci"]}
    mean = mean_ci(kept, n_resamples=n_resamples, seed=seed)
    return {"n": n, "value": mean["mean"], "ci": mean["ci"]}


def paired_difference(values: np.ndarray, binary: bool, n_resamples: int, seed: int) -> dict:
    """Second column minus first, on the questions where both are defined: the mean difference, its paired
    bootstrap interval, and (yes/no outcomes) the exact McNemar p-value on the discordant pairs."""
    from scipy.stats import binomtest

    both = defined_everywhere(values)
    out: dict = {"n": int(len(both))}
    if not len(both):
        return {**out, "difference": None, "ci": None, "p": None}
    diff = both[:, 1] - both[:, 0]
    out["difference"] = float(diff.mean())
    out["ci"] = mean_ci(diff, n_resamples=n_resamples, seed=seed)["ci"]
    if binary:
        gained, lost = int((diff > 0).sum()), int((diff < 0).sum())
        out.update(gained=gained, lost=lost)
        out["p"] = float(binomtest(gained, gained + lost, 0.5).pvalue) if gained + lost else 1.0
    else:
        out["p"] = None
    return out


def level_trend(values: np.ndarray, n_resamples: int, seed: int) -> dict:
    """The change per level (mean over questions of each question's least-squares slope over levels 1..L, with a
    paired bootstrap interval) and a two-sided within-question permutation test of it, on the questions defined
    at every level. The levels are ordinal (slope per level, not per unit of recall); with three the slope is
    (level 3 - level 1) / 2, so the middle level weighs nothing in the estimate (it does shape the permutation
    null), which asks whether the outcome rises from the weakest retrieval to the strongest; the per-level shares
    show the shape."""
    full = defined_everywhere(values)
    n, levels = full.shape if full.ndim == 2 else (0, 0)
    if n < 2 or levels < 2:
        return {"n": int(n), "per_level": None, "ci": None, "p": None}
    x = np.arange(levels, dtype=float) - (levels - 1) / 2
    weights = x / float((x**2).sum())  # each question's least-squares slope = its row @ weights
    slopes = full @ weights
    observed = float(slopes.mean())
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((n_resamples, n, levels)), axis=2)
    permuted = np.take_along_axis(np.broadcast_to(full, (n_resamples, n, levels)), order, axis=2)
    null = (permuted @ weights).mean(axis=1)
    p = (int((np.abs(null) >= abs(observed) - 1e-12).sum()) + 1) / (n_resamples + 1)
    return {
        "n": int(n),
        "per_level": observed,
        "ci": mean_ci(slopes, n_resamples=n_resamples, seed=seed)["ci"],
        "p": float(p),
    }


def pair_table(
    records: Sequence[ScoredAnswer],
    pairs: Mapping[str, tuple[str, str]],
    names: tuple[str, str],
    p: ConditionsParams,
) -> dict:
    """Per label and metric, two runs compared on the same questions: each run's share (or mean) over the questions
    where both are defined, and the second minus the first (`names` give the keys: "<second>_minus_<first>")."""
    first, second = names
    out: dict = {}
    for label, pair in pairs.items():
        rows = {}
        qids: list[str] = []
        for metric in p.metrics:
            qids, values = _table(records, pair, metric)
            binary = metric in BINARY
            both = defined_everywhere(values)
            rows[metric] = {
                first: _share(both[:, 0], binary, p.n_resamples, p.seed),
                second: _share(both[:, 1], binary, p.n_resamples, p.seed),
                f"{second}_minus_{first}": paired_difference(values, binary, p.n_resamples, p.seed),
            }
        out[label] = {"runs": list(pair), "questions": len(qids), "metrics": rows}
    return out


def position_table(records: Sequence[ScoredAnswer], p: ConditionsParams) -> dict:
    """Per generator and metric: the gold-first and shuffled shares on the same questions, and their difference."""
    pairs = {label: (runs.gold_first, runs.shuffled) for label, runs in p.position.items()}
    return pair_table(records, pairs, ("gold_first", "shuffled"), p)


def model_size_table(records: Sequence[ScoredAnswer], p: ConditionsParams) -> dict:
    """Per prompt and context: the smaller and the larger model on the same questions, and larger minus smaller."""
    pairs = {label: (runs.small, runs.large) for label, runs in p.model_size.items()}
    return pair_table(records, pairs, ("small", "large"), p)


def dose_table(records: Sequence[ScoredAnswer], p: ConditionsParams, recall: Mapping[str, dict]) -> dict:
    """Per generator and metric: each level's share on the same questions, and the trend over levels; with each
    level's evidence recall on those questions (the dose delivered)."""
    out: dict = {}
    for label, level_runs in p.dose.items():
        runs = level_runs.runs
        rows = {}
        qids: list[str] = []
        for metric in p.metrics:
            qids, values = _table(records, runs, metric)
            binary = metric in BINARY
            full = defined_everywhere(values)  # the questions the trend is computed on
            rows[metric] = {
                "levels": [_share(full[:, i], binary, p.n_resamples, p.seed) for i in range(len(runs))],
                "trend": level_trend(values, p.n_resamples, p.seed),
            }
        dose = [
            _mean([recall[level].get(q) for q in qids]) for level in p.levels[: len(runs)]
        ]  # evidence recall@5 of each level's passages on these questions
        out[label] = {"runs": runs, "questions": len(qids), "evidence_recall": dose, "metrics": rows}
    return out


def adjust_for_multiple_tests(tables: Mapping[str, Mapping]) -> dict:
    """Holm's adjustment over every p-value in the tables (each paired difference and each trend), written beside
    each as `p_holm`: the tables test many rows and metrics, and a single p near 0.05 among them means little.
    Returns how many tests there were and the smallest adjusted p."""
    from statsmodels.stats.multitest import multipletests

    tests = [
        test
        for table in tables.values()
        for row in table.values()
        for metric in row["metrics"].values()
        for test in metric.values()
        if isinstance(test, dict) and test.get("p") is not None
    ]
    if not tests:
        return {"method": "holm", "n_tests": 0, "smallest_p_holm": None}
    _reject, adjusted, _s, _b = multipletests([t["p"] for t in tests], method="holm")
    for test, q in zip(tests, adjusted, strict=True):
        test["p_holm"] = float(q)
    return {"method": "holm", "n_tests": len(tests), "smallest_p_holm": float(min(adjusted))}


def _mean(values: Sequence[float | None]) -> float | None:
    """The mean of the defined values (None where there is none)."""
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


def plot_conditions(position: Mapping, dose: Mapping, path) -> None:
    """Left: the shuffled-minus-gold-first difference in correctness and full groundedness per generator (paired
    95% interval). Right: correctness against the evidence recall each retrieval level delivered (Wilson 95%)."""
    from finrag.core.plots import pyplot, save_png

    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    labels = list(position)
    for j, metric in enumerate(("correct", "fully_grounded")):
        ys = np.arange(len(labels)) + (j - 0.5) * 0.3
        diffs = [position[g]["metrics"][metric]["shuffled_minus_gold_first"] for g in labels]
        vals = [d["difference"] if d["difference"] is not None else np.nan for d in diffs]
        errs = np.array(
            [
                [v - (d["ci"] or [v, v])[0], (d["ci"] or [v, v])[1] - v]
                for v, d in zip(vals, diffs, strict=True)
            ]
        )
        left.errorbar(vals, ys, xerr=errs.T if len(errs) else None, fmt="o", capsize=3,
                      label=metric.replace("_", " "))  # fmt: skip
    left.axvline(0, color="grey", lw=0.8)
    left.set_ylim(-0.8, len(labels) - 0.2)
    left.set_yticks(
        np.arange(len(labels)), [f"{g} (n={position[g]['questions']})" for g in labels], fontsize=8
    )
    left.set_xlabel("shuffled minus gold-first (share of answers)")
    left.set_title("Oracle order: gold passage first vs seeded shuffle", fontsize=9)
    left.legend(fontsize=7)
    for label, row in dose.items():
        xs = [x if x is not None else np.nan for x in row["evidence_recall"]]
        levels = row["metrics"]["correct"]["levels"]
        shares = [float(lv["value"]) if lv["value"] is not None else np.nan for lv in levels]
        err = np.array(
            [
                [y - lv["ci"][0], lv["ci"][1] - y] if lv["ci"] else [0, 0]
                for y, lv in zip(shares, levels, strict=True)
            ]
        )
        right.errorbar(xs, shares, yerr=err.T, fmt="o-", capsize=3, label=f"{label} (n={row['questions']})")  # fmt: skip
    right.set_xlabel("evidence recall@5 of the passages shown (levels 1-3)")
    right.set_ylabel("share correct")
    right.set_title("Retrieval as a dose: correctness per level", fontsize=9)
    right.legend(fontsize=7)
    fig.tight_layout()
    save_png(fig, path)


def gold_position(passages: Sequence, evidence: set[tuple[str, int]]) -> int | None:
    """1-based position of the first passage that shows an evidence page; None when none does."""
    for i, ps in enumerate(passages, 1):
        if any((ps.doc_id, page) in evidence for page in ps.pages):
            return i
    return None


def by_gold_position(
    records: Sequence[ScoredAnswer],
    shuffled_answers: Sequence,
    evidence_of: Mapping[str, set],
    runs: PositionRuns,
) -> dict:
    """Correctness in the shuffled order by where the first gold passage landed, beside the same questions'
    gold-first correctness: does the answer follow the evidence, or passage 1?"""
    where = {a.qid: gold_position(a.passages, evidence_of.get(a.qid, set())) for a in shuffled_answers}
    correct = {(r.run_id, r.qid): bool(r.correct) for r in records}
    rows: dict[str, dict] = {}
    for qid, pos in sorted(where.items()):
        key = str(pos) if pos is not None else "none"
        if (runs.shuffled, qid) not in correct or (runs.gold_first, qid) not in correct:
            continue
        row = rows.setdefault(key, {"n": 0, "shuffled_correct": 0, "gold_first_correct": 0})
        row["n"] += 1
        row["shuffled_correct"] += correct[(runs.shuffled, qid)]
        row["gold_first_correct"] += correct[(runs.gold_first, qid)]
    return dict(sorted(rows.items()))
