"""Judge-vs-human and judge-vs-judge agreement: the statistics against scikit-learn, grouping, sampling."""

from __future__ import annotations

import math
from functools import partial

import pytest
from sklearn.metrics import cohen_kappa_score

from finrag.core import stats
from finrag.core.contracts import ClaimVerdict, LabelledClaim
from finrag.ingest.human_claims import Loaded, load_findver
from finrag.score.judges.base import BaseJudge
from finrag.score.judges.numeric import NumericJudge
from finrag.trust.judge_agreement import (
    agreement_sample,
    ai_vs_ai,
    evaluate_judge_on,
    judge_items,
    sample_groups,
    summary_table,
)


@pytest.fixture(autouse=True)
def fewer_resamples(monkeypatch):
    """100 bootstrap resamples instead of 2000: the intervals are still checked, in seconds not minutes."""
    monkeypatch.setattr(stats, "kappa_bootstrap", partial(stats.kappa_bootstrap, n_resamples=100))


class ScriptedJudge(BaseJudge):
    """Returns the verdict written after '->' in the claim text (a judge whose answers the test controls)."""

    name = "scripted"

    def judge(self, claim, passages, claim_id=""):
        return ClaimVerdict(claim_id=claim_id, verdict=claim.split("->")[1].strip(), judge=self.name)


def _item(k, human, judged, bench="b", subset="s", group=""):
    return LabelledClaim(
        item_id=f"{bench}{k}",
        benchmark=bench,
        subset=subset,
        claim=f"claim {k} -> {judged}",
        passages=["p"],
        human=human,
        group_id=group,
    )


HUMAN = ["supported"] * 6 + ["unsupported"] * 4 + ["contradicted"] * 2
JUDGED = (
    ["supported"] * 5
    + ["unsupported"]
    + ["unsupported"] * 2
    + ["supported"] * 2
    + ["contradicted", "unsupported"]
)


def test_kappa_matches_scikit_learn_binary_and_three_class():
    items = [
        _item(k, h, j, bench="findver", subset="ab"[k % 2])
        for k, (h, j) in enumerate(zip(HUMAN, JUDGED, strict=True))
    ]
    res = evaluate_judge_on(items, ScriptedJudge(), progress=False)
    b = res["benchmarks"]["findver"]
    hb = ["supported" if h == "supported" else "no" for h in HUMAN]
    jb = ["supported" if j == "supported" else "no" for j in JUDGED]
    assert b["binary"]["kappa"] == pytest.approx(cohen_kappa_score(hb, jb))
    assert b["three_class"]["kappa"] == pytest.approx(cohen_kappa_score(HUMAN, JUDGED))
    assert b["binary"]["n"] == 12
    lo, hi = b["binary"]["kappa_ci"]
    assert lo <= b["binary"]["kappa"] <= hi
    assert b["binary"]["raw_agreement"] == pytest.approx(
        sum(x == y for x, y in zip(hb, jb, strict=True)) / 12
    )
    # rows human, columns judge: [supported, not_supported]
    assert b["binary"]["confusion_matrix"] == [[5, 1], [2, 4]]
    assert set(b["subsets"]) == {"a", "b"} and b["subsets"]["a"]["binary"]["n"] == 6
    assert [r["judge"] for r in res["records"]] == JUDGED
    rows = summary_table(res)
    assert {(r["subset"], r["level"]) for r in rows} == {
        ("all", "binary"),
        ("all", "three_class"),
        ("a", "binary"),
        ("b", "binary"),
    }


def test_answer_level_agreement_groups_claims():
    items = [
        _item(0, "supported", "supported", "expertqa", group="g1"),
        _item(1, "supported", "supported", "expertqa", group="g1"),
        _item(2, "supported", "unsupported", "expertqa", group="g2"),
        _item(3, "unsupported", "unsupported", "expertqa", group="g2"),
        _item(4, "unsupported", "supported", "expertqa", group="g3"),
    ]
    res = evaluate_judge_on(items, ScriptedJudge(), progress=False)
    ans = res["benchmarks"]["expertqa"]["answer_level"]
    assert ans["n"] == 3 and ans["n_claims"] == 5
    # answers: g1 human S judge S; g2 human N judge N; g3 human N judge S
    assert ans["confusion_matrix"] == [[1, 0], [1, 1]]
    assert "three_class" not in res["benchmarks"]["expertqa"]


