"""Prompt templates: ids and versions, a rendered-prompt snapshot, prefix sharing, and read-back helpers."""

from __future__ import annotations

import re

import pytest

from finrag.core.contracts import Passage
from finrag.llm.prompts import render as prompts
from finrag.llm.prompts.parse import DECLINE_PHRASE, cited_passages, extract_answer, is_decline, parse_prompt
from finrag.llm.prompts.render import STYLES_ORDER, as_documents, render, template_hash

PASSAGES = [
    Passage(
        n=1,
        chunk_id="c1",
        doc_id="3M_2018_10K",
        pages=[59],
        text="Purchases of property, plant and equipment (PP&E) were $1,577 million in 2018.",
    ),
    Passage(
        n=2,
        chunk_id="c2",
        doc_id="3M_2018_10K",
        pages=[60, 61],
        text="Cash dividends paid to shareholders totaled $3,193 million.",
    ),
]
QUESTION = "What was the FY2018 capital expenditure of 3M?"

SNAPSHOT_USER = """Passages:

<passage n="1" source="3M_2018_10K p. 60">
Purchases of property, plant and equipment (PP&E) were $1,577 million in 2018.
</passage>

<passage n="2" source="3M_2018_10K p. 61, 62">
Cash dividends paid to shareholders totaled $3,193 million.
</passage>

Answer the question using the passages above. After each claim, quote the exact words of the passage that \
support it, in double quotes, followed by its number, e.g. "net sales were $8.1 billion" [2].

<question>
What was the FY2018 capital expenditure of 3M?
</question>"""

SNAPSHOT_SYSTEM_START = "You are a careful financial analyst. You answer questions about company filings"

# Editing a template without bumping its version must fail here: update the hash AND the version together.
PINNED = {
    "plain@1": "6db9743eac65d138592bd98b38ca6b5614a408a90f334e2609d0b09fb225b14d",
    "quote@1": "38e9417c44c54401bc87977940ceea42d804d2a22b144d5f098f4af64ba09dc6",
    "cot@1": "05bddab72ea71d6c85c80beaf725c75c1e457dfe0bf39fd1c2c8e2c374f8ca1a",
    "decline@1": "050af613020be7af1726d846f2c476f615fec7bf809381aefa3f4cb0066bc366",
    "plain@2": "0269747fee25fa51e7faa658a52e2fcfe904674f060e83bb61d6c13631abb1c2",
    "quote@2": "684e53c743feab00ecccb694bee3424ee236b8e99643d888e6b16c2916126bb5",
    "decline@2": "2f55550b004826076aacd26d32e588d7cfa02d71f87131480fb57b97fd19c53b",
}


def test_snapshot_quote_style():
    messages, tid = render("quote@1", QUESTION, PASSAGES)
    assert tid == "quote@1"
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"].startswith(SNAPSHOT_SYSTEM_START)
    assert messages[1]["content"] == SNAPSHOT_USER


def test_every_pinned_version_renders_and_its_text_is_pinned():
    """Every version styles.yaml keeps renders (v1 answers keep replaying); a bare name is the newest."""
    ids = {s: prompts.get_style(s).template_id for s in STYLES_ORDER}
    assert ids == {"plain": "plain@2", "quote": "quote@2", "cot": "cot@1", "decline": "decline@2"}
    every = [st.template_id for versions in prompts.style_versions().values() for st in versions.values()]
    assert sorted(every) == sorted(PINNED)
    for tid in every:
        assert template_hash(tid) == PINNED[tid], f"{tid} text changed: add a version in styles.yaml"
        assert render(tid, QUESTION, PASSAGES)[1] == tid
    with pytest.raises(KeyError, match="known versions: plain@1, plain@2"):
        render("plain@0", QUESTION, PASSAGES)
    with pytest.raises(KeyError, match="unknown prompt style"):
        render("haiku", QUESTION, PASSAGES)


def test_no_style_of_the_newest_versions_holds_a_copyable_example_or_markup():
    """The small model echoed quote@1's literal example and copied the `<passage>` markup: the newest versions
    quote no example and show passages without markup."""
    for style in STYLES_ORDER:
        st = prompts.get_style(style)
        if st.version < 2:
            continue
        quoted = re.findall(r'"([^"]+)"', st.instructions)
        assert all(q == DECLINE_PHRASE for q in quoted), (style, quoted)
        user = render(style, QUESTION, PASSAGES)[0][1]["content"]
        assert "<passage" not in user and "Passage [1] (3M_2018_10K p. 60):" in user


def test_v2_passages_parse_back():
    messages, _ = render("plain@2", QUESTION, PASSAGES)
    q, ps = parse_prompt(messages)
    assert q == QUESTION
    assert [(p["n"], p["source"], p["text"]) for p in ps] == [
        (1, "3M_2018_10K p. 60", PASSAGES[0].text),
        (2, "3M_2018_10K p. 61, 62", PASSAGES[1].text),
    ]


