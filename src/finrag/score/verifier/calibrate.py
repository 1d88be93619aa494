"""Cross-fitted calibration of the trained verifier on the human-labelled dev sets.

Each dev claim is scored by the fold model that never saw its group (out-of-fold, OOF). On those scores:
- `verifier`: a threshold per benchmark that maximises Cohen's kappa; for the reported agreement, a fold's claims
  are cut at the threshold fitted on the other folds only; for claims of a new file, at the one fitted on all.
- `study`: a logistic regression (scikit-learn) per benchmark on the verifier logit and the numeric judge's
  verdict (figures found / contradicted / claim has figures), fitted the same cross-fitted way.
The rule (kappa-maximising threshold, LR features) is fixed here, before any FinanceBench answer is re-scored.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score


def best_threshold(scores: np.ndarray, labels: np.ndarray) -> float:
    """The cut (supported when score >= cut) with the highest kappa; ties go to the cut nearest the median."""
    s = np.asarray(scores, dtype=float)
    if len(s) == 0 or len(set(labels.tolist())) < 2:
        return 0.0
    uniq = np.unique(s[np.isfinite(s)])
    cands = np.concatenate([(uniq[:-1] + uniq[1:]) / 2, [uniq[0] - 1e-6]]) if len(uniq) > 1 else uniq
    med = float(np.median(s[np.isfinite(s)]))
    best, best_k = float(cands[0]), -2.0
    for c in cands:
        k = cohen_kappa_score(labels, (s >= c).astype(int))
        if k > best_k + 1e-12 or (abs(k - best_k) <= 1e-12 and abs(c - med) < abs(best - med)):
            best, best_k = float(c), k
    return best


def study_features(logit: float, numeric_verdict: str, has_fig: bool) -> list[float]:
    """The study judge's inputs: the verifier logit, the numeric verdict (supported / contradicted), figures?"""
    lg = logit if math.isfinite(logit) else -10.0
    return [
        lg,
        float(numeric_verdict == "supported"),
        float(numeric_verdict == "contradicted"),
        float(has_fig),
    ]


def fit_study(x: np.ndarray, y: np.ndarray) -> dict:
    """A logistic regression of the study features. Its coefficients are rounded (to 6 decimals) and its threshold
    fitted on the probabilities the rounded model gives: lbfgs ends ~1e-10 apart on CPUs with other BLAS
    kernels, the rounded model is the same on every machine and is what the judge applies."""
    if len(set(y.tolist())) < 2:
        return {"coef": [0.0] * x.shape[1], "intercept": 0.0, "threshold": 0.5}
    lr = LogisticRegression(C=1.0, max_iter=1000).fit(x, y)
    model = {
        "coef": [round(float(c), 6) for c in lr.coef_[0]],
        "intercept": round(float(lr.intercept_[0]), 6),
    }
    prob = np.array([round(study_prob(model, list(row)), 9) for row in np.asarray(x, dtype=float)])
    return {**model, "threshold": best_threshold(prob, y)}


def study_prob(model: dict, feats: list[float]) -> float:
    z = model["intercept"] + sum(c * f for c, f in zip(model["coef"], feats, strict=True))
    return 1.0 / (1.0 + math.exp(-z))
