"""Probe for issue 21: does an exact-reproducibility check of a claim's figures help the verifier on FinDVer?

The check: the share of a claim's figures (years apart) that its evidence reproduces at the precision the claim
writes them, either stated there (in any thousand/million/billion rescale) or one operation on two figures of one
passage (difference, sum, ratio; for a percent, percent change or share; for percentage points, a difference).

Printed, on the human dev sets (the verifier_train stage's outputs must exist: `dvc repro verifier_train`):
1. the check alone: ROC AUC on every claim, and Cohen's kappa of "all figures reproduced" on claims with figures;
2. the study judge's logistic regression with and without the check (cross-fitted on the stage's folds,
   thresholds from the other fold), from the stage's out-of-fold verifier logits: seconds;
3. with `--gbm`, the verifier's gradient-boosted model with the check as two more features (the stage's cached
   feature matrix, same folds, same seeds): ~8 min on 2 cores.
Adoption rule, written before the probe was run: ROC AUC on FinDVer up by >= 0.02 with no benchmark's AUC down by
more than 0.01. Prints figures; not a test. Usage: python benchmarks/probe_verifier_reproducibility.py [--gbm]
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from finrag.core.config import mirror_dir, params
from finrag.core.io import read_jsonl
from finrag.score.numbers import extract_figures
from finrag.score.verifier.build import HUMAN_SETS, human_rows
from finrag.score.verifier.calibrate import best_threshold, fit_study, study_features, study_prob

RESCALES = (1.0, 1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9)


def _rounds_to(candidate: float, value: float, decimals: int) -> bool:
    """Does `candidate`, rounded as the claim rounds, read as `value` (signs apart: "a decrease of 5%")?"""
    return abs(round(abs(candidate), decimals) - abs(value)) < 0.5 * 10.0**-decimals + 1e-12


def _reproduced(fig, passage_figures: list[list]) -> bool:
    dec = fig.decimals
    for ev in passage_figures:
        amounts = [e.value * (e.scale or 1.0) for e in ev if not e.is_ratio_unit]
        pcts = [e.percent_value() for e in ev if e.is_ratio_unit]
        if fig.is_ratio_unit:
            v = fig.percent_value()
            if any(_rounds_to(p, v, dec) for p in pcts):
                return True
            if any(b and (_rounds_to((a - b) / b * 100, v, dec) or _rounds_to(a / b * 100, v, dec))
                   for a, b in itertools.permutations(amounts, 2)):  # fmt: skip
                return True
            if any(_rounds_to(a - b, v, dec) for a, b in itertools.permutations(pcts, 2)):
                return True
        else:
            cands = list(amounts)
            for a, b in itertools.permutations(amounts, 2):
                cands += [a - b, a + b] + ([a / b] if b else [])
            scale = fig.scale or 1.0
            if any(_rounds_to(c * s / scale, fig.value, dec) for c in cands for s in RESCALES):
                return True
    return False


def reproducible_share(claim: str, passages: list[str], max_operands: int = 40) -> float | None:
    """Share of the claim's figures the evidence reproduces exactly (None: the claim states no figure)."""
    figs = [f for f in extract_figures(claim) if not f.is_year]
    if not figs:
        return None
    pools = [[f for f in extract_figures(p) if not f.is_year][:max_operands] for p in passages]
    return float(np.mean([_reproduced(f, pools) for f in figs]))


