"""The trained judges: `verifier` (the trained classifier alone, cut at a calibrated threshold) and `study` (verifier
+ numeric checks, combined by a cross-fitted logistic regression).

A claim the dev sets hold (found by the hash of its text and passages) is judged out of fold: by the fold model
that never saw its group and the threshold fitted without its fold, so agreement on the dev sets is honest.
Any other claim gets the model fitted on all pairs and the calibration fitted on all dev claims of its benchmark
(read from the claim id's prefix, "findver:..." as the agreement loaders write it; "default" otherwise)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from finrag.core.config import repo_root
from finrag.core.contracts import ClaimVerdict, Verdict
from finrag.core.io import read_jsonl
from finrag.score.judges.base import BaseJudge, batch_args
from finrag.score.judges.numeric import NumericJudge, has_figures
from finrag.score.verifier.build import item_key
from finrag.score.verifier.calibrate import study_features, study_prob
from finrag.score.verifier.features import BENCHMARK_FLAGS, Float64Encoder, featurise, verifier_embedder
from finrag.score.verifier.scoring import load_model, read_calibration


class VerifierJudge(BaseJudge):
    name = "verifier"

    def __init__(self, model_dir: str = "data/models/verifier", crossfit: bool = True):
        self.model_dir = Path(model_dir) if Path(model_dir).is_absolute() else repo_root() / model_dir
        self.cal = read_calibration(self.model_dir)
        self.model = load_model(self.model_dir)
        # the numeric judge as in training (its verdict is a feature): its params come with the model
        self.numeric = NumericJudge(**self.cal.get("numeric_params", {}))
        self._embedder: Float64Encoder | None = None
        oof = self.model_dir / "oof.jsonl"
        self.oof = {r["key"]: r for r in read_jsonl(oof)} if crossfit and oof.exists() else {}
        self.stats = {"out_of_fold": 0, "new_claims": 0}

    @staticmethod
    def _benchmark(claim_id: str) -> str | None:
        """The human benchmark a claim id names ("findver:..."), or None."""
        b = claim_id.split(":", 1)[0]
        return b if b in BENCHMARK_FLAGS and b != "synthetic" else None

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
        if todo:
            if self._embedder is None:
                self._embedder = verifier_embedder(self.cal["max_seq_length"])
            rows = [(claims[i], list(per[i]), self._benchmark(ids[i]) or "none") for i in todo]
            x = featurise(rows, self._embedder, self.numeric, self.cal["max_units"], progress=False)
            for i, lg in zip(todo, np.asarray(self.model.decision_function(x), dtype=float), strict=True):
                out[i] = (float(lg), None)
                self.stats["new_claims"] += 1
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
