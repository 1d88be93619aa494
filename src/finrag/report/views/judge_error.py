"""The judge's error carried into the study's groundedness shares (results/metrics/judge_error.json): the judge's
rates per human set, each run's shares as judged and corrected, whether the study can tell them, and what
prediction-powered inference with labels of finrag's own answers would buy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from finrag.report.fmt import fmt, pct, pctci
from finrag.report.views.base import MissingResults, Results, view

SHARES = ("fully_grounded", "grounded_unflagged", "correct_and_grounded")
SHARE_LABELS = {
    "fully_grounded": "fully grounded",
    "grounded_unflagged": "grounded, unflagged",
    "correct_and_grounded": "correct and grounded",
    "grounded_of_correct": "grounded, of correct answers",
}


def corrected_cell(s: Mapping[str, Any]) -> str:
    """'58.7% → [0.0, 100.0]' (as judged, then the envelope of the corrected intervals), 'cannot tell' marked."""
    told = "" if s["can_tell"] else " ✗"
    return f"{pct(s['observed'])} → {pctci(s['envelope_ci'])}{told}"


def trivially_told(s: Mapping[str, Any]) -> bool:
    """A share the judge cannot move: no answer has the judge-free part (e.g. none correct), so it is 0 whatever
    the judge says."""
    return s["can_tell"] and s["envelope_ci"] == [0.0, 0.0]


@dataclass(frozen=True)
class RateRow:
    benchmark: str
    n: int
    sensitivity: str
    specificity: str
    youden: str


@dataclass(frozen=True)
class RunRow:
    series: str
    context: str
    cells: list[str]  # one per SHARES


@dataclass(frozen=True)
class PpiRow:
    benchmark: str
    labelled: int
    labels_only_width: str
    best_judge: str
    ppi_width: str
    narrower_by: str


@dataclass(frozen=True)
class JudgeError:
    judge: str
    rates: list[RateRow]
    youden_range: str
    share_labels: list[str]
    runs: list[RunRow]
    n_told: int
    n_told_trivially: int
    n_shares: int
    cannot_tell_width: str
    ppi: list[PpiRow]
    min_coverage: str
    worst_coverage: str
    n_ppi_rows: int
    n_below: int
    judges_validated: str
    labels_needed: list[str]
    finrag_labels: str
    assumptions: list[str]
    source: str
    plot: str


def count_told(runs: Sequence[Mapping]) -> tuple[int, int, int]:
    """(shares the study can tell, of which trivially, all shares) over SHARES of every run."""
    shares = [x["shares"][k] for x in runs for k in SHARES]
    return sum(s["can_tell"] for s in shares), sum(trivially_told(s) for s in shares), len(shares)


def ppi_rows(rows: Sequence[Mapping], min_coverage: float) -> list[PpiRow]:
    """Per human set and n: the labels-only width and the narrowest PPI width among judges whose coverage is
    valid, on the same draws of the same set (the judges run on every claim of the set only are compared)."""
    out = []
    keys = sorted({(r["benchmark"], r["labelled"]) for r in rows})
    for bench, n in keys:
        at = [
            r
            for r in rows
            if r["benchmark"] == bench and r["labelled"] == n and r["ppi_coverage"] >= min_coverage
        ]
        if not at:
            continue
        best = min(at, key=lambda r: (r["ppi_width"] / r["labels_only_width"], r["judge"]))
        out.append(
            PpiRow(
                benchmark=bench,
                labelled=n,
                labels_only_width=fmt(best["labels_only_width"], 3),
                best_judge=best["judge"],
                ppi_width=fmt(best["ppi_width"], 3),
                narrower_by=pct(1 - best["ppi_width"] / best["labels_only_width"]),
            )
        )
    return out


@view("judge_error")
def judge_error(r: Results) -> JudgeError:
    je = r.need("judge_error")
    rates = r.need("judge_error", "rates")
    runs = [x for x in r.need("judge_error", "runs") if x["context_mode"] in ("retrieved", "oracle")]
    told, trivial, total = count_told(runs)
    val = r.need("judge_error", "ppi_validation")
    params = r.need("judge_error", "params")
    rows = val["rows"]
    youdens = [v["youden"] for v in rates.values()]
    labels = je["finrag_labels"]
    return JudgeError(
        judge=je["judge"],
        rates=[
            RateRow(b, v["n"], fmt(v["sensitivity"], 3), fmt(v["specificity"], 3), fmt(v["youden"], 3))
            for b, v in sorted(rates.items())
        ],
        youden_range=f"{fmt(min(youdens), 2)}–{fmt(max(youdens), 2)}",
        share_labels=[SHARE_LABELS[k] for k in SHARES],
        runs=[
            RunRow(x["series"], x["context_mode"], [corrected_cell(x["shares"][k]) for k in SHARES])
            for x in sorted(runs, key=lambda x: (x["context_mode"] != "retrieved", x["series"]))
        ],
        n_told=told,
        n_told_trivially=trivial,
        n_shares=total,
        cannot_tell_width=pct(params["cannot_tell_width"], 0),
        ppi=ppi_rows(rows, params["min_coverage"]),
        min_coverage=fmt(params["min_coverage"], 2),
        worst_coverage=fmt(min(x["ppi_coverage"] for x in rows), 3) if rows else "n/a",
        n_ppi_rows=len(rows),
        n_below=sum(x["ppi_coverage"] < params["min_coverage"] for x in rows),
        judges_validated=", ".join(f"`{j}`" for j in sorted({x["judge"] for x in rows})),
        labels_needed=[
            f"±{fmt(x['width'] / 2, 2)} ({pct(x['width'], 0)} wide) on a share like {x['benchmark']}'s: about "
            f"{x['labelled_ppi']:,} labelled claims with `{x['judge']}` through PPI, {x['labelled_labels_only']:,} "
            f"with labels alone"
            for x in val["labels_needed"]
        ],
        finrag_labels=(
            f"{labels['n_labels']:,} labels of finrag's own claims; PPI intervals for {len(labels['runs'])} runs"
            if labels["n_labels"]
            else "no person has labelled finrag's own answers yet (`labels/` is empty)"
        ),
        assumptions=list(je["assumptions"]),
        source=f"`{r.path('judge_error')}`",
        plot="../results/plots/judge_error.png",
    )


def selected_corrected(r: Results, series: str, share: str = "correct_and_grounded") -> str:
    """A run's share corrected for the judge's error, for a sentence: '[0.0, 16.3] over the 3 human sets'."""
    s = run_share(r, series, share)
    return f"{pctci(s['envelope_ci'])} over the {len(s['by_set'])} human sets"


def run_share(r: Results, series: str, share: str) -> Mapping[str, Any]:
    """One run's share as judged and corrected (observed, by_set, envelope_ci, can_tell)."""
    for x in r.need("judge_error", "runs"):
        if x["series"] == series:
            return x["shares"][share]
    raise MissingResults(f"{r.path('judge_error')} has no run {series!r}")


