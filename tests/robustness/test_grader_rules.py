"""The correctness grader's known misses (issue 22), each as a general rule with its near variants.

The examples are written here, not taken from the hidden grading cases: each rule is checked on several
phrasings so that a fix fitted to one sentence fails.
"""

from __future__ import annotations

import pytest

from finrag.score.declining import is_refusal
from finrag.score.grader import figure_sign, grade
from finrag.score.numbers import extract_figures, stated_scale

Q_OPINC = "What was the operating income of the company in FY2022?"
Q_CHANGE = "How did operating cash flow change from FY2021 to FY2022?"


# ------------------------------------------------------------------------------------------- sign and direction


@pytest.mark.parametrize(
    "gold,answer,expected",
    [
        ("-$87.1 million", "Operating income was $87.1 million.", "incorrect"),
        ("($87.1) million", "The company reported an operating profit of $87.1 million.", "incorrect"),
        ("-$87.1 million", "They reported $87.1 million of operating income.", "incorrect"),
        ("-$87.1 million", "The company earned $87.1 million from operations.", "incorrect"),
        ("-$87.1 million", "The company had an operating loss of $87.1 million.", "correct"),
        ("-$87.1 million", "Operating income was -$87.1 million.", "correct"),
        ("-$87.1 million", "Operating income was $(87.1) million.", "correct"),
        ("-$87.1 million", "The company lost $87.1 million on its operations.", "correct"),
        ("-$87.1 million", "Operating income was negative $87.1 million.", "correct"),
        ("Operating loss of $87.1 million.", "Operating income of $87.1 million.", "incorrect"),
        # an unsigned answer is not penalised: FinanceBench's labellers did not penalise sign conventions
        ("-$87.1 million", "$87.1 million", "correct"),
        ("$87.1 million", "Operating income was $87.1 million.", "correct"),
    ],
)
def test_sign_of_a_level(gold: str, answer: str, expected: str) -> None:
    assert grade(gold, answer, Q_OPINC).verdict == expected


@pytest.mark.parametrize(
    "gold,answer,expected",
    [
        ("-$64 million", "Operating cash flow fell by $64 million.", "correct"),
        ("-$64 million", "It declined $64 million year over year.", "correct"),
        ("-$64 million", "There was a $64 million decrease in operating cash flow.", "correct"),
        ("-$64 million", "Operating cash flow was lower by $64 million.", "correct"),
        ("-$64 million", "Operating cash flow rose by $64 million.", "incorrect"),
        ("-$64 million", "Operating cash flow increased $64 million.", "incorrect"),
        ("-$64 million", "There was a $64 million increase in operating cash flow.", "incorrect"),
        ("-$64 million", "Operating cash flow changed by $64 million.", "correct"),
        ("Revenue increased by $64 million.", "Revenue decreased by $64 million.", "incorrect"),
        ("Revenue increased by $64 million.", "Revenue grew by $64 million.", "correct"),
        ("-2.3%", "The margin improved by 2.3%.", "incorrect"),
        ("-2.3%", "The margin contracted by 2.3%.", "correct"),
    ],
)
def test_direction_words(gold: str, answer: str, expected: str) -> None:
    assert grade(gold, answer, Q_CHANGE).verdict == expected


def test_direction_words_outrank_signed_nouns() -> None:
    text = "Net income fell by $64 million."
    (f,) = extract_figures(text)
    assert figure_sign(text, f) == "neg"
    text = "The net loss narrowed; revenue rose $5 million."
    f = extract_figures(text)[0]
    assert figure_sign(text, f) == "pos"  # the clause of the figure, not the sentence before it


# ------------------------------------------------------------------------------------------ the question's unit


@pytest.mark.parametrize(
    "question",
    [
        "What were capital expenditures in FY2020 (in USD thousands)?",
        "What were capital expenditures in FY2020 (USD thousands)?",
        "What were capital expenditures in FY2020 ($ in thousands)?",
        "What were capital expenditures in FY2020 ($000s)?",
    ],
)
@pytest.mark.parametrize(
    "answer,expected",
    [
        ("$2.48 billion", "correct"),
        ("Capital expenditures were USD 2.48 bn.", "correct"),
        ("$2,480 million", "correct"),
        ("$2,480,000 thousand", "correct"),
        ("$2.48 million", "incorrect"),
    ],
)
def test_question_unit(question: str, answer: str, expected: str) -> None:
    assert stated_scale(question) == 1e3
    assert grade("$2,480,000", answer, question).verdict == expected


# ------------------------------------------------------------------------------ currency codes, "bn" and "mn"


@pytest.mark.parametrize(
    "answer,expected",
    [
        ("USD 7.2105 bn", "correct"),
        ("USD7.2105bn", "correct"),
        ("Revenue was 7.2105 billion U.S. dollars.", "correct"),
        ("US$ 7,210.5 mn", "correct"),
        ("7,210.5 mn USD", "correct"),
        ("USD 7.2105 mn", "incorrect"),
        ("USD 7.9 bn", "incorrect"),
    ],
)
def test_currency_codes_and_scale_abbreviations(answer: str, expected: str) -> None:
    assert grade("$ 7,210.5 million", answer, "What was total revenue in FY2022?").verdict == expected


def test_thousands_groups_end_the_digits() -> None:
    (f,) = extract_figures("USD 7.2105 bn")
    assert f.value == pytest.approx(7.2105e9)
    assert [x.value for x in extract_figures("1,577,000 and 13.668,9 millones", "en")][0] == 1_577_000


# ------------------------------------------------------------------------------------ number formats crossed


@pytest.mark.parametrize(
    "gold,answer,expected",
    [
        ("2.431,7 millones de euros", "EUR 2,431.7 million", "correct"),
        ("2.431,7 millones de euros", "Net profit was €2,431.7 million.", "correct"),
        ("EUR 2,431.7 million", "El beneficio fue de 2.431,7 millones de euros.", "correct"),
        ("2.431,7 millones de euros", "EUR 2,531.7 million", "incorrect"),
        ("13,5%", "The margin was 13.5%.", "correct"),
    ],
)
def test_spanish_and_english_number_formats(gold: str, answer: str, expected: str) -> None:
    assert grade(gold, answer, "What was the net profit in 2023?").verdict == expected


# ------------------------------------------------------------------------------------------ "not stated" gold


@pytest.mark.parametrize(
    "gold",
    ["The filing does not say.", "Not disclosed in the 10-K.", "This cannot be determined from the filing."],
)
@pytest.mark.parametrize(
    "answer,expected",
    [
        ("The filing does not disclose the headcount in Brazil.", "correct"),
        ("This information is not provided in the 10-K.", "correct"),
        ("The headcount in Brazil was 1,200 employees.", "incorrect"),
    ],
)
def test_not_stated_gold(gold: str, answer: str, expected: str) -> None:
    res = grade(gold, answer, "How many employees did the company have in Brazil?")
    assert res.verdict == expected


def test_not_stated_gold_still_counts_as_a_decline() -> None:
    answer = "The filing does not disclose the headcount in Brazil."
    assert grade("The filing does not say.", answer, "How many employees in Brazil?").verdict == "correct"
    assert is_refusal(answer)  # the declining axis still records it


def test_a_gold_with_content_is_not_a_not_stated_gold() -> None:
    gold = "Boeing's primary customers are a limited number of commercial airlines and the US government."
    answer = "The text does not provide specific information on who the primary customers of Boeing are."
    assert grade(gold, answer, "Who are the primary customers of Boeing?").verdict == "refusal"
