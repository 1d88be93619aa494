"""How far the study's groundedness shares can be off because their judge errs, and what labels would fix it.

Two tools, both from the judge's measured errors on human-labelled claims (FinDVer, AttributionBench, ExpertQA):

- **Corrected shares** (Rogan and Gladen, 1978): a share q measured by a judge of sensitivity s and specificity p
  estimates (q + p - 1) / (s + p - 1) of truly supported items. Its interval bootstraps the study's answers and the
  human set together. With s + p - 1 near 0 the true share is barely identified and the interval covers most of
  [0, 1]: the study cannot tell that share. Carrying s and p from other benchmarks to finrag's answers is an
  assumption (transport), and so is treating an answer judged as a whole like one labelled claim.
- **Prediction-powered inference** (Angelopoulos et al., 2023; `ppi_py`): with human labels on n of the items,
  the judge's verdicts on the rest sharpen the labels-only interval without biasing it, however weak the judge.
  Validated here on the human sets themselves: n labels drawn, the judge on the rest, many seeded draws; the
  coverage of the share over all the set's labels and the mean width, per judge and n.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from finrag.core.params import Block, StageParams
from finrag.core.stats import wilson_interval
from finrag.score.record import ScoredAnswer
from finrag.score.tables import pooled_groups, run_groups

SUPPORTED = "supported"


class PpiValidation(Block):
    labelled: list[int]  # n of labels drawn per draw (kept only where n <= half the set)
    draws: int  # seeded draws per judge, set and n
    min_coverage: float  # a judge's interval counts as valid at or above this coverage (nominal 0.95)


class JudgeErrorParams(StageParams):
    section: ClassVar[str] = "judge_error"
    records: str  # the score stage's per-answer records
    agreement: str  # the agreement stage's metrics: each judge's confusion matrix per human set
    verdicts: str  # the agreement stage's per-claim verdicts of every judge on the human sets
    finrag_labels: str  # finrag's own human labels (`finrag label`), when any
    main_kinds: list[str]  # the question kinds of the study's shares (as score.main_kinds)
    benchmarks: list[str]  # the human sets whose error rates are carried over
    n_boot: int
    seed: int
    cannot_tell_width: float  # an interval at least this wide says the study cannot tell the share
    ppi: PpiValidation
    metrics_out: str
    plot: str


@dataclass(frozen=True)
class JudgeRates:
    """A judge's binary error rates on one human set (human 'supported' is the positive class)."""

    tp: int
    fn: int
    fp: int
    tn: int

    @classmethod
    def from_confusion(cls, cm: Sequence[Sequence[int]]) -> JudgeRates:
        """From the agreement stage's binary confusion matrix: rows human, columns judge, order
        (supported, not supported)."""
        (tp, fn), (fp, tn) = cm
        return cls(int(tp), int(fn), int(fp), int(tn))

    @property
    def sensitivity(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else math.nan

    @property
    def specificity(self) -> float:
        return self.tn / (self.tn + self.fp) if self.tn + self.fp else math.nan

    @property
    def youden(self) -> float:
        """s + p - 1: 0 for a judge no better than chance, 1 for a perfect one."""
        return self.sensitivity + self.specificity - 1

    def as_dict(self) -> dict:
        return {
            "n": self.tp + self.fn + self.fp + self.tn,
            "sensitivity": round(self.sensitivity, 4),
            "specificity": round(self.specificity, 4),
            "youden": round(self.youden, 4),
        }


def rogan_gladen(q: np.ndarray | float, s: np.ndarray | float, p: np.ndarray | float) -> np.ndarray:
    """The misclassification-corrected share, clipped to [0, 1]; NaN where s + p - 1 <= 0 (not identified)."""
    q, s, p = np.asarray(q, float), np.asarray(s, float), np.asarray(p, float)
    j = s + p - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.clip((q + p - 1) / j, 0.0, 1.0)
    return np.where(j > 0, out, np.nan)


def _conservative_interval(values: np.ndarray) -> list[float]:
    """The 95% percentile interval of bootstrap values; a replicate where the share is not identified (NaN)
    counts as 0 for the lower end and as 1 for the upper end, so an unidentified share widens the interval."""
    lo = np.percentile(np.where(np.isnan(values), 0.0, values), 2.5)
    hi = np.percentile(np.where(np.isnan(values), 1.0, values), 97.5)
    return [round(float(lo), 4), round(float(hi), 4)]


@dataclass(frozen=True)
class ShareSpec:
    """A groundedness share as the run table defines it: mean over `base` answers of `pre` and grounded, where
    `pre` (correct, unflagged, makes a claim) is read without the judge and `grounded` is the judge's verdict."""

    name: str
    base: Callable[[ScoredAnswer], bool]
    pre: Callable[[ScoredAnswer], bool]


def _scored(r: ScoredAnswer) -> bool:
    return r.n_claims > 0


ANSWER_SHARES: tuple[ShareSpec, ...] = (
    ShareSpec("fully_grounded", base=_scored, pre=lambda r: True),
    ShareSpec("grounded_unflagged", base=_scored, pre=lambda r: not r.flags),
    ShareSpec(
        "correct_and_grounded",
        base=lambda r: True,
        pre=lambda r: bool(r.correct) and not r.flags and _scored(r),
    ),
    # of the correct answers, the fully grounded share (the two-by-two's "correct answers not grounded" is 1 - it)
    ShareSpec("grounded_of_correct", base=lambda r: bool(r.correct), pre=_scored),
)


def _rate_draws(rates: JudgeRates, n_boot: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap draws of (sensitivity, specificity): the human set resampled within each human class (the sets
    are drawn stratified by label), which for counts is a binomial draw per class."""
    pos, neg = rates.tp + rates.fn, rates.tn + rates.fp
    s = rng.binomial(pos, rates.sensitivity, n_boot) / pos
    p = rng.binomial(neg, rates.specificity, n_boot) / neg
    return s, p


def _answer_share(recs: Sequence[ScoredAnswer], spec: ShareSpec) -> tuple[np.ndarray, np.ndarray]:
    """Per base answer: its judge-free condition and the judge's fully-grounded verdict."""
    base = [r for r in recs if spec.base(r)]
    return np.array([spec.pre(r) for r in base], bool), np.array([bool(r.fully_grounded) for r in base], bool)


def reachable(q: float, rates: JudgeRates) -> bool:
    """Whether a judge with these rates can report share q at all: it reports 1 - p when nothing is truly
    supported and s when everything is. A share outside [1 - p, s] says the measured rates do not carry over to
    these answers (the transport assumption fails here), so they cannot correct it."""
    lo, hi = sorted((1 - rates.specificity, rates.sensitivity))
    return lo <= q <= hi


def _corrected(pre: np.ndarray, grounded: np.ndarray, rates: JudgeRates) -> tuple[float, float | None, float]:
    """(observed share, corrected point or None when the rates cannot produce the observed share, share of `pre`:
    the most the corrected share can be)."""
    n = len(pre)
    if n == 0:
        return math.nan, math.nan, math.nan
    observed = float((pre & grounded).mean())
    k = int(pre.sum())
    if k == 0:
        return observed, 0.0, 0.0
    q = float(grounded[pre].mean())
    if not reachable(q, rates):
        return observed, None, k / n
    return observed, k / n * float(rogan_gladen(q, rates.sensitivity, rates.specificity)), k / n


def _boot_shares(pre: np.ndarray, grounded: np.ndarray, idx: np.ndarray, s_draw, p_draw) -> np.ndarray:
    """Corrected share per bootstrap replicate: answers resampled (rows of idx), judge rates drawn beside."""
    pre_b, gr_b = pre[idx], grounded[idx] & pre[idx]
    k = pre_b.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(k > 0, gr_b.sum(axis=1) / np.maximum(k, 1), 0.0)
    corr = rogan_gladen(q, s_draw, p_draw)
    return np.where(k > 0, k / pre.shape[0] * corr, 0.0)


def _claim_arrays(recs: Sequence[ScoredAnswer]) -> tuple[np.ndarray, np.ndarray]:
    scored = [r for r in recs if r.n_claims > 0]
    return np.array([r.n_supported for r in scored], float), np.array([r.n_claims for r in scored], float)


def corrected_run(
    recs: Sequence[ScoredAnswer],
    rates: Mapping[str, JudgeRates],
    n_boot: int,
    seed: int,
    cannot_tell_width: float,
) -> dict[str, Any]:
    """Every groundedness share of one run, observed and corrected per human set, with the envelope."""
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {}
    draws = {b: _rate_draws(r, n_boot, rng) for b, r in rates.items()}
    specs: list[tuple[str, Any]] = [(spec.name, spec) for spec in ANSWER_SHARES] + [
        ("claims_supported", None)
    ]
    for name, spec in specs:
        if spec is None:
            sup, tot = _claim_arrays(recs)
            n = len(tot)
            idx = rng.integers(0, n, (n_boot, n)) if n else np.zeros((n_boot, 0), int)
            observed = float(sup.sum() / tot.sum()) if n else math.nan
            q_boot = sup[idx].sum(axis=1) / np.maximum(tot[idx].sum(axis=1), 1)
            per_set: dict[str, dict[str, Any]] = {}
            for b, r in rates.items():
                if n and not reachable(observed, r):  # the rates cannot produce this share: it stays unknown
                    per_set[b] = {"corrected": None, "ci": [0.0, 1.0], "transported": False}
                    continue
                point = float(rogan_gladen(observed, r.sensitivity, r.specificity)) if n else math.nan
                ci = _conservative_interval(rogan_gladen(q_boot, *draws[b])) if n else [math.nan, math.nan]
                per_set[b] = {"corrected": _round(point), "ci": ci, "transported": True}
            unit = "claims"
        else:
            pre, grounded = _answer_share(recs, spec)
            n = len(pre)
            idx = rng.integers(0, n, (n_boot, n)) if n else np.zeros((n_boot, 0), int)
            per_set = {}
            observed = math.nan
            for b, r in rates.items():
                observed, corrected_point, most = _corrected(pre, grounded, r)
                if corrected_point is None:  # not producible by these rates: from 0 to the share of `pre`
                    per_set[b] = {"corrected": None, "ci": [0.0, round(most, 4)], "transported": False}
                    continue
                ci = (
                    _conservative_interval(_boot_shares(pre, grounded, idx, *draws[b]))
                    if n
                    else [math.nan] * 2
                )
                per_set[b] = {"corrected": _round(corrected_point), "ci": ci, "transported": True}
            unit = "answers"
        out[name] = {
            "observed": _round(observed),
            "n": n,
            "unit": unit,
            "by_set": per_set,
            **_envelope(per_set),
        }
        out[name]["can_tell"] = bool(
            out[name]["envelope_ci"][1] - out[name]["envelope_ci"][0] < cannot_tell_width
        )
    return out


def _round(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(float(x), 4)


def _envelope(per_set: Mapping[str, Mapping]) -> dict:
    """Over the human sets: the range of corrected points and the union of their intervals."""
    pts = [v["corrected"] for v in per_set.values() if v["corrected"] is not None]
    los = [v["ci"][0] for v in per_set.values() if not math.isnan(v["ci"][0])]
    his = [v["ci"][1] for v in per_set.values() if not math.isnan(v["ci"][1])]
    return {
        "envelope_points": [min(pts), max(pts)] if pts else None,
        "envelope_ci": [min(los), max(his)] if los else [0.0, 1.0],
    }


def judge_rates(agreement: Mapping, judge: str, benchmarks: Sequence[str]) -> dict[str, JudgeRates]:
    """The judge's rates on each human set from the agreement stage's results; a set it was not run on is an
    error naming it (a share corrected on fewer sets than declared would look tighter than it is)."""
    res = (agreement.get("judges") or {}).get(judge) or (
        (agreement.get("model_judges") or {}).get("runs") or {}
    ).get(judge)
    if not res:
        raise ValueError(f"judge_error: the agreement results hold no judge {judge!r}")
    out = {}
    for b in benchmarks:
        block = (res.get("benchmarks") or {}).get(b)
        if not block:
            raise ValueError(f"judge_error: judge {judge!r} has no agreement on {b!r}")
        out[b] = JudgeRates.from_confusion(block["binary"]["confusion_matrix"])
    return out


def _corrected_groups(
    groups: Mapping[tuple, Sequence[ScoredAnswer]],
    keys: Sequence[str],
    rates: Mapping[str, JudgeRates],
    p: JudgeErrorParams,
    seed: int,
) -> list[dict]:
    rows = []
    for i, (key, recs) in enumerate(groups.items()):
        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        row.update(
            run_ids=sorted({r.run_id for r in recs}),
            n=len(recs),
            shares=corrected_run(recs, rates, p.n_boot, seed + i, p.cannot_tell_width),
        )
        rows.append(row)
    return rows


def corrected_runs(
    records: Sequence[ScoredAnswer],
    main_kinds: Sequence[str],
    rates: Mapping[str, JudgeRates],
    p: JudgeErrorParams,
) -> list[dict]:
    """Every run of the score stage's run table (same grouping, same questions), its shares corrected."""
    keys = ("generator", "context_mode", "prompt_style", "series")
    return _corrected_groups(run_groups(records, main_kinds), keys, rates, p, p.seed)


def corrected_pooled(
    records: Sequence[ScoredAnswer],
    main_kinds: Sequence[str],
    rates: Mapping[str, JudgeRates],
    p: JudgeErrorParams,
) -> list[dict]:
    """The two-by-two's groups (generator x context, prompt styles pooled), their shares corrected."""
    return _corrected_groups(
        pooled_groups(records, main_kinds), ("generator", "context_mode"), rates, p, p.seed + 1000
    )


# --------------------------------------------------------------------------------------------- PPI validation


def ppi_interval(
    y_lab: np.ndarray, yhat_lab: np.ndarray, yhat_unl: np.ndarray, alpha: float = 0.05
) -> list[float]:
    """The prediction-powered interval for a mean: ppi_py's power-tuned estimator (PPI++), or plain PPI (lam 1)
    where the tuning is undefined (the judge's verdicts constant on the labelled draw give a 0/0 weight)."""
    from ppi_py import ppi_mean_ci

    y, yl, yu = y_lab.astype(float), yhat_lab.astype(float), yhat_unl.astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        lo, hi = ppi_mean_ci(y, yl, yu, alpha=alpha)
        if np.isnan(lo[0]) or np.isnan(hi[0]):
            lo, hi = ppi_mean_ci(y, yl, yu, alpha=alpha, lam=1.0)
    return [float(np.clip(lo[0], 0, 1)), float(np.clip(hi[0], 0, 1))]


def validate_ppi(
    human: np.ndarray, judged: np.ndarray, labelled: Sequence[int], draws: int, seed: int
) -> list[dict]:
    """On one human set: for each n (at most half the set), `draws` seeded splits into n labelled items and the
    judge alone on the rest; coverage of the share over all the set's labels and mean width, PPI vs labels only.
    The labelled items are drawn from the set itself, so the target is the set's share (a finite population):
    coverage above the nominal 95% is expected, below it is a failure."""
    truth = float(human.mean())
    rows = []
    for n in labelled:
        if n > len(human) // 2:
            continue
        rng = np.random.default_rng(seed + n)
        ppi_cov = lab_cov = 0
        ppi_w: list[float] = []
        lab_w: list[float] = []
        for _ in range(draws):
            perm = rng.permutation(len(human))
            lab, unl = perm[:n], perm[n:]
            lo, hi = ppi_interval(human[lab], judged[lab], judged[unl])
            ppi_cov += lo <= truth <= hi
            ppi_w.append(hi - lo)
            llo, lhi = wilson_interval(int(human[lab].sum()), n)
            lab_cov += llo <= truth <= lhi
            lab_w.append(lhi - llo)
        rows.append(
            {
                "labelled": n,
                "ppi_coverage": round(ppi_cov / draws, 4),
                "ppi_width": round(float(np.mean(ppi_w)), 4),
                "labels_only_coverage": round(lab_cov / draws, 4),
                "labels_only_width": round(float(np.mean(lab_w)), 4),
            }
        )
    return rows


def _relative_width(row: Mapping) -> tuple[float, str]:
    """PPI width over the labels-only width on the same draws: judges run on different subsets of a set (the model
    judges on a subsample) compare fairly only relative to labels alone."""
    return (row["ppi_width"] / row["labels_only_width"], row["judge"])


def ppi_table(verdict_rows: Sequence[Mapping], p: JudgeErrorParams) -> dict:
    """PPI validation per judge and human set from the agreement stage's per-claim verdicts, and per set the
    judge giving the narrowest interval among those whose coverage reaches `min_coverage`."""
    by: dict[tuple[str, str], list[Mapping]] = {}
    for r in verdict_rows:
        if r["benchmark"] in p.benchmarks:
            by.setdefault((r["judge"], r["benchmark"]), []).append(r)
    rows = []
    for (judge, bench), items in sorted(by.items()):
        human = np.array([r["human"] == SUPPORTED for r in items], bool)
        judged = np.array([r["verdict"] == SUPPORTED for r in items], bool)
        for v in validate_ppi(human, judged, p.ppi.labelled, p.ppi.draws, p.seed):
            rows.append(
                {
                    "judge": judge,
                    "benchmark": bench,
                    "n_set": len(items),
                    "share": round(float(human.mean()), 4),
                    **v,
                }
            )
    best: dict[str, dict] = {}
    for bench in p.benchmarks:
        for n in p.ppi.labelled:
            valid = [
                r
                for r in rows
                if r["benchmark"] == bench and r["labelled"] == n and r["ppi_coverage"] >= p.ppi.min_coverage
            ]
            if valid:
                b = min(valid, key=_relative_width)
                best.setdefault(bench, {})[str(n)] = {
                    "judge": b["judge"],
                    "ppi_width": b["ppi_width"],
                    "labels_only_width": b["labels_only_width"],
                }
    return {"rows": rows, "narrowest_valid": best, "labels_needed": labels_needed(rows, p)}


def labels_needed(
    rows: Sequence[Mapping], p: JudgeErrorParams, widths: Sequence[float] = (0.2, 0.1)
) -> list[dict]:
    """How many labelled answers would give an interval of each width, by the judges' PPI widths scaled as
    1/sqrt(n) from the largest n measured (an extrapolation; the labels-only width beside it)."""
    out = []
    top = max(p.ppi.labelled)
    for bench in p.benchmarks:
        at = [
            r
            for r in rows
            if r["benchmark"] == bench and r["labelled"] == top and r["ppi_coverage"] >= p.ppi.min_coverage
        ]
        if not at:
            continue
        b = min(at, key=_relative_width)
        for w in widths:
            out.append(
                {
                    "benchmark": bench,
                    "judge": b["judge"],
                    "width": w,
                    "labelled_ppi": math.ceil(top * (b["ppi_width"] / w) ** 2),
                    "labelled_labels_only": math.ceil(top * (b["labels_only_width"] / w) ** 2),
                }
            )
    return out


# ------------------------------------------------------------------------------------- finrag's own labels


def answer_key(r: ScoredAnswer) -> str:
    """The labelling page's answer id of a scored answer (trust.labelling.make_answer_id's form)."""
    return f"{r.run_id}/{r.qid}/{r.replicate}"


def finrag_ppi(
    records: Sequence[ScoredAnswer], labels: Sequence[Any], main_kinds: Sequence[str]
) -> list[dict]:
    """Per run with labelled claims: the PPI interval of its supported-claim share, finrag's own labels as the
    labelled part (the judge's verdict on the same claims beside them) and the judge on its other claims.

    A label's answer is `<run_id>/<qid>/<replicate>` (its group id), its claim id that and `#<i>`: claim i is the
    record's i-th claim.
    Labels from several labellers of one claim count once each (a labeller is a sample of people too)."""
    verdict: dict[tuple[str, int], str] = {}
    for r in records:
        for i, c in enumerate(r.claims, 1):
            verdict[(answer_key(r), i)] = c.verdict
    labelled: dict[str, list[tuple[str, int, bool]]] = {}
    for it in labels:
        answer_id = it.group_id  # the labelling page's answer id; the claim's number ends its claim id
        i = it.item_id.rsplit(":", 1)[0].rpartition("#")[2]
        if (answer_id, int(i)) not in verdict:
            continue  # a label of an answer no longer scored (an older run): counted in the agreement stage only
        labelled.setdefault(answer_id.split("/")[0], []).append((answer_id, int(i), it.human == SUPPORTED))
    rows = []
    for key, recs in run_groups(records, main_kinds).items():
        run_ids = {r.run_id for r in recs}
        labs = [x for rid in sorted(run_ids) for x in labelled.get(rid, [])]
        if len(labs) < 2:
            continue
        lab_keys = {(a, i) for a, i, _ in labs}
        y = np.array([h for _, _, h in labs], bool)
        yhat = np.array([verdict[(a, i)] == SUPPORTED for a, i, _ in labs], bool)
        rest = np.array(
            [
                c.verdict == SUPPORTED
                for r in recs
                for i, c in enumerate(r.claims, 1)
                if (answer_key(r), i) not in lab_keys
            ],
            bool,
        )
        lo, hi = ppi_interval(y, yhat, rest) if len(rest) else wilson_interval(int(y.sum()), len(y))
        rows.append(
            {
                "series": key[3],
                "context_mode": key[1],
                "labelled_claims": len(y),
                "unlabelled_claims": len(rest),
                "human_share": round(float(y.mean()), 4),
                "judge_share_on_labelled": round(float(yhat.mean()), 4),
                "ppi_ci": [round(lo, 4), round(hi, 4)],
            }
        )
    return rows


# ------------------------------------------------------------------------------------------------------ plot

SET_COLOURS = {"attributionbench": "#1f77b4", "expertqa": "#ff7f0e", "findver": "#2ca02c"}


def plot_corrected(rows: Sequence[Mapping], share: str, path: Any, title: str) -> None:
    """Per run: the share as the judge measured it (black dot) and its corrected 95% interval on each human set
    (one colour a set): where the lines span most of the axis, the study cannot tell the share."""
    from finrag.core.plots import pyplot, save_png

    plt = pyplot()
    rows = list(rows)
    fig, ax = plt.subplots(figsize=(7.5, 0.42 * len(rows) + 1.5))
    for y, r in enumerate(reversed(rows)):
        s = r["shares"][share]
        for k, (bench, v) in enumerate(sorted(s["by_set"].items())):
            off = (k - 1) * 0.12
            ax.plot(v["ci"], [y + off, y + off], color=SET_COLOURS.get(bench, "grey"), lw=1.8)
            if v["corrected"] is not None:
                ax.plot([v["corrected"]], [y + off], "|", color=SET_COLOURS.get(bench, "grey"), ms=8)
        if s["observed"] is not None:
            ax.plot([s["observed"]], [y], "o", color="black", ms=5)
    ax.set_yticks(range(len(rows)), [r["series"] for r in reversed(rows)], fontsize=8)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel(f"{share.replace('_', ' ')} (share of answers)")
    ax.set_title(title, fontsize=10)
    handles = [plt.Line2D([], [], color="black", marker="o", ls="", label="as judged")] + [
        plt.Line2D([], [], color=c, label=f"corrected with {b}'s error rates") for b, c in SET_COLOURS.items()
    ]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, fontsize=7)
    fig.tight_layout()
    save_png(fig, path)
