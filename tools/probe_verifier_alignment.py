"""Probe (issue 43, item 3): do the two fixes docs/verifier_errors.md suggests for the verifier's largest error
causes help it transfer to a benchmark it never saw?

- `markers`: citation markers ("[7]"), list markers ("1. ") and URLs removed before the figure features, and number
  words in the evidence read as numerals ("two (2) exits"): the source-style artefact of item 2 there. The closest
  sentence (for `figures_found_best`) is picked by the mean of the stripped sentence's word-piece vectors, not the
  stage's pooled embedding of the raw sentence, so this variant changes a little more than the markers.
- `align`: soft token alignment of the claim with its evidence (BERTScore-style recall with the verifier's own
  MiniLM in float64: each claim content word piece's best cosine with any evidence word piece, the mean, the 10th
  percentile, and the mean against the closest sentence): the paraphrase signal for cause P, the largest.
- `both`.

Each variant is the verifier_train stage's model (same classifier, synthetic subsample, human weight and folds)
with those features swapped in or added. Printed per benchmark: the cross-fitted ROC AUC and kappa (cut fitted on
the other fold, as the stage does; and at the model's 0.5 point), and the leave-one-source-out AUC and kappa at
the 0.5 point, which is what the judge selection rule reads. Kappas here are point estimates (no bootstrap).

The base features are read from the stage's feature cache (`verifier_train.train.feature_cache`, written by
`dvc repro verifier_train`); the new ones are computed in blocks of 200 rows into a folder of the cache directory
(second argument) keyed by the rows, the params and this file, resumable (about
60 min on 2 AVX2 cores beside another job). Run: `FINRAG_MIRROR=... OMP_NUM_THREADS=1 uv run python
tools/probe_verifier_alignment.py features` then `... evaluate` (OMP_NUM_THREADS=1 when another job holds the
cores: the classifier's OpenMP threads otherwise spin for tens of minutes).
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from finrag.core.config import mirror_dir, params
from finrag.core.io import canonical_json, sha256_text
from finrag.score.verifier.build import HUMAN_SETS
from finrag.score.verifier.features import (
    FEATURES,
    _found,
    _frac,
    _numbers,
    evidence_units,
    verifier_embedder,
)
from finrag.score.verifier.train import (
    _classifier,
    _logit,
    feature_cache_path,
    left_out_splits,
    training_rows,
)

BLOCK = 200
_MARKER = re.compile(r"\[\d+(?:\s*[,\-–]\s*\d+)*\]")
_URL = re.compile(r"https?://\S+|www\.\S+")
_LIST_MARKER = re.compile(r"(?m)^\s*\d{1,2}[.)]\s+")
_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]  # fmt: skip
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(_WORDS)}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)


def strip_markers(text: str) -> str:
    return _LIST_MARKER.sub(" ", _URL.sub(" ", _MARKER.sub(" ", text)))


def with_numerals(text: str) -> str:
    return _NUMBER_WORD.sub(lambda m: f"{m.group(0)} ({_NUMBER_WORDS[m.group(0).lower()]})", text)


def content_mask(pieces: Sequence[str], stop: frozenset[str]) -> np.ndarray:
    keep = []
    for t in pieces:
        piece = t[2:] if t.startswith("##") else t
        keep.append(not (t.startswith("[") and t.endswith("]")) and any(c.isalnum() for c in piece)
                    and piece.lower() not in stop)  # fmt: skip
    return np.asarray(keep, dtype=bool)


def soft_alignment(claim: np.ndarray, units: Sequence[np.ndarray], best: int | None) -> list[float]:
    if claim.shape[0] == 0 or not units or sum(u.shape[0] for u in units) == 0:
        return [0.0, 0.0, 0.0]
    per_token = (claim @ np.concatenate(units).T).max(axis=1)
    best_unit = units[best] if best is not None and units[best].shape[0] else np.concatenate(units)
    return [
        float(per_token.mean()),
        float(np.quantile(per_token, 0.1)),
        float((claim @ best_unit.T).max(1).mean()),
    ]


def base_features(tp: dict, rows: list, numeric_params: dict) -> np.ndarray:
    """The stage's own feature matrix, from its cache (the key as verifier_train computes it)."""
    path = feature_cache_path(rows, tp, numeric_params)
    if not path.exists():
        sys.exit(f"probe: no feature cache at {path}: run `dvc repro verifier_train` first")
    return np.load(path)


