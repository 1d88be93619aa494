"""Thin wrappers over scipy / statsmodels / scikit-learn: intervals, agreement, variance shares.

Nothing here re-implements a statistic; it only fixes the conventions (seeds, 95%, percentile bootstrap) so every
figure in the report is computed the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.metrics import balanced_accuracy_score, cohen_kappa_score, confusion_matrix
from statsmodels.stats.proportion import proportion_confint

DEFAULT_SEED = 20261129


def wilson_interval(successes: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval for a proportion (statsmodels)."""
    if n == 0:
        return (float("nan"), float("nan"))
    lo, hi = proportion_confint(successes, n, alpha=alpha, method="wilson")
    return (float(lo), float(hi))


def proportion(successes: int, n: int) -> dict:
    lo, hi = wilson_interval(successes, n)
    return {"k": int(successes), "n": int(n), "p": (successes / n) if n else float("nan"), "ci": [lo, hi]}


def mean_ci(values: Sequence[float], n_resamples: int = 2000, seed: int = DEFAULT_SEED) -> dict:
    """Mean with a percentile bootstrap 95% interval (scipy.stats.bootstrap)."""
    from scipy.stats import bootstrap

    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return {"mean": float("nan"), "ci": [float("nan"), float("nan")], "n": 0}
    if arr.size == 1 or np.all(arr == arr[0]):
        return {"mean": float(arr.mean()), "ci": [float(arr.mean()), float(arr.mean())], "n": int(arr.size)}
    res = bootstrap(
        (arr,),
        np.mean,
        n_resamples=n_resamples,
        method="percentile",
        random_state=np.random.default_rng(seed),
    )
    return {
        "mean": float(arr.mean()),
        "ci": [float(res.confidence_interval.low), float(res.confidence_interval.high)],
        "n": int(arr.size),
    }


def kappa(a: Sequence, b: Sequence, labels: Sequence | None = None) -> float:
    """Cohen's kappa (scikit-learn). Returns nan when undefined (one rater constant and identical)."""
    a, b = list(a), list(b)
    if not a or (labels is not None and not set(labels) & (set(a) | set(b))):
        return float("nan")  # no item, or none uses the given labels
    with np.errstate(divide="ignore", invalid="ignore"):
        k = cohen_kappa_score(a, b, labels=labels)
    return float(k)


def _kappa_from_codes(a: np.ndarray, b: np.ndarray, n_labels: int) -> np.ndarray:
    """Cohen's kappa for many resamples at once: a, b are (R, n) integer codes. Same formula as scikit-learn."""
    r, n = a.shape
    flat = (a * n_labels + b) + (np.arange(r)[:, None] * n_labels * n_labels)
    cm = np.bincount(flat.ravel(), minlength=r * n_labels * n_labels).reshape(r, n_labels, n_labels)
    po = np.trace(cm, axis1=1, axis2=2) / n
    pe = (cm.sum(axis=2) * cm.sum(axis=1)).sum(axis=1) / (n * n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pe < 1, (po - pe) / (1 - pe), np.nan)


MIN_GROUPS = 10  # fewer resampling units than this: no interval


