"""Train the claim verifier: a gradient-boosted classifier (scikit-learn) over alignment features of a claim and
its evidence (finrag.score.verifier.features), fitted on the built claim pairs (inline XBRL, TAT-QA) and the human dev
sets, with grouped cross-fitting: the model of fold f never sees a report / question of fold f, and scores it.

Writes into `out_dir`: `model.pkl` (fitted on everything: for claims of new files), `model_fold<f>.pkl`,
`oof.jsonl` (every dev claim's out-of-fold score), `calibration.json` (kappa-maximising thresholds and the study
judge's logistic regression per benchmark, each also fitted without each fold) and `metrics.json`.

Why not a fine-tuned cross-encoder: one was tried first (commit fa62c4d, MiniLM, one epoch of ~4,400 pairs a
fold, 28 min a fold on one core); its training loss stayed at 0.690 (chance is 0.693) and its validation ROC AUC
was 0.56 / 0.62 (results/metrics/verifier_crossencoder_probe.json): CPU allows too few steps."""

from __future__ import annotations

import json
import logging
import math
import pickle
import random
import time
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier

from finrag.core.io import canonical_json, read_jsonl, sha256_text, write_json, write_jsonl
from finrag.core.stats import agreement
from finrag.score.verifier.build import HUMAN_SETS, claim_text_key, human_rows
from finrag.score.verifier.calibrate import best_threshold, fit_study, study_features, study_prob
from finrag.score.verifier.features import FEATURES, featurise, verifier_embedder

log = logging.getLogger(__name__)