def new_features(tp: dict, rows: list, cache_dir: Path) -> np.ndarray:
    """Per row: align_recall, align_recall_low, align_recall_best, then n_figures, figures_found,
    figures_found_best with markers stripped and number words read."""
    import torch
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    key = sha256_text(canonical_json({
        "rows": [[c, ps, b] for c, ps, b in rows], "max_units": tp["max_units"],
        "max_seq_length": tp["max_seq_length"], "probe": Path(__file__).read_text(encoding="utf-8"),
    }))[:16]  # fmt: skip
    cache_dir = cache_dir / key  # other rows, params or probe code: other blocks, never a stale one
    cache_dir.mkdir(parents=True, exist_ok=True)
    stop = frozenset(ENGLISH_STOP_WORDS)
    model = None
    t0 = time.time()
    for b0 in range(0, len(rows), BLOCK):
        out = cache_dir / f"block_{b0:05d}.npy"
        if out.exists():
            continue
        if model is None:
            model = verifier_embedder(tp["max_seq_length"], tp.get("threads")).model
        block = rows[b0 : b0 + BLOCK]
        units = [evidence_units(c, ps, tp["max_units"]) for c, ps, _ in block]
        texts = sorted(
            {strip_markers(c) for c, _, _ in block} | {strip_markers(u) for us in units for u in us}
        )
        with torch.inference_mode():
            vecs = model.encode(texts, output_value="token_embeddings", convert_to_tensor=False)
        ids = model.tokenizer(texts, truncation=True, max_length=model.max_seq_length)["input_ids"]
        enc = {}
        for t, i, v in zip(texts, ids, vecs, strict=True):
            x = v.double().numpy()[: len(i)]
            enc[t] = (
                model.tokenizer.convert_ids_to_tokens(i),
                x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12),
            )
        feats = []
        for (c, ps, _), us in zip(block, units, strict=True):
            pieces, cv = enc[strip_markers(c)]
            sent = cv.mean(0) / (np.linalg.norm(cv.mean(0)) + 1e-12)
            best, best_text = None, ""
            if us:
                means = [enc[strip_markers(u)][1].mean(0) for u in us]
                sims = [float(m @ sent / (np.linalg.norm(m) + 1e-12)) for m in means]
                best = int(np.argmax(sims))
                best_text = us[best]
            uvecs = [enc[strip_markers(u)][1][1:-1] for u in us]
            cfig, _ = _numbers(strip_markers(c))
            efig, _ = _numbers(with_numerals(strip_markers("\n".join(ps))))
            bfig, _ = _numbers(with_numerals(strip_markers(best_text)))
            epool = np.array([v for v, _ in efig]) if efig else np.zeros(0)
            bpool = np.array([v for v, _ in bfig]) if bfig else np.zeros(0)
            feats.append(soft_alignment(cv[content_mask(pieces, stop)], uvecs, best) + [
                float(len(cfig)), _frac([_found(v, d, epool) for v, d in cfig]),
                _frac([_found(v, d, bpool) for v, d in cfig]),
            ])  # fmt: skip
        np.save(out, np.asarray(feats))
        print(f"{b0 + len(block)}/{len(rows)} rows, {time.time() - t0:.0f} s", flush=True)
    return np.round(
        np.concatenate([np.load(cache_dir / f"block_{b:05d}.npy") for b in range(0, len(rows), BLOCK)]), 6
    )


def evaluate(tp: dict, synth: list, human: list, x_base: np.ndarray, extra: np.ndarray) -> None:
    from sklearn.metrics import cohen_kappa_score, roc_auc_score

    from finrag.score.verifier.calibrate import best_threshold

    ns = len(synth)
    y = np.array([x["label"] for x in synth] + [r["label"] for r in human])
    w = np.array([1.0] * ns + [float(tp["human_weight"])] * len(human))
    fold = np.array([-1] * ns + [r["fold"] for r in human])
    bench = np.array([r["benchmark"] for r in human])
    splits = left_out_splits(human, len(y))
    fig = [FEATURES.index(n) for n in ("n_figures", "figures_found", "figures_found_best")]
    x_markers = x_base.copy()
    x_markers[:, fig] = extra[:, 3:6]
    variants = {"base": x_base, "markers": x_markers, "align": np.hstack([x_base, extra[:, :3]]),
                "both": np.hstack([x_markers, extra[:, :3]])}  # fmt: skip
    for name, x in variants.items():
        oof = np.zeros(len(human))
        for f in range(tp["folds"]):
            sel = np.where(fold == f)[0]
            oof[sel - ns] = _logit(
                _classifier(tp).fit(x[fold != f], y[fold != f], sample_weight=w[fold != f]), x[sel]
            )
        line = [f"{name:8s}"]
        for b in HUMAN_SETS:
            s, yy, ff = oof[bench == b], y[ns:][bench == b], fold[ns:][bench == b]
            cut = np.zeros(len(s))
            for f in range(tp["folds"]):
                cut[ff == f] = best_threshold(s[ff != f], yy[ff != f])
            test, _, _, fit = splits[b]
            lo = _logit(_classifier(tp).fit(x[fit], y[fit], sample_weight=w[fit]), x[ns + test])
            line.append(
                f"{b}: cross-fit AUC {roc_auc_score(yy, s):.3f} kappa {cohen_kappa_score(yy, s >= cut):.3f} "
                f"(at 0: {cohen_kappa_score(yy, s >= 0):.3f}); left out AUC {roc_auc_score(yy, lo):.3f} "
                f"kappa {cohen_kappa_score(yy, lo >= 0):.3f}"
            )
        print("\n  ".join(line), flush=True)


def main() -> None:
    p = params("verifier_train")
    tp = p["train"]
    synth, human, rows = training_rows(Path(p["pairs"]), tp, mirror_dir(required=True))
    cache_dir = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("data/cache/verifier_alignment_probe")
    extra = new_features(tp, rows, cache_dir)
    if sys.argv[1:2] == ["evaluate"]:
        evaluate(tp, synth, human, base_features(tp, rows, p["numeric"]), extra)


if __name__ == "__main__":
    main()