def test_ai_vs_ai_pairs_by_key_or_position():
    a = {"c1": "supported", "c2": "unsupported", "c3": "contradicted", "x": "supported"}
    b = {"c1": "supported", "c2": "contradicted", "c3": "contradicted"}
    res = ai_vs_ai(a, b)
    assert res["binary"]["n"] == 3 and res["binary"]["raw_agreement"] == 1.0
    assert res["three_class"]["kappa"] == pytest.approx(
        cohen_kappa_score(
            ["supported", "unsupported", "contradicted"], ["supported", "contradicted", "contradicted"]
        )
    )
    vs = [ClaimVerdict(claim_id="c", verdict=v, judge="j") for v in ("supported", "unsupported")]
    assert ai_vs_ai(vs, ["supported", "supported"])["binary"]["raw_agreement"] == 0.5
    with pytest.raises(ValueError, match="pair them"):
        ai_vs_ai(["supported"], ["supported", "unsupported"])


def test_sampling_keeps_answers_whole_and_is_reproducible():
    items = [_item(k, "supported", "supported", "expertqa", group=f"g{k // 3}") for k in range(30)]
    s = sample_groups(items, 7, seed=3)
    assert len(s) == 9  # three whole answers of three claims
    assert all(sum(i.group_id == g for i in s) == 3 for g in {i.group_id for i in s})
    assert [i.item_id for i in s] == [i.item_id for i in sample_groups(items, 7, seed=3)]
    loaded = {
        "expertqa": Loaded("expertqa", items=items, n_source=30),
        "attributionbench": Loaded(
            "attributionbench", items=[_item(k, "supported", "x", "attributionbench") for k in range(50)]
        ),
    }
    sample = agreement_sample(loaded, {"expertqa": 7, "attributionbench": 20}, seed=3)
    assert sum(i.benchmark == "attributionbench" for i in sample) == 20
    assert sum(i.benchmark == "expertqa" for i in sample) == 9


def test_length_mismatch_is_an_error():
    items = [_item(0, "supported", "supported")]
    with pytest.raises(ValueError, match="1 items but 0 verdicts"):
        evaluate_judge_on(items, ScriptedJudge(), verdicts=[])


def test_numeric_judge_on_all_findver_numeric_statements(mirror):
    items = [i for i in load_findver(mirror).items if i.subset == "numeric"]
    verdicts = judge_items(items, NumericJudge(), progress=False)
    res = evaluate_judge_on(items, NumericJudge(), verdicts=verdicts)
    b = res["benchmarks"]["findver"]["binary"]
    assert b["n"] == 136
    assert -1.0 <= b["kappa"] <= 1.0 and not math.isnan(b["kappa"])
    assert b["kappa_ci"][0] <= b["kappa"] <= b["kappa_ci"][1]
    assert sum(map(sum, b["confusion_matrix"])) == 136
    # every verdict says how it was reached: figures checked, or the stated fallback
    assert {v.detail["method"] for v in verdicts} <= {
        "numeric",
        "overlap_fallback",
        "years_only+overlap_fallback",
    }