def test_a_style_stop_sequence_joins_the_decoding_and_none_leaves_it_as_it_was():
    base = {"temperature": 0.0, "stop": []}
    assert prompts.get_style("plain@1").decoding(base) == base
    st = prompts.Style(name="x", version=9, description="", instructions="", stop=("</answer>",))
    assert st.decoding(base)["stop"] == ["</answer>"]
    assert st.decoding({"stop": "</answer>"})["stop"] == ["</answer>"]


def test_parse_prompt_round_trips_passages_and_question():
    messages, _ = render("plain", QUESTION, PASSAGES)
    q, ps = parse_prompt(messages)
    assert q == QUESTION
    assert [(p["n"], p["text"]) for p in ps] == [(p.n, p.text) for p in PASSAGES]


def test_document_mode_leaves_passages_out_and_documents_carry_them():
    messages, _ = render("plain", QUESTION, PASSAGES, document_mode=True)
    assert "$1,577" not in messages[1]["content"]
    docs = as_documents(PASSAGES)
    assert [d["n"] for d in docs] == [1, 2] and docs[0]["text"] == PASSAGES[0].text
    q, ps = parse_prompt(messages, docs)
    assert q == QUESTION and ps[1]["text"] == PASSAGES[1].text


def test_no_passages_renders_a_clear_notice():
    messages, _ = render("decline", QUESTION, [])
    assert "none were retrieved" in messages[1]["content"]
    assert DECLINE_PHRASE in messages[1]["content"]


def test_answer_helpers():
    assert cited_passages("Capex was $1,577 million [1]. Dividends [2, 3] and [1][4].") == [1, 2, 3, 4]
    assert cited_passages("no citations here, see page [a]") == []
    assert extract_answer("Reasoning: x is in [1].\nAnswer: $1,577 million [1]") == "$1,577 million [1]"
    assert extract_answer("**Answer:** 12%") == "12%"
    assert extract_answer("just text") == "just text"
    assert extract_answer("Reasoning: x [1].\nFinal answer: MMM26 [1]") == "MMM26 [1]"
    assert extract_answer("3. Provide the answer:\n   - Answer: $0\n\nFinal answer: Answer: $0") == "$0"
    assert extract_answer("<answer>\nYes, it has.</answer>") == "Yes, it has."
    assert extract_answer('<answer n="3">No.') == "No."
    assert is_decline("I cannot answer this from the provided  passages. Capex is missing.")
    assert not is_decline("Capex was $1,577 million [1].")


# The scoring tasks' prompts (templates/tasks.yaml): the same rule, one pinned hash per template id.
PINNED_TASKS = {
    "judge-claims@1": "49980ee69f90c3ee47a16d1cd5373fbcb97ff2c26e71cd4e6c923bd6eb3c0e08",
    "claims-split@1": "d3d88a97e7a52b9c3c657f123f1733fd290ecf3defea5eb4f0ddc3e7d72f1e82",
    "grade-correctness@1": "68e18fdfeb8fa44c1cce178f1ae72dd45a5081f4b2a17fa4a33470a614b4918e",
    "judge-logprob@1": "0e819ff208999e8df07c027337a05ad9cead62a44998df65085c512c697f7a06",
}


def test_task_prompts_are_versioned_and_pinned():
    tasks = prompts.task_prompts()
    assert {t.template_id for t in tasks.values()} == set(PINNED_TASKS)
    for tid, digest in PINNED_TASKS.items():
        assert prompts.task_prompt(tid).source_hash() == digest, f"{tid} text changed: bump its version"
    with pytest.raises(KeyError, match="current version is judge-claims@1"):
        prompts.task_prompt("judge-claims@0")
    with pytest.raises(KeyError, match="unknown task prompt"):
        prompts.task_prompt("haiku@1")


def test_judge_prompt_renders_one_claim_or_a_numbered_list():
    judge = prompts.task_prompt("judge-claims@1")
    one = judge.messages(passages_block="Passages:\n\n[1] Net sales were $5.", claims=["Sales were $5."])
    assert one[0]["role"] == "system" and "SUPPORTED when the passages state it" in one[0]["content"]
    assert one[1]["content"].startswith("Passages:\n\n[1] Net sales were $5.\n\nClaim: Sales were $5.\n\n")
    many = judge.messages(passages_block="Passages: none.", claims=["a", "b {{ c }}"])[1]["content"]
    assert (
        "Claims:\n1. a\n2. b {{ c }}\n\nFor each claim write one line" in many
    )  # claim text is not a template
    with pytest.raises(Exception, match="claims"):
        judge.messages(passages_block="Passages: none.")  # a missing variable is an error, never blank
