"""The report's view layer, branch by branch: every sentence choice, verdict and row selection is made in
Python from results/, and a missing file or key fails the section with one line naming the file."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from finrag.report import render
from finrag.report.views import VIEWS, MissingResults, Results
from finrag.report.views import readme as rv
from finrag.report.views import sections as sv

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "src" / "finrag" / "report" / "templates"


@pytest.fixture(scope="module")
def committed() -> dict:
    data = render.load_results(ROOT / "results")
    data["planned_families"] = render.planned_families(ROOT)
    return data


@pytest.fixture
def data(committed) -> dict:
    return copy.deepcopy(committed)


def R(data: dict) -> Results:
    return Results.of(copy.deepcopy(data))


# ------------------------------------------------------------------------------------------------ the layer


def test_every_section_has_a_view_and_a_template():
    for names in render.SECTIONS.values():
        for name in names:
            assert name in VIEWS, name
            assert (TEMPLATES / f"{name}.md.j2").is_file(), name


def test_every_view_renders_from_the_committed_results(committed):
    for name in VIEWS:
        assert render.render_section(name, committed).strip(), name


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_a_missing_results_file_fails_every_view_with_one_line_naming_it(committed, name):
    for stem in sorted(committed):
        if stem == "planned_families":
            continue
        data = {k: v for k, v in committed.items() if k != stem}
        try:
            VIEWS[name](Results.of(data))
        except MissingResults as exc:
            assert "\n" not in str(exc) and "results/" in str(exc) and stem in str(exc)
            with pytest.raises(render.RenderError, match=f"section '{name}'.*{stem}"):
                render.render_section(name, data)
            return
    pytest.fail(f"view {name} reads no results file")


def test_a_missing_key_names_the_file_and_the_key(data):
    del data["eval_main"]["final_system"]
    with pytest.raises(MissingResults, match=r"results/metrics/eval_main.json has no `final_system`"):
        VIEWS["findings"](R(data))


def test_the_missing_top_level_file_is_named_where_it_lives(data):
    del data["selected_setup"]
    with pytest.raises(MissingResults, match=r"results/selected_setup.json is missing \(written by stage"):
        VIEWS["retrieval"](R(data))


def test_templates_hold_no_conditional_and_no_append():
    import re

    for p in TEMPLATES.glob("*.j2"):
        text = p.read_text(encoding="utf-8")
        tags = re.findall(r"\{%-?\s*(.*?)\s*-?%\}", text, re.S)
        assert not [t for t in tags if re.match(r"(if|elif)\b", t)], p.name
        assert not [t for t in tags if t.startswith("for") and re.search(r"\bif\b", t)], p.name
        assert not [e for e in re.findall(r"\{\{(.*?)\}\}", text, re.S) if re.search(r"\bif\b", e)], p.name
        assert ".append(" not in text, p.name
        assert not [t for t in tags if "is defined" in t or "default(" in t], p.name


# ------------------------------------------------------------------------------------------------ helpers


@pytest.mark.parametrize(
    ("ci", "side"),
    [
        ([0.1, 0.2], "above"),
        ([-0.2, -0.1], "below"),
        ([-0.1, 0.1], "spans"),
        (None, "spans"),
        ([None, None], "spans"),
    ],
)
def test_interval_side(ci, side):
    assert sv.interval_side(ci) == side


def test_top_flag_and_or_none():
    assert sv.top_flag({"a": 1, "b": 3}, 4) == " (most: b, 3)"
    assert sv.top_flag({"a": 0}, 0) == ""
    assert sv.or_none([]) == "none" and sv.or_none(["x", "y"], "; ") == "x; y"


def test_final_pick_earlier_and_provisional():
    e = {
        "final_system": {"candidates_missing": ["x"]},
        "final_system_earlier_rule": {"system": {"series": "old"}, "value": 0.1, "ci": [0.0, 0.2]},
    }
    earlier, provisional = sv.final_pick(e)
    assert "was **old**" in earlier and "scored yet: x" in provisional
    assert sv.final_pick({"final_system": {}}) == ("", "")


def test_headline_descriptive_or_not(data):
    assert "descriptive only" in VIEWS["headline"](R(data)).judge_verdict
    data["eval_main"]["judge_trust"]["descriptive_only"] = False
    assert "are findings" in VIEWS["headline"](R(data)).judge_verdict


def test_generation_status(data):
    r = R(data)
    assert "not complete yet" in sv.generation_status(Results(r.data, ["qwen", "zz"]))
    assert "not complete yet" not in sv.generation_status(Results(r.data, []))
    with pytest.raises(MissingResults):
        sv.generation_status(Results({k: v for k, v in r.data.items() if not k.startswith("generation_")}))


def test_system_label():
    assert "no language model" in sv.system_label({"series": "e", "backend": "extractive"})
    assert sv.system_label({"series": "q", "backend": "llamacpp", "generator": "g"}) == "**q** (`g`)"


def test_ingest_dropout_and_damage(data):
    v = VIEWS["ingest"](R(data))
    assert v.dropout and v.missing_docs
    data["ingest"]["questions_unavailable"] = []
    data["ingest"]["parse_damaged"] = [{"file": "f", "page_ranges": "", "reasons": {"a": 2, "b": 0}}]
    v = VIEWS["ingest"](R(data))
    assert v.dropout == "" and v.damaged == [{"file": "f", "pages": "whole file", "reasons": "a (2); b"}]


def test_by_type_tables_and_reranker_note(data):
    g = data["retrieval_grid"]
    assert sv.by_type_tables(g)
    g["by_question_type"] = []
    g["by_reasoning"] = []
    assert sv.by_type_tables(g) == []
    rr = data["reranker"]
    rr["heldout"]["trained_cross_encoder"]["mrr@10"] = 0.1
    rr["heldout"]["baseline_minilm_biencoder"]["mrr@10"] = 0.2
    assert "**worse**" in sv.reranker_note(rr)
    rr["heldout"]["trained_cross_encoder"]["mrr@10"] = 0.3
    assert sv.reranker_note(rr) == ""


def test_scoring_sentences():
    assert "went to the LLM grader" in sv.llm_grader_sentence(
        {"llm_grader": {"model": "m", "template_id": "t", "asked": 1, "unreadable": 0}}
    )
    assert "is off in this study" in sv.llm_grader_sentence({})
    fs = {"ci": [0.1, 0.3], "ranking": [{}, {"series": "b", "value": 0.15, "ci": [0.05, 0.2]}]}
    assert "overlaps the runner-up" in sv.overlap_sentence(fs)
    fs["ranking"][1]["ci"] = [0.0, 0.05]
    assert sv.overlap_sentence(fs) == ""
    assert sv.overlap_sentence({"ci": [0, 1], "ranking": []}) == ""
    det = {"no_claim": 5, "claims_per_answer": 1.0}
    assert "times as many" in sv.splitter_note(
        {"splitters": [det, {"no_claim": 2, "claims_per_answer": 2.0}]}
    )
    assert "times as many" not in sv.splitter_note(
        {"splitters": [det, {"no_claim": 2, "claims_per_answer": 0.5}]}
    )
    assert sv.splitter_note({"splitters": [det, {"no_claim": 9, "claims_per_answer": 2.0}]}) == ""
    c = {"generator": "g", "degenerate_resamples": 3, "ci": [0.1, 0.2], "p_value": 0.5}
    assert "left out of the interval" in sv.correlation_note(c)
    assert "rho alone" in sv.correlation_note({**c, "ci": [None, None]})
    assert sv.earlier_pick_sentence({}) == ""
    assert "**old**" in sv.earlier_pick_sentence(
        {"final_system_earlier_rule": {"system": {"series": "old"}, "value": 0.1, "ci": [0, 0.2]}}
    )
    assert sv.llm_same({}) == "" and "LLM judge" in sv.llm_same(
        {"llm": {"raw_agreement": 0.5, "kappa": 0.1, "kappa_ci": [0, 0.2]}}
    )
    assert sv.share_or_dash(None) == "—" and sv.with_defaults({}, ("n",)) == {"n": "n/a"}
    assert sv.mean_sd({"mean": 0.5, "sd": None}) == "50.0%" and "±" in sv.mean_sd({"mean": 0.5, "sd": 0.1})


def test_scoring_view_branches(data):
    v = VIEWS["scoring"](R(data))
    assert v.provisional and v.extractive == "" and v.only_extractive == ""
    fs = data["eval_main"]["final_system"]
    fs["candidates_missing"] = []
    fs["system"]["backend"] = "extractive"
    for run in data["eval_main"]["runs"]:
        run["backend"] = "extractive"
    data["eval_main"]["splitters"]["llm_judged"] = True
    data["eval_main"]["llm_judge"]["claims"]["constant_rater"] = "llm"
    v = VIEWS["scoring"](R(data))
    assert v.provisional == "" and "no language model" in v.extractive and v.only_extractive
    assert v.splitter_judged == "both judges judge both sets of claims" and "kappa is 0" in v.constant_rater
    data["generation_qwen"]["decoding"]["temperature"] = 0.7
    assert "(greedy)" not in VIEWS["scoring"](R(data)).decoding


def test_trust_descriptive_or_not(data):
    assert "descriptive only" in sv.trust_of(R(data)).descriptive
    data["eval_main"]["judge_trust"]["descriptive_only"] = False
    assert sv.trust_of(R(data)).descriptive == ""


def test_condition_sentences(data):
    c = data["conditions"]
    assert sv.level3_rank(data["retrieval_finance_dense"]["setups"]).startswith(", and it is the setup")
    assert sv.level3_rank([]) == ""
    c["multiple_tests"]["smallest_p_holm"] = 0.2
    assert "survives the correction" in sv.holm_sentence(c)
    c["multiple_tests"]["smallest_p_holm"] = 0.01
    assert sv.holm_sentence(c) == ""
    assert sv.draw_sentence(c).startswith("The draw is a small sample")
    assert sv.draw_sentence({"dose": {}}) == ""
    assert "1.5B answers cost" in sv.size_cost(c)
    c["costs"]["runs"] = {}
    assert sv.size_cost(c) == ""
    assert sv.share_text({"value": None, "n": 3}) == "n/a (n=3)"
    assert sv.share_text({"value": 0.5, "k": 1, "n": 2, "ci": [0, 1]}).endswith("(1/2)")
    assert sv.share_text({"value": 0.5, "n": 2, "ci": [0, 1]}).endswith("(n=2)")
    assert sv.diff_text({"difference": None}) == "n/a" and sv.p_text({"p": None}) == "n/a"


@pytest.mark.parametrize(
    ("ci", "verdict"),
    [([0.1, 0.2], "holds"), ([-0.2, -0.1], "does not hold"), ([-0.1, 0.1], "cannot be told")],
)
def test_the_seed_lesson_needs_every_pair_and_the_independent_pairs_to_agree(ci, verdict):
    s = {"every_pair": {"rows": 3, "ci": ci}, "independent_pairs": {"rows": 2, "ci": ci}, "left_out": []}
    lesson = sv.lesson_of(s)
    assert lesson.verdict == verdict and "no row left out" in lesson.left_out
    s["every_pair"]["ci"] = [-1, 1]  # the two readings disagree: no direction
    lesson = sv.lesson_of(s)
    assert lesson.verdict == "cannot be told"
    assert ("disagree" in lesson.verdict_sentence) == (verdict != "cannot be told")
    s["independent_pairs"]["rows"] = 0
    s["left_out"] = [1]
    lesson = sv.lesson_of(s)
    assert (
        lesson.verdict == "cannot be told" and lesson.independent is None and lesson.left_out.startswith("1 ")
    )
    assert sv.lesson_row("x", None) == ""


def test_agreement_sentences(data):
    runs = data["judge_agreement"]["model_judges"]["runs"]
    assert "every dev claim" in sv.sample_scope(runs, 900)
    short = {"s": {"benchmarks": {"a": {"binary": {"n": 1}}}}}
    assert "first part of it" in sv.sample_scope(short, 10) and sv.sample_scope({}, 10) == ")."
    assert "A sampled re-run exists" in sv.resampled_sentence(runs)
    assert sv.resampled_sentence({}) == " No sampled re-run is recorded."
    cal = {"calibration": {"folds": 2, "threshold_by_fold": {"0": 0.1}, "threshold_all": 0.1}, "model": "m"}
    assert "is the calibrated LLM judge" in sv.calibration_paragraph({"a": cal})
    assert "are calibrated LLM judges" in sv.calibration_paragraph({"a": cal, "b": cal})
    assert sv.calibration_paragraph({}) == ""
    assert "carries this kappa" in sv.scored_by(R(data), data["eval_main"]["judge_trust"]["judge"])
    assert "not done yet" in sv.scored_by(R(data), "other")


def test_agreement_view_own_labels_and_constant_raters(data):
    v = VIEWS["agreement"](R(data))
    assert v.no_own_labels and v.human_rows and v.ai_rows
    data["judge_agreement"]["loaded"]["finrag"]["n_items"] = 5
    data["judge_agreement"]["model_judges"].pop("pairs_drawn")
    data["judge_agreement"]["summary"][0]["constant_rater"] = "second"
    v = VIEWS["agreement"](R(data))
    assert v.no_own_labels == "" and v.ai_scope == "every pair measured" and v.constant


def test_predictions_rows(data):
    p = data["predictions"]["predictions"][0]
    p["pending_because"] = "no run"
    p["caveats"] = [{"date": "d", "text": "t"}]
    v = VIEWS["predictions"](R(data))
    assert v.rows[0]["status"].endswith(": no run (caveat below)") and ("P01", "d", "t") in v.caveats


def test_synthetic_in_sample(data):
    data["synthetic_study"]["abstention"]["threshold_source"] = "youden_in_sample"
    assert "optimistic" in VIEWS["synthetic"](R(data)).in_sample
    data["synthetic_study"]["abstention"]["threshold_source"] = "declared"
    assert VIEWS["synthetic"](R(data)).in_sample == ""


def test_replay_and_serve_choices(data):
    assert "CPU flags not recorded" in sv.machine_text({"commit": "a" * 12, "machine": {"cpus": 2}})
    assert "none of note" in sv.machine_text({"commit": "a", "machine": {"cpus": 2, "cpu_flags": []}})
    data["replay_time"]["byte_identical"] = False
    data["replay_time"]["changed"] = ["x"]
    assert VIEWS["replay"](R(data)).identical == "no: x"
    v = VIEWS["serve"](R(data))
    assert "small local model" in v.backend_note and "fallback" in v.search
    data["eval_main"]["final_system"]["system"]["backend"] = "extractive"
    data["serve_load"]["summary"]["meets_rps_goal"] = False
    data["serve_load"]["live"]["search"]["fallback"] = None
    v = VIEWS["serve"](R(data))
    assert "(no language model)" in v.backend_note and v.rps_goal == "**no**" and "fallback" not in v.search


# ------------------------------------------------------------------------------------------------ README views


def test_every_finding_names_its_results_file(committed):
    for f in VIEWS["findings"](R(committed)).findings:
        assert f.source.startswith("`results/") and f.source.endswith(".json`")
        assert (ROOT / f.source.strip("`")).is_file()


def test_final_finding_provisional_and_earlier(data):
    assert "Provisional" in rv.final_finding(R(data)).headline
    data["eval_main"]["final_system"]["candidates_missing"] = []
    data["eval_main"].pop("final_system_earlier_rule")
    h = rv.final_finding(R(data)).headline
    assert "Provisional" not in h and "first-round grading" not in h


def test_size_finding_sides(data):
    name, _ = rv.size_row(R(data))
    assert "@2" in name and "oracle" in name  # the latest prompt version's pair, given the evidence
    d = data["conditions"]["model_size"][name]["metrics"]["correct"]["large_minus_small"]
    d.update(ci=[0.05, 0.3], p_holm=0.01)
    assert rv.size_finding(R(data)).headline.startswith("**The larger model answers correctly more often**")
    d["p_holm"] = 0.5
    assert "many tests are counted" in rv.size_finding(R(data)).headline
    d["ci"] = [-0.3, -0.1]
    assert "less often" in rv.size_finding(R(data)).headline
    d["ci"] = [-0.1, 0.1]
    assert "not shown" in rv.size_finding(R(data)).headline
    data["conditions"]["model_size"] = {}
    with pytest.raises(MissingResults, match="conditions.json has no model_size rows"):
        rv.size_finding(R(data))


def test_judge_and_lesson_findings(data):
    assert "descriptive only" in rv.judge_finding(R(data)).headline
    data["eval_main"]["judge_trust"]["descriptive_only"] = False
    assert "at or above" in rv.judge_finding(R(data)).headline
    lesson = data["judge_agreement"]["model_judges"]["seed_lesson"]
    lesson["independent_pairs"]["ci"] = [0.1, 0.2]
    assert rv.lesson_finding(R(data)).headline.startswith(rv.LESSON_HEADLINE["cannot be told"])
    lesson["every_pair"]["ci"] = [0.05, 0.2]
    h = rv.lesson_finding(R(data)).headline
    assert h.startswith(rv.LESSON_HEADLINE["holds"]) and "over every pair" in h and "share no part" in h


def test_unbacked_uses_the_selected_systems_model_and_prompt_on_the_oracle(data):
    row, k, n = rv.unbacked_correct(R(data))
    fs = data["eval_main"]["final_system"]["system"]
    assert row["generator"] == fs["generator"] and row["prompt_style"] == fs["prompt_style"]
    assert row["context_mode"].startswith("oracle") and 0 <= k <= n == row["correct"]["k"]
    data["eval_main"]["runs"] = [
        x for x in data["eval_main"]["runs"] if not x["context_mode"].startswith("oracle")
    ]
    with pytest.raises(MissingResults, match="oracle context"):
        rv.unbacked_finding(R(data))


def test_latest_runs_count_each_question_once(data):
    runs = rv.latest_runs(R(data))
    assert not any(x["series"].endswith("-r*") for x in runs)
    for x in runs:  # no first-round prompt of a model that has a second round
        if rv.is_model(x["generator"]):
            assert rv.version_of(x) == max(rv.version_of(y) for y in runs if y["generator"] == x["generator"])
    assert len({x["series"] for x in runs}) == len(runs)


def test_picture_rows(data):
    v = VIEWS["picture"](R(data))
    for row in v.rows:
        assert sum(c.count for c in row.cells) == row.n and all(c.count >= 0 for c in row.cells)
    x = next(x for x in data["eval_main"]["runs"] if x["series"] == v.rows[0].series)
    x["correct"]["k"] = x["strict_correct_and_grounded_flags_ignored"]["k"] = 0
    v = VIEWS["picture"](R(data))
    assert v.rows[0].unbacked == "no correct answer" and v.rows[0].generator == "extractive baseline"


def _verdict(fn, data):
    return fn(R(data))[1]


def test_c1_search(data):
    b = data["retrieval_grid"]["headline"]["best"]
    for ci, verdict in (
        ([0.2, 0.4], rv.PARTLY),  # the small model given the evidence is weaker still
        ([0.5, 0.7], rv.CONTRADICTED),
        ([0.4, 0.6], rv.INCONCLUSIVE),
    ):
        b["evidence_recall_at_5_ci"] = ci
        assert _verdict(rv.c1_search, data) == verdict
    b["evidence_recall_at_5_ci"] = [0.2, 0.4]
    best = rv.best_with_evidence(R(data))
    for x in data["eval_main"]["runs"]:
        if x["series"] == best["series"]:
            x["correct"].update(p=0.9, ci=[0.8, 0.95])
    assert _verdict(rv.c1_search, data) == rv.REPRODUCED
    assert "outside it" in rv.c1_search(R(data))[0]


def test_c2_dense(data):
    g = data["retrieval_grid"]
    setups = g["setups"]

    def spread(within: float) -> None:  # every setup at its method's mean, moved by +-within by chunker
        means = g["headline"]["mean_recall_at_5_by_method"]
        for x in setups:
            x["evidence_recall_at_5"] = means[x["method"]] + (
                within if x["chunker"] == "fixed" else -within / 2
            )

    spread(0.0)
    assert rv.between_setup_share(setups, "method") == pytest.approx(1.0)
    assert _verdict(rv.c2_dense, data) == rv.REPRODUCED
    spread(0.5)
    assert rv.between_setup_share(setups, "method") < 0.25
    assert _verdict(rv.c2_dense, data) == rv.NOT_REPRODUCED
    spread(0.09)
    assert 0.25 <= rv.between_setup_share(setups, "method") < 0.5
    assert _verdict(rv.c2_dense, data) == rv.PARTLY
    assert "right report in the top 5: " in rv.c2_dense(R(data))[0]
    g["headline"]["mean_recall_at_5_by_method"]["bm25"] = 0.9
    assert _verdict(rv.c2_dense, data) == rv.CONTRADICTED


def test_c3_unbacked_decides_on_the_interval_with_the_judges_error_carried(data):
    row, _, _ = rv.unbacked_correct(R(data))
    share = next(x for x in data["judge_error"]["runs"] if x["series"] == row["series"])["shares"][
        "grounded_of_correct"
    ]
    share["envelope_ci"] = [0.0, 1.0]  # the judge cannot tell it
    assert _verdict(rv.c3_unbacked, data) == rv.INCONCLUSIVE
    share["envelope_ci"] = [0.2, 0.5]  # not grounded: [50%, 80%]
    assert _verdict(rv.c3_unbacked, data) == rv.REPRODUCED
    share["envelope_ci"] = [0.95, 1.0]  # not grounded: [0%, 5%]
    assert _verdict(rv.c3_unbacked, data) == rv.CONTRADICTED
    share["n"] = 0  # no correct answers: nothing to tell
    assert _verdict(rv.c3_unbacked, data) == rv.INCONCLUSIVE


def test_c4_review(data):
    assert rv.c4_review(R(data))[:2] == ("no person has labelled finrag's own answers", rv.NOT_TESTABLE)
    data["judge_agreement"]["loaded"]["finrag"]["n_items"] = 7
    assert rv.c4_review(R(data))[0].startswith("7 claims")


@pytest.mark.parametrize(
    ("ci", "verdict"),
    [([0.1, 0.2], rv.REPRODUCED), ([-0.2, -0.1], rv.CONTRADICTED), ([-0.1, 0.1], rv.INCONCLUSIVE)],
)
def test_c5_lesson(data, ci, verdict):
    lesson = data["judge_agreement"]["model_judges"]["seed_lesson"]
    lesson["independent_pairs"]["ci"] = lesson["every_pair"]["ci"] = ci
    assert _verdict(rv.c5_lesson, data) == verdict
    lesson["every_pair"]["ci"] = [-0.5, 0.5]  # only the subset says so: no direction
    assert _verdict(rv.c5_lesson, data) == rv.INCONCLUSIVE


def _tell_all(data, can_tell: bool) -> None:
    for x in data["judge_error"]["runs"]:
        for s in x["shares"].values():
            s["can_tell"] = can_tell


def test_c6_correlation(data):
    c = next(x for x in data["eval_main"]["correlation"] if rv.is_model(x["generator"]))
    _tell_all(data, True)
    for ci, verdict in (
        ([0.1, 0.4], rv.REPRODUCED),
        ([0.5, 0.7], rv.CONTRADICTED),
        ([-0.1, 0.2], rv.CONTRADICTED),
        ([-0.1, 0.4], rv.INCONCLUSIVE),
        ([None, None], rv.INCONCLUSIVE),
    ):
        c["ci"] = ci
        assert _verdict(rv.c6_correlation, data) == verdict
    c["ci"] = [0.1, 0.4]
    _tell_all(data, False)  # a judge near chance: a weak correlation is its own noise
    assert _verdict(rv.c6_correlation, data) == rv.INCONCLUSIVE
    data["eval_main"]["correlation"] = []
    with pytest.raises(MissingResults):
        rv.c6_correlation(R(data))


def test_c7_quote(data):
    _tell_all(data, False)
    assert _verdict(rv.c7_quote, data) == rv.INCONCLUSIVE
    _tell_all(data, True)
    assert _verdict(rv.c7_quote, data) == rv.REPRODUCED
    quote = next(x for x in data["eval_main"]["runs"] if x["series"] == "qwen0.5b-quote@2-oracle-shuffled")
    quote["fully_grounded"]["ci"] = [0.9, 1.0]
    assert _verdict(rv.c7_quote, data) == rv.CONTRADICTED
    data["eval_main"]["runs"] = [x for x in data["eval_main"]["runs"] if x["prompt_style"] != "quote"]
    assert _verdict(rv.c7_quote, data) == rv.NOT_TESTABLE


def test_judge_error_view_counts_what_can_be_told(data):
    from finrag.report.views import judge_error as jv

    v = jv.judge_error(R(data))
    assert v.n_shares == 3 * len(v.runs) and 0 <= v.n_told_trivially <= v.n_told <= v.n_shares
    _tell_all(data, False)
    v = jv.judge_error(R(data))
    assert v.n_told == 0 and all(c.endswith("✗") for x in v.runs for c in x.cells)
    assert "no person has labelled" in v.finrag_labels
    data["judge_error"]["finrag_labels"] = {"n_labels": 12, "runs": [{}]}
    assert jv.judge_error(R(data)).finrag_labels.startswith("12 labels")
    with pytest.raises(MissingResults, match="has no run"):
        jv.run_share(R(data), "no-such-run", "fully_grounded")


def test_judge_error_finding_states_the_told_counts_and_the_best_ppi_gain(data):
    assert rv.judge_error_finding(R(data)).source == "`results/metrics/judge_error.json`"
    _tell_all(data, False)
    n = sum(x["context_mode"] in ("retrieved", "oracle") for x in data["judge_error"]["runs"])
    assert (
        f"fully grounded 0 of {n}, grounded, unflagged 0 of {n}" in rv.judge_error_finding(R(data)).headline
    )
    for x in data["judge_error"]["ppi_validation"]["rows"]:
        x["ppi_width"] = x["labels_only_width"] / 2
    assert "at most 50.0% narrower" in rv.judge_error_finding(R(data)).headline


def _fp_runs(data) -> dict:
    runs = rv.false_premise_runs(R(data))
    return {style: next(t for t in data["eval_main"]["trick_runs"] if t is not None and t["series"] == x["series"]
                        and t["kind"] == "trick_false_premise") for style, x in runs.items()}  # fmt: skip


def test_c8_decline(data):
    assert rv.c8_decline(R(data))[0].startswith("false premise flagged: plain")
    runs = _fp_runs(data)
    assert {"plain", "decline"} <= set(runs) and all("@2" in runs[k]["series"] for k in ("plain", "decline"))
    assert _verdict(rv.c8_decline, data) == rv.NOT_TESTABLE  # plain flags none: nothing to stop
    runs["plain"]["flagged_false_premise"].update(k=6, p=0.6, ci=[0.4, 0.8])
    runs["decline"]["flagged_false_premise"].update(p=0.0, ci=[0.0, 0.2])
    assert _verdict(rv.c8_decline, data) == rv.REPRODUCED
    runs["plain"]["flagged_false_premise"].update(k=1, p=0.1, ci=[0.0, 0.3])
    assert _verdict(rv.c8_decline, data) == rv.INCONCLUSIVE
    runs["decline"]["flagged_false_premise"].update(p=0.6, ci=[0.4, 0.8])
    assert _verdict(rv.c8_decline, data) == rv.CONTRADICTED
    data["eval_main"]["trick_runs"] = []
    assert _verdict(rv.c8_decline, data) == rv.NOT_TESTABLE


def test_c9_replicates(data):
    for x in data["eval_main"]["replicates"]:
        m = x["correct_and_grounded"]
        m.update(mean=0.05, values=[0.0, 0.1, 0.05][: len(m["values"])])  # spread 10 pp > one run's SE (~1.9)
    assert _verdict(rv.c9_replicates, data) == rv.REPRODUCED
    for x in data["eval_main"]["replicates"]:
        x["correct_and_grounded"]["values"] = [0.05, 0.055, 0.05][: len(x["correct_and_grounded"]["values"])]
    assert _verdict(rv.c9_replicates, data) == rv.CONSISTENT
    for x in data["eval_main"]["replicates"]:
        x["correct_and_grounded"]["values"] = [0.1] * len(x["correct_and_grounded"]["values"])
    assert _verdict(rv.c9_replicates, data) == rv.CONTRADICTED
    for x in data["eval_main"]["replicates"]:
        x["n_replicates"] = 1
    assert _verdict(rv.c9_replicates, data) == rv.NOT_TESTABLE


def test_c10_size_is_not_a_strong_vs_small_test(data):
    figure, verdict, rule = rv.c10_size(R(data))
    assert verdict == rv.NOT_TESTABLE and "Holm-adjusted p" in figure and "two small local models" in rule


def test_c11_trick(data):
    plain = _fp_runs(data)["plain"]
    plain["flagged_false_premise"]["ci"] = [0.0, 0.3]
    plain["used_made_up_figure"]["ci"] = [0.2, 0.5]
    assert _verdict(rv.c11_trick, data) == rv.CONSISTENT
    plain["used_made_up_figure"]["ci"] = [0.6, 0.9]
    assert _verdict(rv.c11_trick, data) == rv.PARTLY
    plain["flagged_false_premise"]["ci"] = [0.2, 0.4]
    assert _verdict(rv.c11_trick, data) == rv.CONTRADICTED
    data["eval_main"]["trick_runs"] = []
    assert _verdict(rv.c11_trick, data) == rv.NOT_TESTABLE


def test_c12_service_is_set_side_by_side_not_tested(data):
    assert _verdict(rv.c12_service, data) == rv.NOT_COMPARABLE
    assert rv.c12_service(R(data))[0].endswith("met")
    data["serve_load"]["summary"]["meets_p99_goal"] = False
    assert rv.c12_service(R(data))[0].endswith("not met")


def test_earlier_table_has_every_finding_and_a_tally(committed):
    v = VIEWS["earlier"](R(committed))
    assert [x.number for x in v.rows[:12]] == [str(i) for i in range(1, 13)]
    assert all(x.verdict == rv.NEW for x in v.rows[12:]) and v.tally


def test_limitations_and_conclusions(data):
    v = VIEWS["limitations"](R(data))
    assert "descriptive only" in v.items[0] and "so far" not in v.items[1]
    data["eval_main"]["judge_trust"]["descriptive_only"] = False
    data["judge_agreement"]["loaded"]["finrag"]["n_items"] = 3
    v = VIEWS["limitations"](R(data))
    assert "descriptive only" not in v.items[0] and "(3 claims so far)" in v.items[1]
    c = VIEWS["conclusions"](R(data))
    assert c.findings and c.tally
    data["judge_agreement"]["model_judges"]["seed_lesson"]["independent_pairs"]["ci"] = [0.1, 0.2]
    assert VIEWS["conclusions"](R(data)).contradicted == "none"


def test_study_names_the_models(data):
    assert "`qwen2.5-coder-0.5b" in VIEWS["study"](R(data)).generators
    data["eval_main"]["runs"] = [x for x in data["eval_main"]["runs"] if not rv.is_model(x["generator"])]
    assert VIEWS["study"](R(data)).generators == "none"


def test_ablations_view_sets_each_capability_beside_the_judge_as_run(data):
    from finrag.report.views import judge_error as jv

    a = next(iter(data["judge_agreement"]["ablations"].values()))
    a["with"]["findver"].update(kappa=0.5, supported_when_refuted=0.25)
    a["without"]["findver"].update(kappa=0.1, supported_when_refuted=0.05)
    row = next(x for x in jv.ablations(R(data)).items[0].rows if x.benchmark == "findver")
    assert row.kappa_with.startswith("0.500") and row.kappa_without.startswith("0.100")
    assert (row.refuted_supported_with, row.refuted_supported_without) == ("25.0%", "5.0%")
    del data["judge_agreement"]["ablations"]
    with pytest.raises(MissingResults, match="ablations"):
        jv.ablations(R(data))


def test_the_grader_sensitivity_row_is_named_as_such(data):
    run = data["eval_main"]["runs"][0]
    share = {"k": 1, "n": 2, "p": 0.5, "ci": [0.1, 0.9]}
    sens = {
        "model": "m",
        "template_id": "grade-correctness@1",
        "asked": 3,
        "runs": [
            {
                "series": run["series"],
                "uncertain": 3,
                "llm_verdicts": {"correct": 1, "incorrect": 1, "refusal": 0, "unreadable": 1},
                "correct": share,
                "correct_with_llm": share,
                "correct_and_grounded": share,
                "correct_and_grounded_with_llm": share,
            }
        ],
        "final_system_with_llm": {"system": {"series": run["series"]}, "value": 0.5, "ci": [0.1, 0.9]},
    }
    data["eval_main"].pop("grader_sensitivity", None)
    assert "off in this study so far" in sv.llm_grader_sentence(data["eval_main"])
    data["eval_main"]["grader_sensitivity"] = sens
    text = sv.llm_grader_sentence(data["eval_main"])
    assert text.count("Sensitivity, not the study's grade") == 1 and "1 unreadable" in text
    assert f"the rule would pick **{run['series']}**" in text
    assert "a sensitivity row" in rv.final_finding(R(data)).headline
    sens["final_system_with_llm"] = {"system": None}
    assert "pick no system" in sv.llm_grader_sentence(data["eval_main"])