def test_model_judge_sample_is_nested_and_stratified():
    """Raising a model judge's sample size keeps every earlier item (so recorded calls are reused), and each
    prefix keeps the label balance of the benchmark."""
    from finrag.trust.judge_agreement import model_judge_sample

    items = [_item(i, "supported" if i % 4 else "unsupported", "supported") for i in range(200)]
    items += [
        _item(1000 + i, "supported", "supported", bench="expertqa", group=f"g{i // 3}") for i in range(60)
    ]
    small = model_judge_sample(items, {"b": 20, "expertqa": 7}, seed=3)
    large = model_judge_sample(items, {"b": 80, "expertqa": 30}, seed=3)
    ids_small, ids_large = {i.item_id for i in small}, {i.item_id for i in large}
    assert ids_small <= ids_large
    small_b = [i for i in small if i.benchmark == "b"]
    assert len(small_b) == 20 and sum(i.human == "unsupported" for i in small_b) == 5
    groups = {i.group_id for i in small if i.benchmark == "expertqa"}
    assert len([i for i in small if i.benchmark == "expertqa"]) == 3 * len(groups) >= 7  # whole answers


def test_a_run_judges_its_declared_claims_every_dev_claim_or_the_shared_sample():
    """`claims: all` takes every loaded claim (beyond the agreement sample), `sample_sizes` a nested prefix of the
    agreement sample, and a run that declares neither the sample shared by the model judges."""
    from finrag.trust.judge_agreement import agreement_sample, model_judge_sample, run_claims

    loaded = {
        "b": Loaded(
            "b", [_item(i, "supported" if i % 4 else "unsupported", "supported") for i in range(120)]
        ),
        "a": Loaded(
            "a",
            [_item(i, "supported" if i % 3 else "unsupported", "supported", bench="a") for i in range(50)],
        ),
    }
    sample = agreement_sample(loaded, sizes={"a": 40, "b": 60}, seed=3)
    shared = model_judge_sample(sample, {"a": 20, "b": 30}, seed=3)
    every = run_claims({"claims": "all"}, shared, sample, loaded, seed=3)
    assert [i.item_id for i in every] == [i.item_id for i in loaded["a"].items + loaded["b"].items]
    smaller = run_claims({"sample_sizes": {"a": 10, "b": 10}}, shared, sample, loaded, seed=3)
    assert len(smaller) == 20 and {i.item_id for i in smaller} <= {i.item_id for i in shared}
    assert run_claims({}, shared, sample, loaded, seed=3) == shared


def test_a_sampled_rerun_is_found_by_its_decoding_not_its_name():
    from finrag.trust.judge_agreement import sampled_rerun_of

    greedy = {"judge": "llm", "backend": "m", "params": {"batch_size": 1}, "decoding": {"temperature": 0.0}}
    runs = {
        "g": greedy,
        "again": {**greedy, "params": {"batch_size": 1, "replicate": 1}, "decoding": {"temperature": 0.7}},
        "other_model_resample": {**greedy, "backend": "n", "decoding": {"temperature": 0.7}},
        "lp": {"judge": "llm_logprob", "backend": "m", "params": {"top_logprobs": 20}},
    }
    assert sampled_rerun_of("again", runs) == "g"
    assert sampled_rerun_of("other_model_resample", runs) is None  # no greedy run on its backend
    assert sampled_rerun_of("g", runs) is None and sampled_rerun_of("lp", runs) is None


def test_ai_pairs_by_benchmark_pairs_by_item_id():
    from finrag.trust.judge_agreement import ai_pairs_by_benchmark

    rec_a = [{"item_id": f"x{i}", "benchmark": "b" if i < 6 else "c", "judge": v}
             for i, v in enumerate(["supported", "unsupported"] * 5)]  # fmt: skip
    rec_b = [dict(r) for r in reversed(rec_a[:8])]  # other order, two items missing
    rec_b[0]["judge"] = "contradicted"
    res = {r["benchmark"]: r for r in ai_pairs_by_benchmark({"a": rec_a, "b": rec_b}, "a", "b", seed=1)}
    assert set(res) == {"b", "c", "all"}
    assert res["all"]["binary"]["n"] == 8 and res["b"]["binary"]["n"] == 6
    assert res["b"]["binary"]["raw_agreement"] == 1.0 and res["all"]["three_class"]["raw_agreement"] == 7 / 8


