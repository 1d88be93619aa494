"""Answer-quality flags on the kinds of degenerate answers this study's models wrote (texts taken from the recorded
answers in llm_cache/, labelled by hand: these are our labels, not a human study)."""

from __future__ import annotations

import pytest

from finrag.core.contracts import Passage
from finrag.llm.prompts.render import render
from finrag.score.flags import FLAGS, answer_flags

PASSAGES = [
    Passage(
        n=1,
        chunk_id="c1",
        doc_id="BOEING_2022_10K",
        pages=[32],
        text="The following table provides details of the accounting quantities and firm orders by program as of "
        "December 31. Cumulative firm orders represent the cumulative number of commercial jet aircraft deliveries "
        "plus undelivered firm orders.",
    ),
    Passage(
        n=2,
        chunk_id="c2",
        doc_id="BOEING_2022_10K",
        pages=[80],
        text="Net property, plant and equipment was $10,550 million at December 31, 2022.",
    ),
]
QUESTION = "What is Boeing's year end FY2022 net property, plant, and equipment (in USD millions)?"


def flags(text: str, style: str = "plain@1", finish: str = "stop", correct: bool = False) -> list[str]:
    messages, _ = render(style, QUESTION, PASSAGES)
    return answer_flags(text, messages=messages, finish_reason=finish, strictly_correct=correct)


def test_a_plain_answer_has_no_flag():
    assert flags("Boeing's net property, plant and equipment was $10,550 million at year end 2022 [2].") == []
    assert flags("$10,550 million [2]") == []


def test_the_quote_prompts_literal_example_is_an_echo():
    # 131 of 172 quote@1 answers (retrieved context) were this text, or began with it
    assert flags("net sales were $8.1 billion [2]", "quote@1") == ["prompt_echo"]
    assert "prompt_echo" in flags(
        "Net sales were $8.1 billion [2]. The PP&E was $10,550 million [2].", "quote@1"
    )


def test_an_example_a_passage_really_holds_is_no_echo():
    passages = [
        *PASSAGES,
        Passage(n=3, chunk_id="c3", doc_id="X", pages=[1], text="In 2022 net sales were $8.1 billion."),
    ]
    messages, _ = render("quote@1", QUESTION, passages)
    text = '"net sales were $8.1 billion" [3]'
    assert answer_flags(text, messages=messages, finish_reason="stop", strictly_correct=False) == []


def test_copied_passage_markup_in_either_format():
    copy = (
        '<passage n="1" source="BOEING_2022_10K p. 33">The following table provides details of the accounting'
    )
    assert "copied_markup" in flags(copy)
    assert "copied_markup" in flags("Passage [2] (BOEING_2022_10K p. 81):\nNet property, plant", "plain@2")


def test_empty_answers_citation_markers_alone():
    assert flags("[1]") == ["empty"]
    assert flags("[1][3]") == ["empty"]
    assert flags("   ") == ["empty"]


def test_a_verbatim_copy_that_answers_nothing_and_one_that_answers():
    copy = PASSAGES[0].text + " [1]"
    assert flags(copy) == ["passage_copy"]
    # the same copy graded strictly correct is a found answer, not a copy that answers nothing
    assert flags(copy, correct=True) == []
    # too short to call a copy
    assert flags("firm orders by program [1]") == []


def test_question_echo_but_not_a_choice_answer():
    assert flags("Boeing's year end FY2022 net property, plant, and equipment (in USD millions)") == [
        "question_echo"
    ]
    assert flags("The net property, plant and equipment of Boeing is $10,550 million.") == []


def test_cut_at_the_limit_and_a_loop():
    loop = "[2] Biopharma " * 30
    assert flags(loop, finish="length") == ["cut_at_limit", "repetition"]
    long_but_fine = "Boeing reported net property, plant and equipment of $10,550 million [2]"
    assert flags(long_but_fine, finish="length") == ["cut_at_limit"]


def test_the_decline_prompts_own_reply_is_no_echo():
    assert flags("I cannot answer this from the provided passages.", "decline@1") == []
    assert flags("I cannot answer this from the provided passages.", "decline@2") == []


@pytest.mark.parametrize("style", ["plain@2", "quote@2", "decline@2"])
def test_flags_come_in_a_fixed_order(style):
    got = flags("[2] x [2] x", style, finish="length")
    assert got == [f for f in FLAGS if f in got]