def synthetic_subsample(pairs: list[dict], caps: dict[str, int], seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for source in sorted({x["source"] for x in pairs}):
        rows = [x for x in pairs if x["source"] == source]
        cap = caps.get(source)
        if cap is not None and cap < len(rows):
            rows = [rows[i] for i in sorted(rng.sample(range(len(rows)), cap))]
        out.extend(rows)
    return out


def _features_code_hash() -> str:
    """The feature code's syntax tree, hashed: a reformat or a comment keeps the ~5-min feature cache."""
    import ast

    import finrag.score.verifier.features as f

    return sha256_text(ast.dump(ast.parse(Path(f.__file__).read_text(encoding="utf-8"))))


def _gbm(g: dict, seed: int) -> HistGradientBoostingClassifier:
    return HistGradientBoostingClassifier(
        max_iter=g["max_iter"], learning_rate=g["learning_rate"], max_leaf_nodes=g["max_leaf_nodes"],
        min_samples_leaf=g["min_samples_leaf"], l2_regularization=g["l2_regularization"],
        max_features=g.get("max_features", 1.0), random_state=seed,
    )  # fmt: skip


class SeedBag:
    """The mean decision function of `n` gradient-boosted models that differ only in their seed (with
    `max_features` < 1 each split sees another random share of the features). Why: one model's dev-set kappa moved
    by up to 0.07 when its features moved by ~1e-7 (float32 kernels of two CPUs, measured): a single fit is a
    high-variance estimate, and the mean of several is not."""

    def __init__(self, g: dict, seed: int, n: int):
        self.models = [_gbm(g, seed + i) for i in range(n)]

    def fit(self, x: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> SeedBag:
        for m in self.models:
            m.fit(x, y, sample_weight=sample_weight)
        return self

    def decision_function(self, x: np.ndarray) -> np.ndarray:
        return np.mean([m.decision_function(x) for m in self.models], axis=0)


def _classifier(p: dict) -> HistGradientBoostingClassifier | SeedBag:
    g = p["gbm"]
    n = int(g.get("bag", 1))
    return _gbm(g, p["seed"]) if n <= 1 else SeedBag(g, p["seed"], n)


# out-of-fold scores are rounded before thresholds and the study regression see them (see FEATURE_DECIMALS)
SCORE_DECIMALS = 6


def _logit(model, x: np.ndarray) -> np.ndarray:
    return np.asarray(model.decision_function(x), dtype=float)


def _save(obj, path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as fh:
        pickle.dump(obj, fh)
    tmp.replace(path)


def training_rows(
    pairs_file: Path, p: dict, mirror: Path
) -> tuple[list[dict], list[dict], list[tuple[str, list[str], str]]]:
    """The training set in feature-matrix order: the synthetic pairs' subsample, then every human dev claim with its
    fold; `rows` is (claim, passages, source) for each, what the features read."""
    synth = synthetic_subsample(read_jsonl(pairs_file), p["synthetic"], p["seed"])
    human = human_rows(mirror, p["folds"])
    rows = [(x["claim"], [x["evidence"]], "synthetic") for x in synth]
    rows += [(r["claim"], r["passages"], r["benchmark"]) for r in human]
    return synth, human, rows


def feature_cache_path(rows: list[tuple[str, list[str], str]], p: dict, numeric_params: dict) -> Path:
    """Where the feature matrix of `rows` is cached, outside the stage's outputs: keyed by everything the feature
    pass reads (the bi-encoder over every claim and evidence sentence takes minutes), so a re-run that changes
    only the classifier skips it, and a probe reads the very matrix the stage trained on."""
    fkey = sha256_text(canonical_json({
        "rows": [[c, ps, b] for c, ps, b in rows], "numeric": numeric_params, "max_units": p["max_units"],
        "max_seq_length": p["max_seq_length"], "features": list(FEATURES), "code": _features_code_hash(),
    }))[:20]  # fmt: skip
    return Path(p.get("feature_cache", "data/cache/verifier_features")) / f"{fkey}.npy"


class LeftOut(NamedTuple):
    """One human set left out of a training matrix whose last rows are the human claims."""

    test: np.ndarray  # its claims' indices among the human rows
    # the other sets' claims with the same text: left out with it (they would leak its label)
    shared: list[int]
    # the other sets' remaining claims: what a model fitted without it may learn from
    others: list[int]
    fit: np.ndarray  # the matrix rows a model may fit on (synthetic rows and `others`)


def left_out_splits(human: list[dict], n_rows: int) -> dict[str, LeftOut]:
    """Every human set's LeftOut for a training matrix of `n_rows` rows whose last len(human) rows are the human
    claims, the sets and claim texts read once."""
    ns = n_rows - len(human)
    bench = np.array([r["benchmark"] for r in human])
    text = [claim_text_key(r["claim"]) for r in human]
    out: dict[str, LeftOut] = {}
    for b in HUMAN_SETS:
        test = np.where(bench == b)[0]
        left_out = {text[i] for i in test}
        shared = [i for i in range(len(human)) if bench[i] != b and text[i] in left_out]
        others = [i for i in range(len(human)) if bench[i] != b and text[i] not in left_out]
        fit = np.ones(n_rows, dtype=bool)
        fit[ns + test] = False
        fit[[ns + i for i in shared]] = False
        out[b] = LeftOut(test, shared, others, fit)
    return out


def leave_one_source_out(
    x_all: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    human: list[dict],
    oof: np.ndarray,
    p: dict,
    numeric: np.ndarray | None = None,
) -> dict:
    """Each human set scored by a model that never saw it (the synthetic pairs and the other human sets), beside
    the within-set cross-fit. Why: the dev sets' cross-fitted agreement fell on their held-out halves; leaving a
    whole source out (with the claims other sets share with it) shows how much carries over to a source it has not
    seen.
    ROC AUC needs no threshold; kappa is at the model's own 0.5 point (decision function 0), since a threshold fitted
    on the left-out set would use its labels.

    With `numeric` (the numeric judge's verdict on each human claim), the same claims also give the two other
    candidates of the judge selection rule: the numeric judge (it learns nothing, so its kappa is its transfer), and
    the study judge, its combiner fitted on the other sets' out-of-fold rows and applied to the left-out model's
    logits. Two approximations, both stated in the report: those rows' logits came from fold models that saw part of
    the left-out set, and from other models than the one whose logits the combiner is then applied to (their
    scales can differ); and the verifier is cut at its 0.5 point here, not at the calibrated threshold it uses in
    service (a threshold fitted with the left-out set's labels would leak)."""
    from sklearn.metrics import roc_auc_score

    ns = len(y) - len(human)
    out: dict[str, Any] = {}
    for b, (test, shared, others, fit) in left_out_splits(human, len(y)).items():
        yy = y[ns + test]
        if test.size == 0 or len(set(yy.tolist())) < 2:
            continue
        model = _classifier(p).fit(x_all[fit], y[fit], sample_weight=w[fit])
        s = np.round(_logit(model, x_all[ns + test]), SCORE_DECIMALS)
        human_lab = ["supported" if v else "not_supported" for v in yy]
        verdict = ["supported" if v else "not_supported" for v in s >= 0]
        out[b] = {
            "n": int(test.size),
            "shared_claims_left_out": len(shared),
            "auc_left_out": round(float(roc_auc_score(yy, s)), 4),
            "auc_crossfit": round(float(roc_auc_score(yy, oof[test])), 4),
            "kappa_left_out": agreement(
                human_lab,
                verdict,
                ["supported", "not_supported"],
                seed=p["seed"],
                groups=[human[i]["group"] for i in test],
            ),  # fmt: skip
        }
        if numeric is not None:
            groups = [human[i]["group"] for i in test]
            num = ["supported" if numeric[i] == "supported" else "not_supported" for i in test]
            has_fig = x_all[ns:, FEATURES.index("has_figures")]
            labels = ["supported", "not_supported"]
            out[b]["numeric_same_claims"] = agreement(human_lab, num, labels, seed=p["seed"], groups=groups)
            others_y = y[[ns + i for i in others]]
            if len(set(others_y.tolist())) < 2:
                continue  # no other human set to fit the combiner on: no study kappa (the rule then admits no study)
            combiner = fit_study(
                np.array([study_features(oof[i], str(numeric[i]), bool(has_fig[i])) for i in others]),
                others_y,
            )
            study = [
                "supported"
                if study_prob(combiner, study_features(float(sc), str(numeric[i]), bool(has_fig[i])))
                >= combiner["threshold"]
                else "not_supported"
                for sc, i in zip(s, test, strict=True)
            ]
            out[b]["study_left_out"] = agreement(human_lab, study, labels, seed=p["seed"], groups=groups)
    return out


def train_verifier(pairs_file: Path, out_dir: Path, p: dict, mirror: Path, numeric_params: dict) -> dict:
    from finrag.score.judges.numeric import NumericJudge

    t0 = time.time()
    k = p["folds"]
    synth, human, rows = training_rows(pairs_file, p, mirror)
    cache = feature_cache_path(rows, p, numeric_params)
    if cache.exists():
        x_all = np.load(cache)
    else:
        embedder = verifier_embedder(p["max_seq_length"], p.get("threads"))
        x_all = featurise(
            rows, embedder, NumericJudge(**numeric_params), p["max_units"], p.get("progress", True)
        )
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(".tmp.npy")
        np.save(tmp, x_all)
        tmp.replace(cache)
    t_feat = time.time() - t0
    ns = len(synth)
    y = np.array([x["label"] for x in synth] + [r["label"] for r in human])
    w = np.array([1.0] * ns + [float(p["human_weight"])] * len(human))
    fold = np.array([-1] * ns + [r["fold"] for r in human])
    out_dir.mkdir(parents=True, exist_ok=True)
    oof = np.zeros(len(human))
    sel: np.ndarray | list[int]
    for f in range(k):
        fit = fold != f  # synthetic (-1) always; human groups of the other folds
        m = _classifier(p).fit(x_all[fit], y[fit], sample_weight=w[fit])
        sel = np.where(fold == f)[0]
        oof[sel - ns] = np.round(_logit(m, x_all[sel]), SCORE_DECIMALS)
        _save(m, out_dir / f"model_fold{f}.pkl")
    _save(_classifier(p).fit(x_all, y, sample_weight=w), out_dir / "model.pkl")
    xh = x_all[ns:]
    num_sup = xh[:, FEATURES.index("numeric_supported")]
    num_con = xh[:, FEATURES.index("numeric_contradicted")]
    has_fig = xh[:, FEATURES.index("has_figures")]
    numeric = np.where(num_sup > 0, "supported", np.where(num_con > 0, "contradicted", "unsupported"))
    oof_rows = [{"key": r["key"], "benchmark": r["benchmark"], "fold": r["fold"], "label": r["label"],
                 "logit": float(s), "numeric": str(nv), "has_figures": bool(hf)}
                for r, s, nv, hf in zip(human, oof, numeric, has_fig, strict=True)]  # fmt: skip
    cal: dict = {"folds": k, "max_units": p["max_units"], "max_seq_length": p["max_seq_length"],
                 "features": list(FEATURES), "numeric_params": numeric_params, "benchmarks": {}}  # fmt: skip
    crossfit: dict = {}
    for bench in [*HUMAN_SETS, "default"]:
        sel = [i for i, r in enumerate(oof_rows) if bench == "default" or r["benchmark"] == bench]
        if not sel:
            continue
        s, yy = oof[sel], np.array([oof_rows[i]["label"] for i in sel])
        ff = np.array([oof_rows[i]["fold"] for i in sel])
        xs = np.array(
            [study_features(oof[i], oof_rows[i]["numeric"], oof_rows[i]["has_figures"]) for i in sel]
        )
        c: dict[str, Any] = {
            "n": len(sel),
            "threshold_all": best_threshold(s, yy),
            "threshold_by_fold": {str(f): best_threshold(s[ff != f], yy[ff != f]) for f in range(k)},
            "study_all": fit_study(xs, yy),
            "study_by_fold": {str(f): fit_study(xs[ff != f], yy[ff != f]) for f in range(k)},
        }
        cal["benchmarks"][bench] = c
        if bench != "default":  # the cross-fitted verdicts on every dev claim (the agreement stage samples)
            cut = np.array([c["threshold_by_fold"][str(f)] for f in ff])
            verdict = ["supported" if v else "not_supported" for v in s >= cut]
            human_lab = ["supported" if v else "not_supported" for v in yy]
            groups = [human[i]["group"] for i in sel]
            crossfit[bench] = agreement(human_lab, verdict, ["supported", "not_supported"], seed=p["seed"],
                                        groups=groups)  # fmt: skip
    write_jsonl(out_dir / "oof.jsonl", oof_rows)
    (out_dir / "calibration.json").write_text(json.dumps(cal, indent=2, sort_keys=True), encoding="utf-8")
    metrics = {
        "model": "HistGradientBoostingClassifier over alignment features (all-MiniLM-L6-v2 cosines, word, figure, "
        "name and negation checks, the numeric judge's verdict)",
        "features": list(FEATURES),
        "train_rows": {"synthetic": ns, **{b: sum(r["benchmark"] == b for r in human) for b in HUMAN_SETS}},
        "synthetic_by_source": {
            s: sum(x["source"] == s for x in synth) for s in sorted({x["source"] for x in synth})
        },
        "crossfit_dev_agreement": crossfit,
        "thresholds": {b: c["threshold_all"] for b, c in cal["benchmarks"].items()},
    }
    # no wall times: the model folder is a DVC output, byte-stable
    write_json(out_dir / "metrics.json", metrics)
    # reported beside the model (results/metrics/verifier_train.json), not in its folder: the model is unchanged
    metrics["leave_one_source_out"] = leave_one_source_out(x_all, y, w, human, oof, p, numeric)
    seconds = {"features": round(t_feat, 1), "total": round(time.time() - t0, 1)}
    log.info("verifier_train: %.1f s features, %.1f s total", seconds["features"], seconds["total"])
    metrics["seconds"] = seconds
    if not all(math.isfinite(v) for v in oof):
        raise ValueError("verifier: a non-finite out-of-fold score")
    return metrics