def test_a_claim_two_benchmarks_share_counts_once_when_they_are_pooled():
    from finrag.trust.judge_agreement import ai_pairs_by_benchmark, claim_key

    rec = [
        {
            "item_id": "e1",
            "benchmark": "expertqa",
            "judge": "supported",
            "claim_key": claim_key("Claim  One."),
        },
        {
            "item_id": "a1",
            "benchmark": "attributionbench",
            "judge": "supported",
            "claim_key": claim_key("claim one."),
        },
        {
            "item_id": "a2",
            "benchmark": "attributionbench",
            "judge": "unsupported",
            "claim_key": claim_key("two"),
        },
        {"item_id": "e2", "benchmark": "expertqa", "judge": "unsupported", "claim_key": claim_key("three")},
    ]
    res = {r["benchmark"]: r for r in ai_pairs_by_benchmark({"a": rec, "b": rec}, "a", "b", seed=1)}
    assert res["attributionbench"]["binary"]["n"] == 2 and res["expertqa"]["binary"]["n"] == 2
    assert res["all"]["binary"]["n"] == 3  # "claim one." is ExpertQA's claim again


def test_parse_failures_are_counted_per_benchmark_and_flagged_per_item():
    items = [_item(i, "supported", "unsupported", bench="b") for i in range(3)]
    verdicts = [
        ClaimVerdict(claim_id=it.item_id, verdict="unsupported", judge="x", detail={"parse_failed": i == 0})
        for i, it in enumerate(items)
    ]
    out = evaluate_judge_on(items, ScriptedJudge(), verdicts=verdicts, seed=1, progress=False)
    assert out["benchmarks"]["b"]["parse_failures"] == 1
    assert [r["parse_failed"] for r in out["records"]] == [True, False, False]


def test_record_interleaved_asks_every_judge_about_a_claim_before_the_next():
    """Recording goes claim by claim across judges (so a judge and its resample share the claim's KV-cache
    prefix); a judge is asked only about the claims of its own (possibly smaller) sample, each once."""
    from finrag.trust.judge_agreement import record_interleaved

    asked: list[tuple[str, str]] = []

    class Spy:
        def __init__(self, name):
            self.name = name

        def judge_batch(self, claims, passages, ids):
            assert len(claims) == len(passages) == len(ids) == 1
            asked.append((self.name, ids[0]))
            return [ClaimVerdict(claim_id=ids[0], verdict="supported", judge=self.name)]

    items = [
        LabelledClaim(item_id=f"i{k}", benchmark="b", claim=f"c{k}", passages=["p"], human="supported")
        for k in range(4)
    ]
    n = record_interleaved({"a": (items, Spy("a")), "b": (items[:2], Spy("b"))}, progress=False)
    assert n == 4
    assert asked == [("a", "i0"), ("b", "i0"), ("a", "i1"), ("b", "i1"), ("a", "i2"), ("a", "i3")]


def test_record_model_judges_takes_the_benchmarks_in_turn_for_the_logprob_judge():
    """The log-probability judge is recorded round-robin over the benchmarks (a stopped recording leaves an equal
    prefix of each); the one-call LLM judge claim by claim; a batched LLM judge is left to the replay pass."""
    from finrag.trust.judge_agreement import record_model_judges

    asked: list[tuple[str, str]] = []

    class Spy:
        def __init__(self, name):
            self.name = name

        def judge_batch(self, claims, passages, ids):
            asked.extend((self.name, i) for i in ids)
            return [ClaimVerdict(claim_id=i, verdict="supported", judge=self.name) for i in ids]

    items = [
        LabelledClaim(item_id=f"{b}{k}", benchmark=b, claim="c", passages=["p"], human="supported")
        for b in ("x", "y")
        for k in range(2)
    ]
    runs = {
        "lp": {"judge": "llm_logprob"},
        "one": {"judge": "llm", "params": {"batch_size": 1}},
        "batched": {"judge": "llm", "params": {"batch_size": 4}},
    }
    record_model_judges({name: items for name in runs}, runs, Spy, progress=False)
    assert [i for n, i in asked if n == "lp"] == ["x0", "y0", "x1", "y1"]
    assert [i for n, i in asked if n == "one"] == ["x0", "x1", "y0", "y1"]
    assert not [i for n, i in asked if n == "batched"]


