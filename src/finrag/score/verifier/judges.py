"""The trained judges: `verifier` (the trained classifier alone, cut at a calibrated threshold) and `study` (verifier
+ numeric checks, combined by a cross-fitted logistic regression).

A claim the dev sets hold (found by the hash of its text and passages) is judged out of fold: by the fold model
that never saw its group and the threshold fitted without its fold, so agreement on the dev sets is honest.
Any other claim gets the model fitted on all pairs and the calibration fitted on all dev claims of its benchmark
(read from the claim id's prefix, "findver:..." as the agreement loaders write it). A claim with no such prefix (a
FinanceBench answer's "c1") is read as `default_benchmark` when one is set (the score stage sets `findver`, the
human set of claims about company filings: fixed in params.yaml before the answers were re-scored), else with no
benchmark flag and the "default" calibration.

New claims cost a bi-encoder pass (float64, about 30 sentences/s on 2 cores), so their logits are kept: in memory
(a claim judged twice on the same passages costs once) and, with `cache`, in a JSON-lines file keyed by everything
the logit depends on (the model and calibration files, the feature code, the claim, its passages and its benchmark
flag). The score stage's cache is committed, as the LLM response cache is: a fresh clone replays score's verdicts
without the pass, and any change to the model or the feature code misses the cache and recomputes. The service reads
the study's cache (`extra_caches`, read-only) and writes its live claims' logits to a file of its own."""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from finrag.core.config import repo_root
from finrag.core.contracts import ClaimVerdict, Verdict
from finrag.core.io import append_locked, read_jsonl, sha256_text
from finrag.score.judges.base import BaseJudge, batch_args
from finrag.score.judges.numeric import NumericJudge, has_figures
from finrag.score.verifier.build import item_key
from finrag.score.verifier.calibrate import study_features, study_prob
from finrag.score.verifier.features import BENCHMARK_FLAGS, featurise, verifier_embedder
from finrag.score.verifier.scoring import load_model, read_calibration

# the modules a new claim's features are computed by: their syntax trees are part of the logit cache's key
FEATURE_MODULES = (
    "finrag.score.verifier.features",
    "finrag.score.judges.numeric",
    "finrag.score.claims",
    "finrag.score.numbers",
)


def model_revision(model_dir: Path) -> str:
    """What a new claim's logit depends on besides the claim: the model and calibration files, and the syntax trees
    of the feature code (a reformat or a comment keeps the cache)."""
    import importlib

    h = hashlib.sha256()
    for name in ("model.pkl", "calibration.json"):
        h.update(hashlib.sha256((model_dir / name).read_bytes()).digest())
    for module in FEATURE_MODULES:
        source = Path(importlib.import_module(module).__file__ or "").read_text(encoding="utf-8")
        h.update(sha256_text(ast.dump(ast.parse(source))).encode())
    return h.hexdigest()[:16]