@dataclass(frozen=True)
class AblationRow:
    benchmark: str
    n: int
    kappa_with: str
    kappa_without: str
    refuted_supported_with: str
    refuted_supported_without: str


@dataclass(frozen=True)
class Ablation:
    name: str
    judge: str
    changed: str
    rows: list[AblationRow]
    source: str


@dataclass(frozen=True)
class Ablations:
    items: list[Ablation]


@view("ablations")
def ablations(r: Results) -> Ablations:
    """Each judge capability switched off on the same claims (agreement.ablations), beside the judge as run."""
    from finrag.report.fmt import ci

    items = []
    for name, a in sorted(r.need("judge_agreement", "ablations").items()):
        rows = [
            AblationRow(
                benchmark=b,
                n=w["n"],
                kappa_with=f"{fmt(w['kappa'], 3)} {ci(w['kappa_ci'], 3)}",
                kappa_without=f"{fmt(a['without'][b]['kappa'], 3)} {ci(a['without'][b]['kappa_ci'], 3)}",
                refuted_supported_with=pct(w["supported_when_refuted"]),
                refuted_supported_without=pct(a["without"][b]["supported_when_refuted"]),
            )
            for b, w in sorted(a["with"].items())
        ]
        changed = ", ".join(f"`{k}: {v}`" for k, v in sorted(a["changed"].items()))
        items.append(Ablation(name, a["judge"], changed, rows, f"`{r.path('judge_agreement')}`"))
    return Ablations(items)
