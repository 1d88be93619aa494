"""Table-driven tests of the deterministic correctness grader (hand-written cases, one behaviour each)."""

from __future__ import annotations

import pytest

from finrag.score.declining import false_premise_response, is_refusal, repeats_premise
from finrag.score.grader import answer_polarity, content_recall, grade, match_figure
from finrag.score.numbers import extract_figures

Q_MILLIONS = "What is the FY2018 capital expenditure amount (in USD millions) for 3M?"
Q_BILLIONS = "How much (in USD billions) did American Water Works pay out in cash dividends for FY2020?"
Q_PCT = "What is Adobe's year-over-year change in operating income from FY2015 to FY2016 (in percents)?"
Q_RATIO = (
    "What is the FY2019 fixed asset turnover ratio for Activision Blizzard? Round to two decimal places."
)
Q_YN = "Does Paypal have positive working capital based on FY2022 data?"
Q_ES = "¿Cuál fue el beneficio neto del ejercicio 2023 (en millones de euros)?"

# (id, gold, answer, question, verdict, unit_mismatch)
CASES = [
    # --- plain numbers, scale words and suffixes
    ("exact", "$1577.00", "The capex was $1,577 million.", Q_MILLIONS, "correct", False),
    ("bare-number-question-scale", "$1577.00", "1577", Q_MILLIONS, "correct", False),
    ("billion-word", "$1577.00", "Capital expenditure was $1.577 billion.", Q_MILLIONS, "correct", False),
    ("bn-suffix", "$1577.00", "About $1.58bn of capex.", Q_MILLIONS, "correct", False),
    ("mm-suffix", "$1577.00", "Capex: $1,577MM", Q_MILLIONS, "correct", False),
    ("full-dollars", "$1577.00", "It spent $1,577,000,000 on PP&E.", Q_MILLIONS, "correct", False),
    ("thousands-stated", "$1577.00", "(in thousands) capex was 1,577,000", Q_MILLIONS, "correct", False),
    ("k-suffix", "$25,000", "The fee was $25K.", "", "correct", False),
    ("million-vs-billion-gold", "$0.40", "It paid $400 million in dividends.", Q_BILLIONS, "correct", False),
    ("rounded-gold-two-decimals", "$0.40", "Dividends paid were $389 million.", Q_BILLIONS, "correct", False),
    ("wrong-value", "$1577.00", "The capex was $1,300 million.", Q_MILLIONS, "incorrect", False),
    ("trillion", "$1.2 trillion", "Total assets were $1,200 billion.", "", "correct", False),
    # --- off by a power of 1,000
    ("off-by-1000-up", "$1577.00", "The capex was $1,577 billion.", Q_MILLIONS, "incorrect", True),
    ("off-by-1000-down", "$1577.00", "The capex was $1,577 thousand.", Q_MILLIONS, "incorrect", True),
    (
        "off-by-1e6",
        "$1,577 million",
        "The capex was $1,577.",
        "What was 3M's FY2018 capex?",
        "incorrect",
        True,
    ),
    (
        "off-by-1000-bare-vs-billions",
        "$0.40",
        "The company paid 400 in dividends.",
        Q_BILLIONS,
        "incorrect",
        True,
    ),
    # --- the 1% boundary
    ("tol-0.99pct-above", "1000", "The value is 1009.9.", "", "correct", False),
    ("tol-1.01pct-above", "1000", "The value is 1010.1.", "", "incorrect", False),
    ("tol-0.99pct-below", "1000", "The value is 990.1.", "", "correct", False),
    ("tol-1.01pct-below", "1000", "The value is 989.9.", "", "incorrect", False),
    ("gold-precision-rounding", "0.01", "ROA = 0.0143", Q_RATIO, "correct", False),
    ("answer-coarser-rounding", "0.62%", "The effective tax rate was 0.6%.", "", "correct", False),
    ("answer-coarser-too-far", "0.4%", "The CAGR was 0.5%.", "", "incorrect", False),
    (
        "approximately-word",
        "$20 billion",
        "JnJ expects a gain of approximately $20 billion.",
        "",
        "correct",
        False,
    ),
    ("tilde", "42%", "Cash fell by ~42%.", "", "correct", False),
    # --- negatives and parentheses
    ("parens-negative", "-473", "Corporate net revenue was (473).", "", "correct", False),
    ("parens-currency-scale", "-$473 million", "Net revenue was $(473) million.", "", "correct", False),
    ("leading-minus", "-3.7", "The cash conversion cycle is -3.7 days.", "", "correct", False),
    ("unicode-minus", "-14.76%", "The rate was −14.76%.", "", "correct", False),
    ("sign-by-words", "-$229 million", "Debt decreased by $229 million.", "", "correct", False),
    # --- percent, percentage points, basis points
    ("pct-exact", "65.4%", "Operating income grew 65.4%.", Q_PCT, "correct", False),
    ("pct-word", "65.4%", "It rose 65.4 percent year over year.", Q_PCT, "correct", False),
    ("pct-vs-decimal", "65.4%", "The change is 0.654.", Q_PCT, "correct", False),
    ("ratio-vs-pct", "0.8", "The payout ratio was 80%.", "", "correct", False),
    ("pct-wrong", "65.4%", "Operating income grew 56.4%.", Q_PCT, "incorrect", False),
    ("bps-equals-pct", "0.2%", "The margin improved by 20 bps.", "", "correct", False),
    ("bps-dotted", "0.25%", "Spreads widened 25 b.p.", "", "correct", False),
    ("bps-vs-pct-wrong", "0.2%", "The margin improved by 0.2 bps.", "", "incorrect", False),
    ("percentage-points", "0.2%", "Margin rose 0.2 percentage points.", "", "correct", False),
    ("pct-not-plain-number", "5%", "Revenue was $5 million.", "", "incorrect", False),
    # --- currency symbols
    ("euro-symbol", "€2.5 million", "Profit was EUR 2.5 million.", "", "correct", False),
    ("usd-code", "$3.2 billion", "Revenue of USD 3.2bn.", "", "correct", False),
    ("per-share", "$0.55", "CVS paid a $0.55 dividend per share.", "", "correct", False),
    # --- Spanish formats
    ("es-decimal-comma-pct", "2,2 %", "La rentabilidad fue del 2,2 %.", "", "correct", False),
    (
        "es-thousands-dot",
        "13.668,9",
        "El beneficio fue de 13.668,9 millones de euros.",
        Q_ES,
        "correct",
        False,
    ),
    ("es-millones-word", "1.500 millones", "Ascendió a 1.500 millones de euros.", "", "correct", False),
    ("es-miles-de-millones", "2,5 miles de millones", "Fueron 2.500 millones.", "", "correct", False),
    ("es-question-scale", "13.668,9", "El beneficio neto fue 13.668,9.", Q_ES, "correct", False),
    ("es-wrong", "13.668,9", "El beneficio neto fue 12.668,9 millones.", Q_ES, "incorrect", False),
    ("es-refusal", "13.668,9", "No se indica en el documento.", Q_ES, "refusal", False),
    # --- years and figures quoted from the question
    (
        "year-not-a-figure",
        "$1577.00",
        "In FY2018 the figure is not the year 2018.",
        Q_MILLIONS,
        "incorrect",
        False,
    ),
    ("year-matches-nothing", "2018", "The answer is 2,018.", "", "correct", False),
    (
        "question-figure-ignored",
        "1.1%",
        "Gross margins fell 2%.",
        "Did margins fluctuate more than 2%?",
        "incorrect",
        False,
    ),
    (
        "question-figure-plus-answer",
        "1.1%",
        "Not more than 2%: they fell 1.1%.",
        "Did margins move more than 2%?",
        "correct",
        False,
    ),
    ("gold-in-question", "3", "It uses a 3 year average.", "Compute the 3 year average?", "correct", False),
    # --- multiple gold figures
    (
        "two-gold-both",
        "The rate was 0.62% in 2022 vs -14.76% in 2021.",
        "It was 0.62% and -14.76%.",
        "",
        "correct",
        False,
    ),
    (
        "two-gold-one-missing",
        "$1097 million and $862 million.",
        "Pension benefits were $1,097 million.",
        "",
        "incorrect",
        False,
    ),
    (
        "change-from-two-levels",
        "No. Debt decreased by $229 million.",
        "Debt was $150,868 million in 2021 and $150,639 million in 2022.",
        "",
        "correct",
        False,
    ),
    (
        "extra-working-allowed",
        "1.73",
        "Assets $1,001,425 / liabilities $577,464 = 1.73.",
        Q_RATIO,
        "correct",
        False,
    ),
    (
        "working-only-conclusion-wrong",
        "6.25",
        "COGS/inventory: 6.25 before adjustments. Therefore, the ratio is 5.10.",
        "",
        "incorrect",
        False,
    ),
    # --- refusals
    (
        "refusal-not-stated",
        "$1577.00",
        "The figure is not stated in the filing.",
        Q_MILLIONS,
        "refusal",
        False,
    ),
    (
        "refusal-cannot-determine",
        "24.26",
        "It cannot be determined from the context.",
        Q_RATIO,
        "refusal",
        False,
    ),
    ("refusal-dont-know", "24.26", "I don't know.", Q_RATIO, "refusal", False),
    (
        "refusal-context",
        "24.26",
        "The context does not provide the revenue figures needed.",
        Q_RATIO,
        "refusal",
        False,
    ),
    ("refusal-as-ai", "24.26", "As an AI, I don't have access to financial data.", Q_RATIO, "refusal", False),
    ("refusal-empty", "24.26", "", Q_RATIO, "refusal", False),
    (
        "refusal-then-correct",
        "$1577.00",
        "Not explicitly stated, but the cash flow shows $1,577 million.",
        Q_MILLIONS,
        "correct",
        False,
    ),
    (
        "refusal-then-attempt",
        "24.26",
        "Revenue is not stated. Therefore, the ratio is approximately 12.5.",
        Q_RATIO,
        "incorrect",
        False,
    ),
    (
        "caveat-after-answer",
        "$1577.00",
        "Capex was $1,577 million. Other details are not provided.",
        Q_MILLIONS,
        "correct",
        False,
    ),
    # --- yes / no
    (
        "yes-agrees",
        "Yes. Paypal has positive working capital of $1.6Bn.",
        "Yes, it does.",
        Q_YN,
        "correct",
        False,
    ),
    (
        "no-vs-yes",
        "Yes. Paypal has positive working capital of $1.6Bn.",
        "No, working capital is negative.",
        Q_YN,
        "incorrect",
        False,
    ),
    (
        "soft-negation",
        "No, it does not.",
        "Paypal does not have positive working capital in FY2022.",
        Q_YN,
        "correct",
        False,
    ),
    (
        "soft-direction",
        "No. Verizon's debt decreased.",
        "Verizon's debt decreased in 2022.",
        "Has Verizon increased its debt?",
        "correct",
        False,
    ),
    (
        "yes-but-figure-wrong",
        "Yes. The quick ratio is 1.57.",
        "Yes, the quick ratio is 2.35.",
        "Is the quick ratio healthy?",
        "incorrect",
        False,
    ),
    (
        "conclusion-yes",
        "Yes",
        "Let me check the ratio. Therefore, the answer is yes.",
        "Was AmEx able to retain members?",
        "correct",
        False,
    ),
    # --- free-text gold
    (
        "text-name",
        "Data Center",
        "The Data Center segment grew the most.",
        "In which AMD segment did sales increase most?",
        "correct",
        False,
    ),
    (
        "text-wrong-name",
        "Data Center",
        "The Gaming segment grew the most.",
        "In which AMD segment did sales increase most?",
        "incorrect",
        False,
    ),
    (
        "text-paraphrase",
        "Customer deposits",
        "The largest liability was customer deposits.",
        "What was the largest liability?",
        "correct",
        False,
    ),
    (
        "text-list",
        "Trillium, Array, and Therachon",
        "Pfizer acquired Array and Therachon and Trillium.",
        "Which companies?",
        "correct",
        False,
    ),
    (
        "text-list-wrong",
        "Trillium, Array, and Therachon",
        "Pfizer acquired Wyeth, Hospira and Medivation.",
        "Which companies?",
        "incorrect",
        False,
    ),
    # --- golds with nothing but a yes/no or a year (nothing to compare must never read as full recall)
    (
        "bare-yes-answer-takes-no-side",
        "Yes.",
        "Apple sells iPhones.",
        "Is 3M capital-intensive?",
        "incorrect",
        False,
    ),
    ("empty-gold", "", "Revenue was $5 billion.", "What was revenue?", "incorrect", False),
    (
        "none-gold-none-answer",
        "There are none",
        "Ulta Beauty does not have any debt securities registered on an exchange.",
        "Which debt securities are registered to trade under Ulta Beauty's name?",
        "correct",
        False,
    ),
    (
        "none-gold-listing-answer",
        "There are none",
        "The 2.000% Notes due 2027 and the 3.050% Notes due 2029 are registered.",
        "Which debt securities are registered to trade under Ulta Beauty's name?",
        "incorrect",
        False,
    ),
    ("year-gold-stated", "2018", "The plan was adopted in 2018.", "In which year?", "correct", False),
    ("year-gold-missed", "2018", "The plan was adopted in 2019.", "In which year?", "incorrect", False),
    # --- basis points: the last digit of "20 bps" is 0.01 percent, not 0.5 points
    ("bps-off-by-40", "20 bps", "The margin improved by 60 bps.", "", "incorrect", False),
    ("bps-vs-percent-off", "20 bps", "The margin improved by 0.6%.", "", "incorrect", False),
    ("bps-vs-percent-equal", "20 bps", "The margin improved by 0.2%.", "", "correct", False),
    # --- a bare decimal for a percent gold: its last digit is 0.1 percent for 0.627
    ("decimal-for-percent-off", "65.4%", "The ratio is 0.627", "", "incorrect", False),
    ("decimal-for-percent-rounded", "65.4%", "The ratio is 0.65", "", "correct", False),
    # --- an abbreviation does not end the gold's headline sentence ("Adj. EBITDA", "Inc.")
    (
        "abbreviation-in-headline",
        "AMCOR's Adj. EBITDA was $2,018mn in FY 2023",
        "AMCOR's Adjusted Non-GAAP EBITDA for FY 2023 was $1,517 million.",
        "What Was AMCOR's Adjusted Non GAAP EBITDA for FY 2023",
        "incorrect",
        False,
    ),
    (
        "abbreviation-in-headline-right",
        "AMCOR's Adj. EBITDA was $2,018mn in FY 2023",
        "Adjusted EBITDA was $2,018 million in fiscal 2023.",
        "What Was AMCOR's Adjusted Non GAAP EBITDA for FY 2023",
        "correct",
        False,
    ),
    # --- a gold of words and figures: agreeing words do not outweigh a different figure
    (
        "words-agree-figure-differs",
        "They could receive $66.56 per share.",
        "Each shareholder could receive about $48.20 per share after liquidation.",
        "How much could each JPM shareholder get if JPM liquidated all of its assets?",
        "incorrect",
        False,
    ),
    (
        "yes-no-gold-figures-only-explain",
        "Yes, not only they distribute the dividends on a routine basis, 3M has also been increasing the per share "
        "dividend for consecutive 65 years",
        "As of early 2023, 3M had a long history of paying dividends on a routine basis and had increased its per "
        "share dividend for over 60 consecutive years.",
        "Does 3M maintain a stable trend of dividend distribution?",
        "correct",
        False,
    ),
    (
        "citation-marker-is-not-a-figure",
        "1",
        "The company has one segment [2].",
        "How many segments?",
        "incorrect",
        False,
    ),
    # --- "Yes," opening a refusal sentence is no answer; an <answer> wrapper hides no "Yes"
    (
        "yes-inside-refusal",
        "Yes, there was a decline of ~42% between FY2023 and Q2 of FY 2024.",
        "Yes, I cannot answer this from the provided passages. The passage does not contain what is needed.",
        "Was there any drop in Cash & Cash equivalents between FY 2023 and Q2 of FY2024?",
        "refusal",
        False,
    ),
    # --- only a change may be matched by the difference of two answer figures
    (
        "difference-is-not-a-level",
        "15%",
        "The gross margin was 40% and the operating margin was 25%.",
        "What was the effective tax rate?",
        "incorrect",
        False,
    ),
    (
        "difference-for-a-change",
        "Operating margin fell by 0.9%.",
        "Operating margin was 19.4% in 2021 and 18.5% in 2022.",
        "How did operating margin change?",
        "correct",
        False,
    ),
]


