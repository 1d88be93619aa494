"""What the verifier reads of a (claim, evidence) pair: alignment features a checker of financial claims uses.

- meaning: cosine of the claim with its closest evidence sentences (the packaged all-MiniLM-L6-v2 bi-encoder);
- words: share of the claim's content stems and word bigrams found in the evidence / in its closest sentence;
- figures: share of the claim's figures (years apart) found in the evidence, allowing the claim's rounding and a
  thousand/million/billion rescale; the same for years, and for figures in the closest sentence;
- names: share of the claim's capitalised words found;
- negation in the claim vs its closest sentence;
- the numeric judge's verdict (supported / contradicted / unsupported) and what it found (names and years
  missing, share of figures matched directly or by one arithmetic step), and whether the claim states figures;
- the benchmark the claim comes from (known from the file's format), so one model serves each regime.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
from tqdm import tqdm

from finrag.score.claims import content_stems

BENCHMARK_FLAGS = ("findver", "attributionbench", "expertqa", "synthetic")
FEATURES = (
    "cos_max", "cos_top2", "lex_cover", "lex_cover_best", "bigram_cover", "n_figures", "figures_found",
    "figures_found_best", "n_years", "years_found", "caps_found", "neg_claim", "neg_best", "claim_words",
    "log_evidence_words", "numeric_supported", "numeric_contradicted", "has_figures",
    "numeric_names_missing", "numeric_years_missing", "numeric_abstained", "numeric_figures_matched",
    "numeric_arithmetic", "numeric_overlap",
    *(f"bench_{b}" for b in BENCHMARK_FLAGS),
)  # fmt: skip

_UNIT = re.compile(r"(?<=[.!?;])\s+|\n+|\s\|\s")
_NUMBER = re.compile(r"(?<![\w.])\(?-?\$?\d[\d,]*(?:\.\d+)?")
_WORDS = re.compile(r"[A-Za-z0-9']+")
_CAP = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z&\-]{2,}")
_NEG = re.compile(r"\b(?:not|no|never|none|neither|nor|without|n't|cannot|lack|lacks)\b", re.IGNORECASE)


def evidence_units(claim: str, passages: Sequence[str], max_units: int, max_words: int = 48) -> list[str]:
    """Sentences / table rows of the evidence, the `max_units` sharing most content stems with the claim (each cut
    to `max_words` words: the bi-encoder reads a sentence, not a page)."""
    want = content_stems(claim)
    units = []
    for p in passages:
        for u in _UNIT.split(p):
            u = " ".join(u.split()[:max_words])
            if len(u) >= 3:
                units.append(u)
    if len(units) <= max_units:
        return units
    ranked = sorted(range(len(units)), key=lambda i: (-len(want & content_stems(units[i])), i))
    return [units[i] for i in sorted(ranked[:max_units])]


def _numbers(text: str) -> tuple[list[tuple[float, int]], list[int]]:
    figs, years = [], []
    for m in _NUMBER.finditer(text):
        raw = m.group(0).strip("($").replace(",", "").lstrip("-").lstrip("$")
        try:
            v = float(raw)
        except ValueError:
            continue
        dec = len(raw.split(".")[1]) if "." in raw else 0
        if dec == 0 and 1900 <= v <= 2100 and "," not in m.group(0):
            years.append(int(v))
        else:
            figs.append((v, dec))
    return figs, years


def _found(value: float, dec: int, pool: np.ndarray) -> bool:
    if pool.size == 0:
        return False
    for scale in (1.0, 1e3, 1e6, 1e9, 1e-3, 1e-6):
        cand = pool / scale
        if np.any(np.abs(np.round(cand, dec) - value) < 0.5 * 10.0**-dec) or np.any(
            np.abs(cand - value) <= 0.005 * max(abs(value), 1e-9)
        ):
            return True
    return False


def _frac(flags: list[bool]) -> float:
    return float(np.mean(flags)) if flags else 1.0


def _bigrams(text: str) -> set[tuple[str, str]]:
    w = [x.lower() for x in _WORDS.findall(text)]
    return set(zip(w, w[1:], strict=False))


def row_features(
    claim: str, passages: Sequence[str], units: list[str], claim_vec: np.ndarray, unit_vecs: np.ndarray,
    numeric_verdict: str, has_fig: bool, benchmark: str, numeric_detail: dict | None = None,
) -> list[float]:  # fmt: skip
    ev = "\n".join(passages)
    cos = unit_vecs @ claim_vec if len(units) else np.array([0.0])
    order = np.argsort(-cos)
    best = units[int(order[0])] if units else ""
    cstems = content_stems(claim)
    estems = content_stems(ev)
    bstems = content_stems(best)
    cfig, cyears = _numbers(claim)
    efig, eyears = _numbers(ev)
    bfig, _ = _numbers(best)
    epool = np.array([v for v, _ in efig]) if efig else np.zeros(0)
    bpool = np.array([v for v, _ in bfig]) if bfig else np.zeros(0)
    cb = _bigrams(claim)
    caps = {m.group(0).lower() for m in _CAP.finditer(claim)}
    evl = ev.lower()
    feats = [
        float(cos.max()),
        float(np.mean(np.sort(cos)[-2:])),
        len(cstems & estems) / max(len(cstems), 1),
        len(cstems & bstems) / max(len(cstems), 1),
        len(cb & _bigrams(ev)) / max(len(cb), 1),
        float(len(cfig)),
        _frac([_found(v, d, epool) for v, d in cfig]),
        _frac([_found(v, d, bpool) for v, d in cfig]),
        float(len(cyears)),
        _frac([y in set(eyears) for y in cyears]),
        _frac([c in evl for c in caps]),
        float(bool(_NEG.search(claim))),
        float(bool(_NEG.search(best))),
        float(len(claim.split())),
        math.log1p(len(ev.split())),
        float(numeric_verdict == "supported"),
        float(numeric_verdict == "contradicted"),
        float(has_fig),
    ]
    d = numeric_detail or {}
    figs = d.get("figures") or []
    feats += [
        float(len(d.get("entities_missing") or [])),
        float(len(d.get("years_missing") or [])),
        float(bool(d.get("abstained"))),
        _frac([f.get("match", "none") != "none" for f in figs]),
        float(any(f.get("match") == "arithmetic" for f in figs)),
        float(d.get("overlap", -1.0)),
    ]
    feats += [float(benchmark == b) for b in BENCHMARK_FLAGS]
    return feats


# features are rounded to this many decimals: with the bi-encoder in float64 two x86 CPUs differ by ~1e-16, so the
# rounded features, and the models fitted on them, are the same bytes on any machine
FEATURE_DECIMALS = 6


class Float64Encoder:
    """The packaged all-MiniLM-L6-v2 run in float64. Why: in float32 the same text gives vectors ~1e-7 apart on
    an AVX-512 and an AVX2 CPU (other kernels, other summation order; measured), enough to move the gradient-
    boosted model a CI replay re-fits; float64 costs ~2x the time of float32 (1,500 sentences: 46 s vs 24 s)."""

    def __init__(self, embedder):
        self.model = embedder.model.double()
        self.batch_size = embedder.batch_size
        self.revision = f"{embedder.revision}-fp64"

    def embed_passages(self, texts: Sequence[str], progress: bool = False, step: int = 1024) -> np.ndarray:
        """Unit vectors of `texts`, `step` at a time (a progress bar over the ~5-min pass when `progress`)."""
        import torch

        texts = list(texts)
        parts = [np.zeros((0, 384), dtype=np.float64)]
        for i in tqdm(range(0, len(texts), step), desc="verifier bi-encoder (x1024)", disable=not progress,
                      leave=False):  # fmt: skip
            with torch.inference_mode():
                out = self.model.encode_document(
                    texts[i : i + step],
                    batch_size=self.batch_size,
                    convert_to_tensor=True,
                    show_progress_bar=False,
                )
            parts.append(out.double().numpy())
        x = np.concatenate(parts)
        return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def verifier_embedder(max_seq_length: int, threads: int | None = None) -> Float64Encoder:
    """The bi-encoder the features read: the packaged all-MiniLM-L6-v2, in float64 (`Float64Encoder`)."""
    from finrag.retrieve.embedding import make_embedder

    return Float64Encoder(
        make_embedder("minilm", precision="fp32", threads=threads, max_seq_length=max_seq_length)
    )


def featurise(
    rows: Sequence[tuple[str, Sequence[str], str]], embedder, numeric_judge, max_units: int, progress: bool = True,
) -> np.ndarray:  # fmt: skip
    """Feature matrix of (claim, passages, benchmark) rows: one embedding pass over every claim and unit."""
    from finrag.score.judges.numeric import has_figures

    units = [evidence_units(c, ps, max_units) for c, ps, _ in rows]
    texts = sorted({c for c, _, _ in rows} | {u for us in units for u in us})
    vecs = embedder.embed_passages(texts, progress=progress)
    index = {t: i for i, t in enumerate(texts)}
    out = []
    for (c, ps, bench), us in tqdm(
        list(zip(rows, units, strict=True)), desc="verifier features", disable=not progress, leave=False
    ):
        uv = vecs[[index[u] for u in us]] if us else np.zeros((0, vecs.shape[1]), dtype=np.float64)
        v = numeric_judge.judge(c, list(ps))
        out.append(
            row_features(c, ps, us, vecs[index[c]], uv, v.verdict, bool(has_figures(c)), bench, v.detail)
        )
    return np.round(np.asarray(out, dtype=float), FEATURE_DECIMALS)
