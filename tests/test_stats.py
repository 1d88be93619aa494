"""The statistics wrappers against the libraries' own results."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from finrag import stats


def test_vectorised_kappa_equals_sklearn_on_random_resamples():
    rng = np.random.default_rng(1)
    labels = ["a", "b", "c"]
    for _ in range(50):
        x = rng.integers(0, 3, 40)
        y = np.where(rng.random(40) < 0.6, x, rng.integers(0, 3, 40))
        ours = stats._kappa_from_codes(x[None, :], y[None, :], 3)[0]
        ref = cohen_kappa_score([labels[i] for i in x], [labels[i] for i in y], labels=labels)
        assert ours == pytest.approx(ref, abs=1e-12)


def test_kappa_bootstrap_interval_contains_point_and_is_seeded():
    a = ["s", "u"] * 50
    b = ["s", "u"] * 40 + ["u", "s"] * 10
    r1 = stats.kappa_bootstrap(a, b, seed=3)
    r2 = stats.kappa_bootstrap(a, b, seed=3)
    assert r1 == r2
    assert r1["kappa"] == pytest.approx(cohen_kappa_score(a, b))
    assert r1["ci"][0] <= r1["kappa"] <= r1["ci"][1]
    assert r1["ci"][1] - r1["ci"][0] > 0.05


def test_agreement_block_fields():
    h = ["supported", "unsupported", "supported", "supported"]
    j = ["supported", "supported", "supported", "unsupported"]
    out = stats.agreement(h, j, labels=["supported", "unsupported"])
    assert out["n"] == 4
    assert out["raw_agreement"] == pytest.approx(0.5)
    assert out["confusion_matrix"] == [[2, 1], [1, 0]]


def test_wilson_matches_statsmodels():
    assert stats.wilson_interval(7, 20) == pytest.approx(proportion_confint(7, 20, method="wilson"))


def test_eta_squared_sums_to_one_with_residual():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"f": np.repeat(["a", "b", "c"], 20), "g": np.tile(["x", "y"], 30)})
    df["y"] = df["f"].map({"a": 0.0, "b": 1.0, "c": 2.0}) + rng.normal(0, 0.5, len(df))
    shares = stats.eta_squared(df, "y", ["f", "g"])
    assert shares["f"] > 0.6
    assert sum(shares.values()) == pytest.approx(1.0, abs=0.02)


def test_kappa_is_nan_not_an_error_when_no_item_uses_the_labels():
    out = stats.kappa_bootstrap(["x", "y", "x"], ["y", "x", "x"], labels=["a", "b"])
    assert math.isnan(out["kappa"]) and all(math.isnan(v) for v in out["ci"]) and out["n"] == 3