def kappa_bootstrap(
    a: Sequence,
    b: Sequence,
    n_resamples: int = 2000,
    seed: int = DEFAULT_SEED,
    labels: Sequence | None = None,
    groups: Sequence | None = None,
) -> dict:
    """Cohen's kappa (scikit-learn) with a percentile bootstrap 95% interval over items (paired resampling), or
    over whole groups when `groups` is given (claims of one answer are not independent: resampling them one by
    one would make the interval too narrow). No interval (NaN) where none means anything: fewer than two items,
    fewer than MIN_GROUPS groups, or a rater who gives one label to every item (kappa is 0 by construction, and
    its resamples would give [0, 0], which reads as a precise estimate; `constant_rater` says which).

    The resamples are computed from confusion matrices in numpy (the formula scikit-learn uses), which is what
    makes 2,000 resamples per table row affordable; a test checks it against cohen_kappa_score.
    """
    a_list, b_list = list(a), list(b)
    n = len(a_list)
    out: dict = {"kappa": kappa(a_list, b_list, labels=labels), "ci": [float("nan"), float("nan")], "n": n}
    constant = [name for name, xs in (("first", a_list), ("second", b_list)) if len(set(xs)) == 1]
    out["constant_rater"] = "+".join(constant) if constant and n > 1 else None
    vocab = list(labels) if labels is not None else sorted(set(a_list) | set(b_list), key=str)
    code = {v: i for i, v in enumerate(vocab)}
    keep = [i for i in range(n) if a_list[i] in code and b_list[i] in code]
    clusters: list[np.ndarray] = []
    if groups is not None:
        g = list(groups)
        members: dict = {}
        for pos, i in enumerate(keep):
            members.setdefault(g[i], []).append(pos)
        clusters = [np.array(v) for _, v in sorted(members.items(), key=lambda kv: str(kv[0]))]
        out["n_groups"] = len(clusters)
    if n < 2 or len(keep) < 2 or out["constant_rater"] or (groups is not None and len(clusters) < MIN_GROUPS):
        return out
    ac = np.array([code[a_list[i]] for i in keep])
    bc = np.array([code[b_list[i]] for i in keep])
    rng = np.random.default_rng(seed)
    if groups is not None:
        resamples = (
            np.concatenate([clusters[j] for j in rng.integers(0, len(clusters), len(clusters))])
            for _ in range(n_resamples)
        )
        ks = np.array([_kappa_from_codes(ac[i][None, :], bc[i][None, :], len(vocab))[0] for i in resamples])
    else:
        idx = rng.integers(0, len(keep), size=(n_resamples, len(keep)))
        ks = _kappa_from_codes(ac[idx], bc[idx], len(vocab))
    ks = ks[~np.isnan(ks)]
    if ks.size:
        out["ci"] = [float(np.percentile(ks, 2.5)), float(np.percentile(ks, 97.5))]
    return out


def agreement(
    human: Sequence,
    judge: Sequence,
    labels: Sequence,
    seed: int = DEFAULT_SEED,
    groups: Sequence | None = None,
) -> dict:
    """Everything the report shows for one rater pair: n, kappa + CI, balanced accuracy, raw agreement, matrix
    (see kappa_bootstrap for when the interval is left undefined)."""
    human, judge = list(human), list(judge)
    kb = kappa_bootstrap(human, judge, seed=seed, labels=labels, groups=groups)
    cm = confusion_matrix(human, judge, labels=list(labels)) if human else np.zeros((len(labels),) * 2)
    present = sorted(set(human))
    bal = float(balanced_accuracy_score(human, judge)) if len(present) > 1 else float("nan")
    return {
        "n": len(human),
        "kappa": kb["kappa"],
        "kappa_ci": kb["ci"],
        "balanced_accuracy": bal,
        "raw_agreement": float(np.mean([h == j for h, j in zip(human, judge, strict=True)]))
        if human
        else float("nan"),
        "labels": list(labels),
        "confusion_matrix": np.asarray(cm).astype(int).tolist(),  # rows: first rater, cols: second rater
        "constant_rater": kb["constant_rater"],
        "ci_unit": "group" if groups is not None else "item",
        **({"n_groups": kb["n_groups"]} if "n_groups" in kb else {}),
    }


def eta_squared(df, response: str, factors: Sequence[str]) -> dict:
    """Share of variance explained by each factor: main-effects OLS ANOVA (statsmodels), SS_factor / SS_total."""
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    formula = f"{response} ~ " + " + ".join(f"C({f})" for f in factors)
    model = smf.ols(formula, data=df).fit()
    table = anova_lm(model, typ=2)
    ss_total = float(((df[response] - df[response].mean()) ** 2).sum())
    out = {}
    for f in factors:
        ss = float(table.loc[f"C({f})", "sum_sq"])
        out[f] = ss / ss_total if ss_total > 0 else float("nan")
    out["residual"] = float(table.loc["Residual", "sum_sq"]) / ss_total if ss_total > 0 else float("nan")
    return out