@pytest.mark.parametrize(
    ("gold", "answer", "question", "verdict", "unit"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_grade_table(gold: str, answer: str, question: str, verdict: str, unit: bool) -> None:
    res = grade(gold, answer, question)
    assert res.verdict == verdict, res.detail
    assert res.unit_mismatch == unit, res.detail


def test_enough_cases() -> None:
    assert len(CASES) >= 60
    assert len({c[0] for c in CASES}) == len(CASES)


def test_result_records_figures_and_method() -> None:
    res = grade("$1577.00", "The capex was $1,577 million in FY2018.", Q_MILLIONS)
    assert res.method == "numeric"
    assert [f.raw for f in res.gold_figures] == ["$1577.00"]
    assert [f.raw for f in res.answer_figures] == ["$1,577 million"]  # the year is not an answer figure
    assert res.matched and res.matched[0][1].value == pytest.approx(1.577e9)
    d = res.to_dict()
    assert d["matched"] == [["$1577.00", "$1,577 million"]] and d["verdict"] == "correct"


def test_llm_grader_only_for_uncertain_free_text() -> None:
    calls: list[tuple[str, str, str]] = []

    def judge(g: str, a: str, q: str) -> str:
        calls.append((g, a, q))
        return "correct"

    # numeric gold: never asked
    grade("$1577.00", "$1,300 million", Q_MILLIONS, llm_grader=judge)
    assert calls == []
    # free text clearly matched: not asked
    grade(
        "Customer deposits",
        "Customer deposits were the largest.",
        "What was the largest liability?",
        llm_grader=judge,
    )
    assert calls == []
    # free text near the threshold: asked, and its verdict is used and counted
    res = grade(
        "Amcor is a global leader in packaging production for various use cases.",
        "Amcor is a global packaging company.",
        "What industry does AMCOR primarily operate in?",
        llm_grader=judge,
    )
    assert len(calls) == 1 and res.method == "llm" and res.verdict == "correct"


def test_llm_grader_bad_output_is_an_error() -> None:
    with pytest.raises(ValueError, match="llm_grader returned"):
        grade(
            "Amcor is a global leader in packaging production for various use cases.",
            "Amcor is a global packaging company.",
            "What industry does AMCOR primarily operate in?",
            llm_grader=lambda g, a, q: "maybe",
        )


def test_match_figure_kinds() -> None:
    g = extract_figures("$1,577 million")[0]
    assert match_figure(g, extract_figures("$1.577 billion")[0]) == "match"
    assert match_figure(g, extract_figures("$1.577 trillion")[0]) == "unit_mismatch"
    assert match_figure(g, extract_figures("15.77%")[0]) == "no"


def test_answer_polarity_and_recall_helpers() -> None:
    assert answer_polarity("Yes, it has.", Q_YN) == ("yes", True)
    assert answer_polarity("No.", Q_YN) == ("no", True)
    assert answer_polarity("Paypal does not have positive working capital.", Q_YN) == ("no", False)
    assert answer_polarity("To determine this, we need the balance sheet.", Q_YN) == (None, False)
    assert content_recall("MGM China", "MGM China had the worst year.", "Which MGM region?") == 1.0
    assert content_recall("MGM China", "Las Vegas had the worst year.", "Which MGM region?") == 0.0
    assert (
        content_recall("N/A", "Anything at all.", "Is it?") is None
    )  # nothing to compare is not full recall
    assert answer_polarity("Let me check. Therefore, the answer is no.", "Did it grow?") == ("no", True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The filing does not provide this information.", True),
        ("I cannot determine the answer from the context.", True),
        ("No se menciona en el documento.", True),
        ("El contexto no proporciona la cifra.", True),
        ("3M does not have a healthy liquidity profile.", False),
        ("PepsiCo has not reported any material legal battles.", False),
        ("The capex was $1,577 million.", False),
        (
            "Revenue was $5.1 billion in 2022. Other details are not provided.",
            False,
        ),  # a figure, then a caveat
        ("Based on the passages provided. The revenue is not stated.", True),  # a preamble, then a refusal
        ("", True),
    ],
)
def test_is_refusal(text: str, expected: bool) -> None:
    assert is_refusal(text) is expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("The premise is incorrect: revenue was $3.1 billion, not $5 billion.", "flagged"),
        ("Actually, the filing reports revenue of $3.1 billion.", "flagged"),
        ("Revenue was $3.1 billion, not $5 billion as the question states.", "flagged"),
        ("The context does not provide the revenue figure.", "declined"),
        ("With revenue of $5 billion, the margin is 10%.", "used"),
        ("The margin is 10%.", "used"),
        # a passing "in fact" / "rather than" in an answer that states the made-up figure as its own
        ("In fact, with revenue of $5 billion, the margin is 10%.", "used"),
        ("Revenue was $5 billion, driven by services rather than products.", "used"),
        # ... but a correction cue without the made-up figure still flags
        ("In fact, revenue was $3.1 billion.", "flagged"),
        ("The $5 billion figure does not appear in the filing; revenue was $3.1 billion.", "flagged"),
        ("There is no such charge in the filing.", "flagged"),
        ("La premisa no coincide con el informe.", "flagged"),
    ],
)
def test_false_premise_response(answer: str, expected: str) -> None:
    assert false_premise_response(answer, ["$5 billion"]) == expected


