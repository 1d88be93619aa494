"""Do AI judges agree with each other more than with humans? (The seed study's lesson.) Measured pair by pair on
the same claims: for judges a and b on the claims both judged in one benchmark, kappa(a, b) against the mean of
kappa(human, a) and kappa(human, b) on exactly those claims. Averaging table rows instead would compare kappas
on different claims (a judge run on every dev claim has its human row on 2,297 claims and its AI rows on a
sample) and would give no interval.

The mean difference over rows gets a percentile bootstrap interval that draws the claims of each benchmark once
per resample (whole answers where claims form answers) and reuses that draw for every row, so rows that share
claims and judges move together, as they do in the data. Pairs whose judges share a part (one is built from the
other, both read the same model, or one is the other sampled again) agree partly by construction; the lesson is
given over every pair and over the pairs that share nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np

from finrag.core.contracts import LabelledClaim
from finrag.core.stats import DEFAULT_SEED
from finrag.ingest.human_claims import binary
from finrag.trust.judge_agreement import ANSWER_LEVEL_BENCHMARKS


def resampling_units(claims: Sequence[LabelledClaim]) -> dict[str, str]:
    """Each claim's bootstrap unit: its answer where claims form answers (they are not independent), else itself."""
    return {
        it.item_id: f"{it.benchmark}:{it.group_id}" if it.benchmark in ANSWER_LEVEL_BENCHMARKS else it.item_id
        for it in claims
    }


def judge_parts(
    judges: Sequence[str], declared: Mapping[str, Sequence[str]], models: Mapping[str, str]
) -> dict[str, set[str]]:
    """What each judge is made of: itself, the judges it is declared built from (params.yaml
    `agreement.model_judges.shared_parts`), what those are built from in turn, and, for each of them that calls
    a model, that model's weights."""

    def closure(j: str, seen: set[str]) -> set[str]:
        for part in declared.get(j, ()):
            if part not in seen:
                seen.add(part)
                closure(part, seen)
        return seen

    out = {}
    for j in judges:
        built = closure(j, {j})
        out[j] = built | {f"model:{models[x]}" for x in built if x in models}
    return out


def _weighted_kappa(w: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Binary Cohen's kappa per row of weights w (R, n) over 0/1 codes a, b (n,): a resample is a weight vector
    (how often each claim was drawn). NaN where chance agreement is 1 (one label on every drawn claim)."""
    n = w.sum(axis=1)
    n11 = w @ (a * b)
    n10 = w @ (a * (1 - b))
    n01 = w @ ((1 - a) * b)
    n00 = n - n11 - n10 - n01
    with np.errstate(divide="ignore", invalid="ignore"):
        po = (n11 + n00) / n
        pe = ((n11 + n10) * (n11 + n01) + (n00 + n01) * (n00 + n10)) / (n * n)
        return np.where(pe < 1, (po - pe) / (1 - pe), np.nan)


def _summary(rows: Sequence[dict], draws: Sequence[np.ndarray]) -> dict:
    """Mean AI-vs-AI kappa, mean human-vs-AI kappa and their difference over the rows, with the difference's
    bootstrap interval (each resample's mean over its defined rows)."""
    if not rows:
        return {"rows": 0, "mean_ai": None, "mean_human": None, "mean_difference": None, "ci": None}
    diffs = np.vstack(draws)  # (rows, R)
    with np.errstate(invalid="ignore"):
        means = np.nanmean(diffs, axis=0)
    means = means[~np.isnan(means)]
    return {
        "rows": len(rows),
        "mean_ai": float(np.mean([r["kappa_ai"] for r in rows])),
        "mean_human": float(np.mean([r["kappa_human"] for r in rows])),
        "mean_difference": float(np.mean([r["difference"] for r in rows])),
        "ci": [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))] if means.size else None,
    }


def seed_lesson(
    records: Mapping[str, Sequence[Mapping]],
    judges: Sequence[str],
    units: Mapping[str, str],
    parts: Mapping[str, set[str]],
    benchmarks: Sequence[str],
    n_resamples: int = 2000,
    seed: int = DEFAULT_SEED,
) -> dict:
    """The lesson over every pair of `judges` on each of `benchmarks`. `records[j]` are a judge's per-claim
    records (item_id, benchmark, human, judge); `units[item_id]` is the claim's resampling unit (its answer where
    claims form answers, else itself); `parts[j]` what judge j is made of (itself included): pairs that share a
    part are not independent. A row is left out (and listed) where a judge gives one verdict to every common
    claim: its kappa is 0 by construction."""
    rng = np.random.default_rng(seed)
    rows: list[dict] = []
    left_out: list[dict] = []
    draws: list[np.ndarray] = []
    for bench in benchmarks:
        verdict: dict[str, dict[str, int]] = {}
        human: dict[str, int] = {}
        for j in judges:
            verdict[j] = {}
            for r in records.get(j, ()):
                if r["benchmark"] == bench:
                    verdict[j][r["item_id"]] = int(binary(r["judge"]) == "supported")
                    human[r["item_id"]] = int(binary(r["human"]) == "supported")
        claims = sorted(human)
        if not claims:
            continue
        position = {c: i for i, c in enumerate(claims)}
        unit_index = {u: i for i, u in enumerate(sorted({units.get(c, c) for c in claims}))}
        unit_of = np.array([unit_index[units.get(c, c)] for c in claims])
        drawn = rng.integers(0, len(unit_index), size=(n_resamples, len(unit_index)))
        counts = np.stack([np.bincount(d, minlength=len(unit_index)) for d in drawn])
        weights = counts[:, unit_of].astype(float)  # (R, claims): how often each claim was drawn
        h_all = np.array([human[c] for c in claims], dtype=float)
        for a, b in combinations(judges, 2):
            common = [c for c in claims if c in verdict[a] and c in verdict[b]]
            if len(common) < 2:
                continue
            va = np.array([verdict[a][c] for c in common], dtype=float)
            vb = np.array([verdict[b][c] for c in common], dtype=float)
            constant = [j for j, v in ((a, va), (b, vb)) if v.min() == v.max()]
            if constant:
                left_out.append({"pair": f"{a} vs {b}", "benchmark": bench, "constant_rater": constant})
                continue
            idx = np.array([position[c] for c in common])
            h = h_all[idx]
            ones = np.ones((1, len(common)))
            k_ab, k_ha, k_hb = (
                float(_weighted_kappa(ones, x, y)[0]) for x, y in ((va, vb), (h, va), (h, vb))
            )
            w = weights[:, idx]
            draws.append(
                _weighted_kappa(w, va, vb) - (_weighted_kappa(w, h, va) + _weighted_kappa(w, h, vb)) / 2
            )
            rows.append(
                {"pair": f"{a} vs {b}", "benchmark": bench, "n": len(common), "kappa_ai": k_ab,
                 "kappa_human_a": k_ha, "kappa_human_b": k_hb, "kappa_human": (k_ha + k_hb) / 2,
                 "difference": k_ab - (k_ha + k_hb) / 2,
                 "independent": not (parts.get(a, {a}) & parts.get(b, {b}))}
            )  # fmt: skip
    independent = [i for i, r in enumerate(rows) if r["independent"]]
    return {
        "benchmarks": list(benchmarks),
        "judges": list(judges),
        "n_resamples": n_resamples,
        "resampling": "claims (whole answers where claims form answers), one draw per benchmark for every row",
        "rows": rows,
        "left_out": left_out,
        "every_pair": _summary(rows, draws),
        "independent_pairs": _summary([rows[i] for i in independent], [draws[i] for i in independent]),
    }
