"""Groundedness judges on constructed claims, the claim splitter and answer scoring."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from finrag.core.contracts import ClaimVerdict
from finrag.score.claims import llm_split_claims, parse_markers, score_answer, split_claims, split_sentences
from finrag.score.judges.base import JUDGES, make_judge
from finrag.score.judges.combined import CombinedJudge
from finrag.score.judges.llm import LLMJudge, parse_numbered_verdicts, parse_verdict
from finrag.score.judges.numeric import NumericJudge, entity_terms

PROSE = [
    "Acme Corp. reported net sales of $120 million in fiscal 2023, up from $100 million in fiscal 2022. "
    "Gross margin was 41.2% in fiscal 2023.",
    "Acme Corp. opened its new plant in Ohio in 2021 to serve customers in the Midwest.",
]
TABLE = ["(in millions)\n| | 2023 | 2022 |\n| Net sales | 1,500 | 1,320 |\n| Operating income | 410 | 380 |"]


@pytest.fixture(scope="module")
def numeric():
    return NumericJudge()


def test_exact_figure_supported_and_changed_figure_not(numeric):
    ok = numeric.judge("Acme's net sales were $120 million in fiscal 2023.", PROSE)
    assert ok.verdict == "supported"
    assert ok.detail["figures"][0]["match"] == "direct"
    bad = numeric.judge("Acme's net sales were $125 million in fiscal 2023.", PROSE)
    assert bad.verdict != "supported"
    assert "$125 million" in bad.evidence


def test_changed_year_is_unsupported(numeric):
    v = numeric.judge("Acme's net sales were $120 million in fiscal 2020.", PROSE)
    assert v.verdict == "unsupported"
    assert v.detail["years_missing"] == [2020]


def test_changed_company_is_unsupported(numeric):
    v = numeric.judge("Globex's net sales were $120 million in fiscal 2023.", PROSE)
    assert v.verdict == "unsupported"
    assert v.detail["entities_missing"] == ["Globex"]
    assert (
        NumericJudge(check_entities=False)
        .judge("Globex's net sales were $120 million in fiscal 2023.", PROSE)
        .verdict
        == "supported"
    )


def test_paraphrase_supported(numeric):
    v = numeric.judge("In fiscal 2023 Acme's gross margin came to 41.2 percent.", PROSE)
    assert v.verdict == "supported"
    assert "Gross margin was 41.2%" in v.evidence


def test_one_step_growth_rate_supported_with_computation(numeric):
    v = numeric.judge("Acme's net sales grew 20% in fiscal 2023.", PROSE)
    assert v.verdict == "supported"
    fig = v.detail["figures"][0]
    assert fig["match"] == "arithmetic" and fig["operation"] == "percent change"
    assert fig["computation"].startswith("(120,000,000 - 100,000,000) / 100,000,000")
    assert numeric.judge("Acme's net sales grew 25% in fiscal 2023.", PROSE).verdict != "supported"
    diff = numeric.judge("Acme's net sales increased by $20 million in fiscal 2023.", PROSE)
    assert diff.verdict == "supported" and diff.detail["figures"][0]["operation"] == "difference"
    assert (
        NumericJudge(arithmetic=False).judge("Acme's net sales grew 20% in fiscal 2023.", PROSE).verdict
        != "supported"
    )


def test_stated_precision_is_respected(numeric):
    # 180/1320 = 13.636...%: "13.6%" and "13.64%" round to it, "13.7%" and "13.60%" do not
    assert numeric.judge("Net sales grew 13.6% in 2023.", TABLE).verdict == "supported"
    assert numeric.judge("Net sales grew 13.64% in 2023.", TABLE).verdict == "supported"
    assert numeric.judge("Net sales grew 13.7% in 2023.", TABLE).verdict != "supported"
    assert numeric.judge("Net sales grew 13.60% in 2023.", TABLE).verdict != "supported"
    # a hedge widens the tolerance to approx_rel_tol (1%)
    assert numeric.judge("Net sales grew approximately 13.55% in 2023.", TABLE).verdict == "supported"


def test_table_scale_and_contradiction(numeric):
    v = numeric.judge("Net sales were $1.5 billion in 2023.", TABLE)
    assert v.verdict == "supported"
    c = numeric.judge("Net sales were $1.6 billion in 2023.", TABLE)
    assert c.verdict == "contradicted"
    assert c.detail["figures"][0]["contradicted_by"]["passage_figures"] == ["1,500", "1,320"]


def test_implicit_table_scale_needs_enough_digits(numeric):
    bare = ["| Debt interest paid | $ | 183,479 | $ | 135,467 |", "| Net sales | 1,500 | 1,320 |"]
    assert numeric.judge("Debt interest paid was $183,479,000.", bare).verdict == "supported"
    assert (
        numeric.judge("Net sales were $1.5 billion.", bare).verdict != "supported"
    )  # "1,500": 2 digits, no cue


def test_no_figures_falls_back_to_overlap(numeric):
    v = numeric.judge("Acme opened a new plant in Ohio to serve Midwest customers.", PROSE)
    assert v.verdict == "supported"
    assert v.detail["method"] == "overlap_fallback" and v.detail["abstained"] is True
    u = numeric.judge("Acme closed its warehouse in Texas after a labour dispute.", PROSE)
    assert u.verdict == "unsupported" and u.detail["overlap"] < u.detail["threshold"]


def test_entity_terms():
    assert entity_terms("Apple's revenue rose while Microsoft lagged.") == ["Apple", "Microsoft"]
    assert entity_terms("Revenue grew at the Company in January.") == []
    # period labels are checked as years, not as names the passages must spell the same way
    assert entity_terms("Boeing's FY2018 PP&E and its Q2 FY23 YTD cash") == ["Boeing", "PP&E"]
    assert entity_terms("Corning's FY2020 DPO is 365 * payables / COGS; its ROA was 5%.") == ["Corning"]


def test_a_question_period_label_repeated_in_the_claim_is_not_a_missing_name(numeric):
    table = [
        "The Boeing Company\n(Dollars in millions)\nDecember 31, 2018 2017\nProperty, plant and equipment, net 12,645 12,672"
    ]
    v = numeric.judge(
        "Boeing's year end FY2018 net property, plant, and equipment is $12,645 million.", table
    )
    assert v.verdict == "supported"
    assert (
        numeric.judge("Boeing's FY2018 net property, plant, and equipment is $12,900 million.", table).verdict
        != "supported"
    )


def test_batch_shared_and_per_claim_passages(numeric):
    claims = ["Acme's net sales were $120 million in fiscal 2023.", "Net sales were $1.5 billion in 2023."]
    shared = numeric.judge_batch(claims, PROSE)
    assert [v.verdict for v in shared] == ["supported", "unsupported"]
    per = numeric.judge_batch(claims, [PROSE, TABLE], claim_ids=["a", "b"])
    assert [(v.claim_id, v.verdict) for v in per] == [("a", "supported"), ("b", "supported")]
    with pytest.raises(ValueError):
        numeric.judge_batch(claims, [PROSE])


# ---------------------------------------------------------------- LLM judge with a fake CachedLLM


@dataclass
class _Completion:
    text: str


class FakeLLM:
    """Same .complete signature as finrag.llm.cache.CachedLLM; replies from a script function."""

    def __init__(self, reply):
        self.reply = reply
        self.calls: list[list[dict]] = []

    def complete(self, messages, decoding, replicate=0, template_id="", item_id=""):
        self.calls.append(messages)
        return _Completion(self.reply(messages[-1]["content"])), f"key{len(self.calls)}", False


def _by_keyword(prompt: str) -> str:
    """One line per claim: SUPPORTED when the claim says 'sales', else UNSUPPORTED."""
    if "Claims:" not in prompt:
        claim = prompt.split("Claim: ", 1)[1].splitlines()[0]
        return "SUPPORTED - stated" if "sales" in claim.lower() else "UNSUPPORTED - not stated"
    lines = prompt.split("Claims:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    out = []
    for line in lines:
        k, claim = line.split(". ", 1)
        out.append(f"{k}. {'SUPPORTED' if 'sales' in claim.lower() else 'UNSUPPORTED'} - reason")
    return "\n".join(out)


def test_llm_judge_batches_claims_sharing_passages():
    llm = FakeLLM(_by_keyword)
    judge = LLMJudge(llm, batch_size=8)
    vs = judge.judge_batch(["Net sales rose [1].", "The CEO resigned.", "Sales fell."], PROSE)
    assert [v.verdict for v in vs] == ["supported", "unsupported", "supported"]
    assert len(llm.calls) == 1 and judge.stats["batch_parse_failures"] == 0
    prompt = llm.calls[0][-1]["content"]
    assert "[1] Acme Corp." in prompt and "[2] Acme Corp." in prompt and "1. Net sales rose." in prompt


def test_llm_judge_falls_back_one_by_one_on_a_bad_batch_reply():
    def reply(prompt):
        if "Claims:" in prompt:
            return "1. SUPPORTED - ok\nI am not sure about the rest."
        return "CONTRADICTED - the passage says otherwise"

    llm = FakeLLM(reply)
    judge = LLMJudge(llm, batch_size=3)
    vs = judge.judge_batch(["a", "b", "c"], PROSE)
    assert [v.verdict for v in vs] == ["supported", "contradicted", "contradicted"]
    assert judge.stats["batch_parse_failures"] == 1 and judge.stats["calls"] == 3
    assert vs[1].evidence == "the passage says otherwise" and vs[1].detail["batched"] is False


def test_llm_judge_unparseable_reply_is_never_supported():
    judge = LLMJudge(FakeLLM(lambda p: "Hmm, hard to say."))
    v = judge.judge("Net sales rose.", PROSE)
    assert v.verdict == "unsupported" and v.detail["parse_failed"] is True
    assert judge.stats["parse_failures"] == 1


def test_verdict_parsing():
    assert parse_verdict("**Unsupported** - no figure") == "unsupported"
    assert parse_verdict("Not supported.") == "unsupported"
    assert parse_verdict("SUPPORTED - [2] says so") == "supported"
    assert parse_verdict("Verdict: contradicted") == "contradicted"
    assert parse_verdict("unclear") is None
    assert parse_verdict("The claim is not correct.") == "contradicted"
    assert parse_verdict("Not true - the passage says 2019.") == "contradicted"
    assert parse_verdict("This is not contradicted; SUPPORTED") == "supported"  # the label in capitals wins
    assert parse_verdict("It is not contradicted, but not stated either.") == "unsupported"
    assert parse_verdict("1. The company has no debt - SUPPORTED") == "supported"  # not the claim's own "no"
    assert parse_verdict("Verdict: NOT SUPPORTED") == "unsupported"
    got = parse_numbered_verdicts("1. SUPPORTED - a\n2) NOT SUPPORTED - b\n3: Contradicted\n9. SUPPORTED", 3)
    assert got == {1: ("supported", "a"), 2: ("unsupported", "b"), 3: ("contradicted", "")}


def test_combined_routes_by_figures():
    llm = FakeLLM(lambda p: "UNSUPPORTED - no")
    judge = CombinedJudge(NumericJudge(), LLMJudge(llm), mode="route")
    vs = judge.judge_batch(["Acme's net sales were $120 million in fiscal 2023.", "Acme is well run."], PROSE)
    assert [v.detail["route"] for v in vs] == ["numeric", "llm"]
    assert [v.verdict for v in vs] == ["supported", "unsupported"]
    assert len(llm.calls) == 1
    strict = CombinedJudge(NumericJudge(), LLMJudge(FakeLLM(lambda p: "UNSUPPORTED")), mode="strict")
    assert strict.judge("Acme's net sales were $120 million in fiscal 2023.", PROSE).verdict == "unsupported"


def test_registry_and_factory():
    assert {"numeric", "llm", "combined", "overlap"} <= set(JUDGES.names())
    assert isinstance(make_judge("numeric", rel_tol=0.01), NumericJudge)
    assert isinstance(make_judge("combined", llm=FakeLLM(_by_keyword), mode="strict"), CombinedJudge)
    with pytest.raises(ValueError):
        make_judge("llm")
    with pytest.raises(KeyError, match="unknown judge"):
        make_judge("oracle")


# ---------------------------------------------------------------- claims and answer scoring


def test_sentence_splitter_keeps_abbreviations_and_decimals():
    text = "3M Co. reported sales of $32.8 billion in FY2022 [1]. The U.S. segment grew 2.5% vs. 2021. Fine."
    assert [s[2] for s in split_sentences(text)] == [
        "3M Co. reported sales of $32.8 billion in FY2022 [1].",
        "The U.S. segment grew 2.5% vs. 2021.",
        "Fine.",
    ]


def test_claim_splitter_cuts_compound_figures_and_drops_refusals():
    text = (
        "Operating income was $6.5 billion and net income was $5.8 billion [2][3]. "
        "Sales grew 2.5%; costs fell 4.1% [1]. Revenue and costs were flat in 2021 and 2022. "
        "I cannot answer this from the provided passages."
    )
    claims = split_claims(text)
    assert [c.text for c in claims] == [
        "Operating income was $6.5 billion",
        "Net income was $5.8 billion.",
        "Sales grew 2.5%",
        "Costs fell 4.1%.",
        "Revenue and costs were flat in 2021 and 2022.",
    ]
    assert claims[0].figures == ["$6.5 billion"] and claims[4].figures == []
    assert split_claims("I cannot answer this from the provided passages.") == []
    # prompt markup copied into the answer is not a claim
    echoed = '<passage n="1" source="BLOCK_2016_10K p. 68">\nThe ratio is 1.00.\n</passage>'
    assert [c.text for c in split_claims(echoed)] == ["The ratio is 1.00."]
    # list markers and bare years on their own lines say nothing
    listed = "Reasoning: Total assets were $59,268 million.\n1.\n2022\n2021\nAnswer: $59,268"
    assert [c.text for c in split_claims(listed)] == ["Total assets were $59,268 million.", "$59,268"]


def test_a_bare_figure_claim_must_appear_as_stated(numeric):
    table = ["Total assets $ 59,268 $ 55,556\nTotal liabilities 41,190"]
    assert numeric.judge("$59,268", table).verdict == "supported"
    assert numeric.judge("$100,824", table).verdict != "supported"  # 59,268 + 41,190 + ...: no arithmetic
    assert numeric.judge("$96,458", table).verdict != "supported"  # 55,556 + 41,190 - wordless: no arithmetic
    assert parse_markers("a [1, 2] b [3-5] [2][7]") == [1, 2, 3, 4, 5, 7]


def test_remarks_about_the_passages_are_not_claims_but_claims_that_mention_them_are():
    remarks = [
        "The passages do not state the 2019 revenue.",
        "The provided context does not include information on segment margins.",
        "There is no information about capex in the provided passages.",
        "The context lacks the FY2019 figure.",
    ]
    claims = [
        "According to the passages, 3M had no commercial paper outstanding at year end.",
        "Based on the context, operating income was $5.1 billion, not $6.0 billion.",
        "In the context of higher rates, net interest income did not fall.",
        "The passages do not give 2019; revenue was $5.2 billion in 2018.",  # states an amount: a claim
    ]
    assert [split_claims(t) for t in remarks] == [[]] * len(remarks)
    assert [len(split_claims(t)) for t in claims] == [1, 1, 1, 1]


def test_score_answer_groundedness_and_refusal(numeric):
    ans = "Acme's net sales were $120 million in fiscal 2023 [1]. Gross margin was 45% in fiscal 2023 [1]."
    s = score_answer(ans, PROSE, numeric)
    assert s["n_claims"] == 2 and s["n_supported"] == 1
    assert s["groundedness"] == 0.5 and s["fully_grounded"] is False and s["refusal"] is False
    assert [c["verdict"] for c in s["claims"]][0] == "supported"
    r = score_answer("I cannot answer this from the provided passages.", PROSE, numeric)
    assert r["refusal"] is True and r["groundedness"] is None and r["fully_grounded"] is False


def test_llm_splitter_hook_and_fallback():
    good = FakeLLM(lambda p: "1. Acme's net sales were $120 million in fiscal 2023.\n2. Acme is in Ohio.")
    claims, info = llm_split_claims("Acme sold $120 million in 2023 and is in Ohio.", good, item_id="q1")
    assert [c.claim_id for c in claims] == ["c1", "c2"] and claims[0].figures == ["$120 million"]
    assert info["splitter"] == "llm" and info["cache_key"] == "key1"
    bad = FakeLLM(lambda p: "Sure! Here you go.")
    claims, info = llm_split_claims("Sales were $5 million. Costs were $3 million.", bad)
    assert info["splitter"] == "deterministic" and len(claims) == 2
    none = FakeLLM(lambda p: "NONE")
    assert llm_split_claims("I cannot answer.", none)[0] == []


def test_claim_verdict_contract(numeric):
    v = numeric.judge("Acme's net sales were $120 million in fiscal 2023.", PROSE, claim_id="x")
    assert isinstance(v, ClaimVerdict) and v.claim_id == "x" and v.judge == "numeric"


def test_llm_judge_through_the_real_response_cache(tmp_path):
    """The judge's calls go through finrag.llm.cache.CachedLLM: recorded once, then replayed without the model."""
    from finrag.llm.backends.base import Backend, Completion
    from finrag.llm.cache import CachedLLM

    class Scripted(Backend):
        name = "scripted-judge"
        model = "script"

        def __init__(self):
            self.n = 0

        def _complete(self, messages, decoding, documents):
            self.n += 1
            return Completion(text=_by_keyword(messages[-1]["content"]), model=self.model)

    backend = Scripted()
    claims = ["Net sales rose.", "The CEO resigned."]
    rec = LLMJudge(CachedLLM(backend, tmp_path, mode="auto", stage="judge"))
    first = rec.judge_batch(claims, PROSE)
    assert [v.verdict for v in first] == ["supported", "unsupported"] and backend.n == 1
    replay = LLMJudge(CachedLLM(backend.identity(), tmp_path, mode="replay", stage="judge"))
    again = replay.judge_batch(claims, PROSE)
    assert [v.verdict for v in again] == ["supported", "unsupported"]
    assert replay.stats["cache_hits"] == 1 and backend.n == 1


