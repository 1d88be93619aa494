"""The statistics wrappers against the libraries' own results."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from finrag.core import stats


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


def test_a_constant_rater_has_kappa_zero_and_no_interval():
    out = stats.agreement(["a", "b", "a", "b"], ["a", "a", "a", "a"], ["a", "b"])
    assert out["kappa"] == 0.0 and out["constant_rater"] == "second"
    assert all(math.isnan(v) for v in out["kappa_ci"])


def test_resampling_whole_groups_widens_the_interval_of_clustered_claims():
    # 20 answers of 5 claims each; within an answer the judge agrees with the human on all claims or on none
    rng = np.random.default_rng(0)
    human, judge, groups = [], [], []
    for g in range(20):
        agree = rng.random() < 0.7
        for _ in range(5):
            h = str(rng.choice(["s", "n"]))
            human.append(h)
            judge.append(h if agree else ("n" if h == "s" else "s"))
            groups.append(f"answer{g}")
    by_item = stats.kappa_bootstrap(human, judge, labels=["s", "n"])
    by_group = stats.kappa_bootstrap(human, judge, labels=["s", "n"], groups=groups)
    assert by_item["kappa"] == by_group["kappa"]
    width = lambda ci: ci[1] - ci[0]  # noqa: E731
    assert width(by_group["ci"]) > 1.5 * width(by_item["ci"])
    assert stats.agreement(human, judge, ["s", "n"], groups=groups)["ci_unit"] == "group"


def test_too_few_groups_give_no_interval():
    human = ["s", "n"] * 10
    judge = ["s", "n", "n", "n"] * 5
    few = stats.kappa_bootstrap(human, judge, labels=["s", "n"], groups=[f"g{i % 4}" for i in range(20)])
    assert few["n_groups"] == 4 and all(math.isnan(v) for v in few["ci"]) and not math.isnan(few["kappa"])