def test_replayable_items_names_the_claims_that_would_need_a_model_call():
    from finrag.llm.cache import CacheMiss
    from finrag.trust.judge_agreement import replayable_items

    class HalfCached:
        def judge_batch(self, claims, passages, ids):
            if ids[0].endswith(("1", "3")):
                raise CacheMiss(f"cache miss (replay mode): item={ids[0]}")
            return [ClaimVerdict(claim_id=ids[0], verdict="supported", judge="x")]

    items = [
        LabelledClaim(item_id=f"i{k}", benchmark="b", claim="c", passages=["p"], human="supported")
        for k in range(4)
    ]
    held, missing = replayable_items(items, HalfCached())
    assert [it.item_id for it in held] == ["i0", "i2"] and missing == ["i1", "i3"]


def test_the_transfer_rule_admits_by_service_and_cost_then_takes_the_best_worst_case():
    from finrag.trust.judge_agreement import select_judge_by_transfer, transfer_kappas

    loso = {
        "a": {"k_num": {"kappa": 0.30}, "k_ver": {"kappa": 0.50}, "k_llm": {"kappa": 0.9}},
        "b": {"k_num": {"kappa": 0.20}, "k_ver": {"kappa": 0.10}, "k_llm": {"kappa": 0.9}},
    }
    kappas = transfer_kappas(loso, {"numeric": "k_num", "verifier": "k_ver", "llm": "k_llm"}, ["a", "b"])
    assert kappas["verifier"] == {"a": 0.5, "b": 0.1}
    out = select_judge_by_transfer(
        kappas, {"numeric": 0.01, "verifier": 0.5, "llm": 30.0}, ["numeric", "verifier", "llm"], 2.0,
        ["numeric", "verifier", "llm"],
    )  # fmt: skip
    assert out["selected"] == "numeric"  # 0.20 worst case beats the verifier's 0.10
    assert "cost" in out["not_admitted"]["llm"]  # the best judge everywhere, but over the CPU bound
    out = select_judge_by_transfer(kappas, {"numeric": 0.01, "verifier": 0.5}, ["verifier", "numeric"], 2.0,
                                   ["verifier"])  # fmt: skip
    assert out["selected"] == "verifier" and "service" in out["not_admitted"]["numeric"]
    with pytest.raises(ValueError, match="no candidate admitted"):
        select_judge_by_transfer(kappas, {}, ["numeric"], 2.0, ["numeric"])


def test_every_pair_among_the_judges_is_added_once_and_the_matrix_reads_the_summary(tmp_path):
    from finrag.report.forest import agreement_matrix, kappa_matrix
    from finrag.trust.params import ModelJudges

    mj = ModelJudges(sample_sizes={}, cache_dir="c", runs={}, pairs=[("b", "a")], pairs_among=["a", "b", "c"])
    assert mj.all_pairs() == [("b", "a"), ("a", "c"), ("b", "c")]  # (a, b) is listed already, as (b, a)
    row = {"subset": "all", "level": "binary"}
    summary = [
        {**row, "pair": "human vs a", "benchmark": "x", "kappa": 0.3},
        {**row, "pair": "a vs b", "benchmark": "x", "kappa": 0.5},
        {**row, "pair": "a vs b", "benchmark": "all", "kappa": 0.9},  # pooled: not a benchmark's cell
        {**row, "pair": "human vs b", "benchmark": "x", "kappa": None},
        {**row, "level": "three_class", "pair": "human vs b", "benchmark": "x", "kappa": 0.7},
    ]
    m = kappa_matrix(summary, ["a", "b"], "x")
    assert m == [[1.0, 0.3, None], [0.3, 1.0, 0.5], [None, 0.5, 1.0]]
    agreement_matrix(summary, ["a", "b"], tmp_path / "m.png")
    assert (tmp_path / "m.png").stat().st_size > 1000