def test_the_judge_reads_a_passage_under_its_source_name(numeric):
    """The prompt shows each passage's source; a company named only there ("Block" in Square's 10-K) is not a
    missing name, while a claim about another company stays unsupported."""
    from finrag.core.contracts import Passage

    text = "Total current assets 1,223,000 and total current liabilities 1,223,000."
    block = [Passage(n=1, chunk_id="c1", doc_id="BLOCK_2016_10K", pages=[68], text=text)]
    amcor = [Passage(n=1, chunk_id="c2", doc_id="AMCOR_2023_10K", pages=[3], text=text)]
    claim = "Block's FY2016 total current assets were 1,223,000."
    assert score_answer(claim, block, numeric)["fully_grounded"] is True
    assert score_answer(claim, amcor, numeric)["fully_grounded"] is False
    assert score_answer("Total current assets were 1,223,000.", [text], numeric)["fully_grounded"] is True


@pytest.mark.parametrize(
    "claim, passage, verdict",
    [
        ("JnJ's sales were $94.9 billion in 2022.", "Johnson & Johnson sales were $94.9 billion in 2022.", "supported"),
        ("J&J's sales were $94.9 billion in 2022.", "(JOHNSON_JOHNSON_2022_10K)\nSales: $94.9 billion (2022).", "supported"),
        ("AMEX net income was $7.5 billion in 2022.", "(AMERICANEXPRESS_2022_10K)\nNet income $7.5 billion in 2022.", "supported"),
        ("JnJ's sales were $94.9 billion in 2022.", "Pfizer sales were $94.9 billion in 2022.", "unsupported"),
        ("AMEX net income was $7.5 billion in 2022.", "(AMERICANWATERWORKS_2022_10K)\nNet income $7.5 billion in 2022.", "unsupported"),
    ],
)  # fmt: skip
def test_company_short_names_are_found_under_the_names_filings_use(numeric, claim, passage, verdict):
    assert numeric.judge(claim, [passage]).verdict == verdict