def _crossfit_kappa(score: np.ndarray, y: np.ndarray, fold: np.ndarray) -> float:
    cuts = {
        f: best_threshold(score[fold != f], y[fold != f]) for f in set(fold.tolist())
    }  # one search a fold
    cut = np.array([cuts[f] for f in fold.tolist()])
    return float(cohen_kappa_score(y, (score >= cut).astype(int)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gbm", action="store_true", help="also refit the gradient-boosted verifier (~8 min)")
    ap.add_argument("--model-dir", type=Path, default=Path("data/models/verifier"))
    a = ap.parse_args()
    p = params("verifier_train")["train"]
    human = human_rows(mirror_dir(required=True), p["folds"])
    oof = {r["key"]: r for r in read_jsonl(a.model_dir / "oof.jsonl")}
    share = [reproducible_share(r["claim"], r["passages"]) for r in human]
    print("benchmark         n  | check alone: AUC  kappa(figs, n) | study LR AUC / kappa: without  with")
    for bench in HUMAN_SETS:
        idx = [i for i, r in enumerate(human) if r["benchmark"] == bench]
        y = np.array([human[i]["label"] for i in idx])
        fold = np.array([human[i]["fold"] for i in idx])
        s = np.array([share[i] if share[i] is not None else 0.5 for i in idx])
        figs = [j for j, i in enumerate(idx) if share[i] is not None]
        k_alone = cohen_kappa_score(y[figs], (s[figs] >= 1.0).astype(int))
        base = np.array([study_features(oof[human[i]["key"]]["logit"], oof[human[i]["key"]]["numeric"],
                                        oof[human[i]["key"]]["has_figures"]) for i in idx])  # fmt: skip
        extra = np.array([[share[i] or 0.0, float(share[i] is not None)] for i in idx])
        row = []
        for x in (base, np.hstack([base, extra])):
            prob = np.zeros(len(idx))
            for f in sorted(set(fold.tolist())):
                m = fit_study(x[fold != f], y[fold != f])
                prob[fold == f] = [study_prob(m, list(v)) for v in x[fold == f]]
            row.append((roc_auc_score(y, prob), _crossfit_kappa(prob, y, fold)))
        print(f"{bench:16s} {len(idx):4d} | {roc_auc_score(y, s):.3f} {k_alone:6.3f} ({len(figs)}) | "
              f"{row[0][0]:.3f} / {row[0][1]:.3f}   {row[1][0]:.3f} / {row[1][1]:.3f}")  # fmt: skip
    if a.gbm:
        _gbm_probe(p, human, share)


def _gbm_probe(p: dict, human: list[dict], share: list[float | None]) -> None:
    """The stage's model refitted with and without the check, on the stage's cached features and folds."""
    from finrag.score.verifier.train import _classifier, _logit, synthetic_subsample

    synth = synthetic_subsample(
        read_jsonl(Path(params("verifier_train")["pairs"])), p["synthetic"], p["seed"]
    )
    caches = sorted(Path(p["feature_cache"]).glob("*.npy"), key=lambda f: f.stat().st_mtime)
    x = np.load(caches[-1])  # the newest feature pass (the stage's)
    if len(x) != len(synth) + len(human):
        raise SystemExit(
            f"{caches[-1]}: {len(x)} rows, expected {len(synth) + len(human)}: re-run verifier_train"
        )
    ss = [reproducible_share(r["claim"], [r["evidence"]]) for r in synth] + share
    extra = np.array([[-1.0 if v is None else v, float(v is not None)] for v in ss])
    ns = len(synth)
    y = np.array([r["label"] for r in synth] + [r["label"] for r in human])
    w = np.array([1.0] * ns + [float(p["human_weight"])] * len(human))
    fold = np.array([-1] * ns + [r["fold"] for r in human])
    bench = np.array([r["benchmark"] for r in human])
    for name, xv in (("verifier", x), ("verifier + check", np.hstack([x, extra]))):
        oof = np.zeros(len(human))
        for f in range(p["folds"]):
            m = _classifier(p).fit(xv[fold != f], y[fold != f], sample_weight=w[fold != f])
            sel = np.where(fold == f)[0]
            oof[sel - ns] = _logit(m, xv[sel])
        cells = []
        for b in HUMAN_SETS:
            s, yy, ff = oof[bench == b], y[ns:][bench == b], fold[ns:][bench == b]
            cells.append(f"{b} AUC {roc_auc_score(yy, s):.3f} kappa {_crossfit_kappa(s, yy, ff):.3f}")
        print(f"{name:17s} " + " | ".join(cells))


if __name__ == "__main__":
    main()