def test_repeats_premise() -> None:
    assert repeats_premise("With revenue of $5 billion, ...", ["$5 billion"])
    assert not repeats_premise("Revenue was $3.1 billion.", [5e9])
    assert not repeats_premise("The facility was raised to $5.25 billion.", ["$5.2 billion"])  # a real figure
    assert repeats_premise("Net income of $5,200 million was driven by ...", ["$5.2 billion"])


# ------------------------------------------------------------------ this study's own answer kinds (strict grading)
# Answers taken from the recorded answers of this study (extractive lines, table headers and rows, copies, echoes,
# truncations), each labelled by hand by us — our labels, not a human study. "not correct" means: the grade is not
# a certain "correct" (it is incorrect, a refusal, or uncertain, and an uncertain grade never counts as correct).

STUDY_CASES = [
    # (question, gold, answer, correct?)
    (  # a yes read off a sentence about the stock ticker: sharing the company's name is not being about the question
        "Has MGM Resorts paid dividends to common shareholders in FY2022?",
        "Yes. MGM maintained 0.01$ per share annual dividend through out FY 2022.",
        "Our common stock is traded on the New York Stock Exchange (“NYSE”) under the symbol “MGM.” [1]",
        False,
    ),
    (  # a table header shares the gold's words and states nothing
        "How much was the Real change in Sales for AMCOR in FY 2023 vs FY 2022, if we exclude the impact of FX "
        "movement, passthrough costs and one-off items?",
        "The Real Growth was flat in FY 2023 vs FY 2022.",
        "Components of Fiscal 2023 Net Sales growth [1]",
        False,
    ),
    (  # a table row holds the gold figure beside the other years' figures: no figure is chosen
        "What is Pfizer's FY2021 net income attributable to common shareholders (in USD millions)?",
        "$21,979 million",
        "Net income attributable to Pfizer Inc. common shareholders $ 21,979 $ 9,159 $ 16,026 [1]",
        False,
    ),
    (  # the same figure stated as an answer
        "What is Pfizer's FY2021 net income attributable to common shareholders (in USD millions)?",
        "$21,979 million",
        "Pfizer's net income attributable to common shareholders was $21,979 million in 2021 [1].",
        True,
    ),
    (  # an extractive line cut mid-list: some gold words, no answer
        "What was the key agenda of the AMCOR's 8k filing dated 1st July 2022?",
        "Amcor Finance (USA), Inc. and Amcor Flexibles North America, Inc., entered into supplemental indentures "
        "relating to Guaranteed Senior Notes due 2026 and 2031.",
        "4.6 Second Supplemental Indenture, dated as of June 30, 2022, among Amcor Finance (USA), Inc., Amcor "
        "Flexibles North [1]",
        False,
    ),
    (  # a yes read softly from a sentence that is about the question: uncertain, so not counted correct
        "Has CVS Health paid dividends to common shareholders in Q2 of FY2022?",
        "Yes, CVS paid a $ 0.55 dividend per share every quarter in FY2022",
        "CVS Health has paid cash dividends every quarter since becoming a public company. [1]",
        False,
    ),
    (  # the quote prompt's own example, echoed
        "What is the FY2018 capital expenditure amount (in USD millions) for 3M?",
        "$1577.00",
        "net sales were $8.1 billion [2]",
        False,
    ),
    (  # a copy of the passages block
        "What is Boeing's year end FY2018 net property, plant, and equipment (in USD millions)?",
        "$12645.00",
        '<passage n="3" source="BOEING_2018_10K p. 33">The following table provides details of the accounting '
        "quantities and firm orders by program as of December 31.",
        False,
    ),
    (  # an answer cut at the token limit before it says anything
        "Does 3M have a reasonably healthy liquidity profile based on its quick ratio for Q2 of FY2023?",
        "No. The quick ratio for 3M was 0.96 by Jun'23 close, which needs a bit of an improvement to touch the "
        "1x mark",
        "To determine whether 3M has a reasonably healthy liquidity profile, we need to calculate the quick ratio. "
        "The quick ratio is calculated as (current assets - inventories) / current liabilities. From the balance",
        False,
    ),
    (  # a terse choice answer is an answer
        "Which of the three activities (operating, investing, financing) brought in the most cash for Best Buy in "
        "FY2023?",
        "Operating activities",
        "Operating activities [1]",
        True,
    ),
    (  # an explicit yes with the gold's evidence
        "Has MGM Resorts paid dividends to common shareholders in FY2022?",
        "Yes. MGM maintained 0.01$ per share annual dividend through out FY 2022.",
        "Yes. MGM Resorts paid an annual dividend of $0.01 per share in 2022 [1].",
        True,
    ),
]


@pytest.mark.parametrize(("question", "gold", "answer", "expected"), STUDY_CASES)
def test_strict_grading_of_this_studys_answer_kinds(question, gold, answer, expected):
    r = grade(gold, answer, question)
    strictly_correct = r.verdict == "correct" and not r.uncertain
    assert strictly_correct is expected, r.detail


def test_table_like_lines_and_statements():
    from finrag.score.grader import table_like

    assert table_like("Components of Fiscal 2023 Net Sales growth [1]")
    assert table_like("Total revenue 2022 2021 $ 5,000 $ 4,000")
    assert not table_like("Revenue grew 5% in 2022.")
    assert not table_like("The quick ratio was 1.2 in 2022 and 1.1 in 2021.")
    assert not table_like("Operating activities")
    assert not table_like("$1,577 million [1]")