class MemoEncoder:
    """The verifier's bi-encoder with a memory: a sentence seen in an earlier batch is not encoded again (the five
    passages of one question are shared by every answer to it)."""

    def __init__(self, inner):
        self.inner = inner
        self.vectors: dict[str, np.ndarray] = {}

    def embed_passages(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        new = sorted({t for t in texts if t not in self.vectors})
        if new:
            self.vectors.update(zip(new, self.inner.embed_passages(new, progress=progress), strict=True))
        if not texts:
            return np.zeros((0, 384), dtype=np.float64)
        return np.stack([self.vectors[t] for t in texts])


class VerifierJudge(BaseJudge):
    name = "verifier"

    def __init__(
        self,
        model_dir: str = "data/models/verifier",
        crossfit: bool = True,
        default_benchmark: str | None = None,
        cache: str | None = None,
        extra_caches: Sequence[str] = (),
    ):
        self.model_dir = Path(model_dir) if Path(model_dir).is_absolute() else repo_root() / model_dir
        self.cal = read_calibration(self.model_dir)
        self.model = load_model(self.model_dir)
        if default_benchmark is not None and default_benchmark not in self.cal["benchmarks"]:
            raise ValueError(
                f"verifier default_benchmark '{default_benchmark}' has no calibration "
                f"(known: {sorted(self.cal['benchmarks'])})"
            )
        self.default_benchmark = default_benchmark
        self.revision = model_revision(self.model_dir)
        self.cache_path = self._resolve(cache) if cache else None
        # read-only caches first (the service reads the study's and writes its own), then the one written to
        self.logit_memo: dict[str, float] = {}
        for path in [
            *(self._resolve(c) for c in extra_caches),
            *([self.cache_path] if self.cache_path else []),
        ]:
            if path.exists():
                self.logit_memo.update(
                    (r["key"], float(r["logit"]))
                    for r in read_jsonl(path)
                    if r.get("revision") == self.revision
                )
        # the numeric judge as in training (its verdict is a feature): its params come with the model
        self.numeric = NumericJudge(**self.cal.get("numeric_params", {}))
        self._embedder: MemoEncoder | None = None
        oof = self.model_dir / "oof.jsonl"
        self.oof = {r["key"]: r for r in read_jsonl(oof)} if crossfit and oof.exists() else {}
        self.stats = {"out_of_fold": 0, "new_claims": 0, "cached": 0}

    @staticmethod
    def _resolve(path: str) -> Path:
        return Path(path) if Path(path).is_absolute() else repo_root() / path

    def _benchmark(self, claim_id: str) -> str | None:
        """The human benchmark a claim id names ("findver:..."), else `default_benchmark` (may be None)."""
        b = claim_id.split(":", 1)[0]
        return b if b in BENCHMARK_FLAGS and b != "synthetic" else self.default_benchmark

    def _logit_key(self, claim: str, passages: Sequence[str], bench: str) -> str:
        return f"{self.revision}:{bench}:{item_key(claim, list(passages))}"

    def _calibration(self, claim_id: str, rec: dict | None) -> tuple[dict, str | None]:
        """The benchmark's calibration and, for a stored dev claim, its fold (else None: fitted on all)."""
        if rec is not None:
            return self.cal["benchmarks"][rec["benchmark"]], str(rec["fold"])
        b = self._benchmark(claim_id)
        return self.cal["benchmarks"][b if b in self.cal["benchmarks"] else "default"], None

    def logits(
        self, claims: Sequence[str], per: Sequence[Sequence[str]], ids: Sequence[str]
    ) -> list[tuple[float, dict | None]]:
        """(logit, its out-of-fold record or None) for each claim."""
        out: list[tuple[float, dict | None]] = [(0.0, None)] * len(claims)
        todo = []
        for i, (c, ps) in enumerate(zip(claims, per, strict=True)):
            rec = self.oof.get(item_key(c, list(ps)))
            if rec is not None:
                out[i] = (float(rec["logit"]), rec)
                self.stats["out_of_fold"] += 1
            else:
                todo.append(i)
        benches = {i: self._benchmark(ids[i]) or "none" for i in todo}
        keys = {i: self._logit_key(claims[i], per[i], benches[i]) for i in todo}
        for i in todo:
            if keys[i] in self.logit_memo:
                out[i] = (self.logit_memo[keys[i]], None)
                self.stats["cached"] += 1
        todo = [i for i in todo if keys[i] not in self.logit_memo]
        if todo:
            if self._embedder is None:
                self._embedder = MemoEncoder(verifier_embedder(self.cal["max_seq_length"]))
            rows = [(claims[i], list(per[i]), benches[i]) for i in todo]
            x = featurise(rows, self._embedder, self.numeric, self.cal["max_units"], progress=False)
            fresh = {}
            for i, lg in zip(todo, np.asarray(self.model.decision_function(x), dtype=float), strict=True):
                out[i] = (float(lg), None)
                fresh[keys[i]] = float(lg)
                self.stats["new_claims"] += 1
            self.logit_memo.update(fresh)
            if self.cache_path is not None:
                lines = "".join(
                    json.dumps({"key": k, "revision": self.revision, "logit": v}, sort_keys=True) + "\n"
                    for k, v in fresh.items()
                )
                append_locked(self.cache_path, lines.encode("utf-8"))
        return out

    def judge(self, claim: str, passages: Sequence[str], claim_id: str = "") -> ClaimVerdict:
        return self.judge_batch([claim], [list(passages)], [claim_id])[0]

    def judge_batch(self, claims, passages, claim_ids=None) -> list[ClaimVerdict]:
        ids, per = batch_args(claims, passages, claim_ids)
        out = []
        for cid, (lg, rec) in zip(ids, self.logits(list(claims), per, ids), strict=True):
            cal, fold = self._calibration(cid, rec)
            t = cal["threshold_by_fold"][fold] if fold is not None else cal["threshold_all"]
            out.append(ClaimVerdict(
                claim_id=cid, verdict="supported" if lg >= t else "unsupported", judge=self.name,
                detail={"logit": round(lg, 4), "threshold": round(t, 4),
                        "out_of_fold": rec["fold"] if rec else None},
            ))  # fmt: skip
        return out


class StudyJudge(VerifierJudge):
    name = "study"

    def judge_batch(self, claims, passages, claim_ids=None) -> list[ClaimVerdict]:
        ids, per = batch_args(claims, passages, claim_ids)
        out = []
        for cid, c, ps, (lg, rec) in zip(ids, claims, per, self.logits(list(claims), per, ids), strict=True):
            cal, fold = self._calibration(cid, rec)
            model = cal["study_by_fold"][fold] if fold is not None else cal["study_all"]
            nv = rec["numeric"] if rec else self.numeric.judge(c, ps).verdict
            hf = rec["has_figures"] if rec else bool(has_figures(c))
            prob = study_prob(model, study_features(lg, nv, hf))
            verdict: Verdict = "supported" if prob >= model["threshold"] else (
                "contradicted" if nv == "contradicted" else "unsupported")  # fmt: skip
            out.append(ClaimVerdict(
                claim_id=cid, verdict=verdict, judge=self.name,
                detail={"prob": round(prob, 4), "threshold": round(model["threshold"], 4), "logit": round(lg, 4),
                        "numeric": nv, "out_of_fold": rec["fold"] if rec else None},
            ))  # fmt: skip
        return out
