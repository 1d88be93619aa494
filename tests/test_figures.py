"""Tests of number extraction: formats, scales, units, signs, years, and what is not a figure."""

from __future__ import annotations

import pytest

from finrag.score.numbers import detect_number_lang, extract_figures, normalise_number, stated_scale


def one(text: str, lang: str | None = None, default_scale: float | None = None):
    figs = [f for f in extract_figures(text, lang, default_scale) if not f.is_year]
    assert len(figs) == 1, [f.raw for f in figs]
    return figs[0]


@pytest.mark.parametrize(
    ("raw", "lang", "value"),
    [
        ("1,234.5", "en", 1234.5),
        ("1.234,5", "es", 1234.5),
        ("13.668,9", None, 13668.9),
        ("2,2", None, 2.2),
        ("1,234", "en", 1234.0),
        ("1,234", "es", 1.234),
        ("1.234", "en", 1.234),
        ("1.234", "es", 1234.0),
        ("0.654", "es", 0.654),
        ("(1,234)", None, -1234.0),
        ("-3", None, -3.0),
        ("1,234,567", None, 1234567.0),
        ("1.234.567", None, 1234567.0),
        ("abc", None, None),
        ("1,2,3", None, None),
    ],
)
def test_normalise_number(raw: str, lang: str | None, value: float | None) -> None:
    got = normalise_number(raw, lang)
    assert got == (pytest.approx(value) if value is not None else None)


@pytest.mark.parametrize(
    ("text", "value", "scale", "currency"),
    [
        ("$1.5 billion", 1.5e9, 1e9, "USD"),
        ("$1,577 million", 1.577e9, 1e6, "USD"),
        ("-$1561M", -1.561e9, 1e6, "USD"),
        ("$ 124Mn", 1.24e8, 1e6, "USD"),
        ("US$ 3.2 bn", 3.2e9, 1e9, "USD"),
        ("$1,577MM", 1.577e9, 1e6, "USD"),
        ("$25K", 2.5e4, 1e3, "USD"),
        ("€13.668,9 M", 1.36689e10, 1e6, "EUR"),
        ("13.668,9 millones", 1.36689e10, 1e6, None),
        ("2,5 miles de millones", 2.5e9, 1e9, None),
        ("3 mil millones de euros", 3e9, 1e9, "EUR"),
        ("1.2 trillion", 1.2e12, 1e12, None),
        ("5 thousand", 5e3, 1e3, None),
        ("USD 700", 700.0, 1.0, "USD"),
        ("100 dollars", 100.0, 1.0, "USD"),
    ],
)
def test_scales_and_currency(text: str, value: float, scale: float, currency: str | None) -> None:
    f = one(text)
    assert f.value == pytest.approx(value)
    assert f.scale == scale and f.currency == currency


def test_parentheses_negative() -> None:
    f = one("Net revenue was $(473) million")
    assert f.value == pytest.approx(-4.73e8) and f.in_parens
    g = one("(1,234)")
    assert g.value == -1234.0
    assert one("(0.6)%").is_percent


@pytest.mark.parametrize(
    ("text", "pct", "bps", "pp", "value"),
    [
        ("5.1%", True, False, False, 5.1),
        ("2,2 %", True, False, False, 2.2),
        ("12 percent", True, False, False, 12.0),
        ("20 bps", False, True, False, 20.0),
        ("25 b.p.", False, True, False, 25.0),
        ("15 basis points", False, True, False, 15.0),
        ("0.2 percentage points", False, False, True, 0.2),
        ("30 puntos básicos", False, True, False, 30.0),
    ],
)
def test_percent_and_basis_points(text: str, pct: bool, bps: bool, pp: bool, value: float) -> None:
    f = one(text)
    assert (f.is_percent, f.is_bps, f.is_pp) == (pct, bps, pp)
    assert f.value == pytest.approx(value)


def test_percent_value_in_percent_units() -> None:
    assert one("20 bps").percent_value() == pytest.approx(0.2)
    assert one("5%").percent_value() == 5.0
    assert one("$5").percent_value() is None


@pytest.mark.parametrize(
    ("text", "years"),
    [
        ("In 2022 revenue rose.", [2022.0]),
        ("FY2023 results", [2023.0]),
        ("FY 2019 and FY23", [2019.0, 23.0]),
        ("Q2 2023 close", [2023.0]),
        ("Jun'23 close", [23.0]),
        ("from FY2015 - FY2017", [2015.0, 2017.0]),
        ("2021-2022", [2021.0, 2022.0]),
    ],
)
def test_years_are_flagged(text: str, years: list[float]) -> None:
    figs = extract_figures(text)
    assert [f.value for f in figs if f.is_year] == years
    assert all(f.is_year for f in figs)


@pytest.mark.parametrize(
    "text",
    [
        "3M's capex",  # a company name, not three million
        "Form 10-K and 8-K",
        "Trading symbol MMM26",
        "COVID-19 vaccine",
        "In Q2 and H1",
        "May 26, 2023",
        "1st July",
        "(1) usual and customary pricing (2) PBM litigation",
        "1. Find revenue\n2. Divide",
        "the 777X program",
    ],
)
def test_not_figures(text: str) -> None:
    assert [f.raw for f in extract_figures(text) if not f.is_year] == []


def test_a_year_is_not_an_amount() -> None:
    assert not one("$2,018 million").is_year
    assert not one("2018%").is_year


def test_stated_scale() -> None:
    assert stated_scale("What is capex (in USD millions)?") == 1e6
    assert stated_scale("Answer in USD billions.") == 1e9
    assert stated_scale("($ in thousands)") == 1e3
    assert stated_scale("(Millions)") == 1e6
    assert stated_scale("en millones de euros") == 1e6
    assert stated_scale("en miles de euros") == 1e3
    assert stated_scale("What is revenue?") is None


def test_default_scale_applies_to_plain_amounts_only() -> None:
    figs = extract_figures("Capex was 1,577 and margin 5% in 2018; EPS $0.55 per share.", default_scale=1e6)
    by_raw = {f.raw: f for f in figs}
    assert by_raw["1,577"].value == pytest.approx(1.577e9) and not by_raw["1,577"].scale_explicit
    assert by_raw["5%"].value == 5.0
    assert by_raw["2018"].is_year and by_raw["2018"].value == 2018.0
    assert by_raw["$0.55"].value == pytest.approx(0.55)
    # a scale stated in the text wins over the default
    assert one("(in thousands) 1,577", default_scale=1e6).value == pytest.approx(1.577e6)


def test_spanish_detection_and_hint() -> None:
    assert detect_number_lang("El beneficio fue de 13.668,9 millones") == "es"
    assert detect_number_lang("Revenue was 1,234.5 million") == "en"
    assert one("1.234", lang="es").value == 1234.0
    assert one("1.234", lang="en").value == pytest.approx(1.234)
    # auto-detect: an unambiguous Spanish number elsewhere settles the ambiguous one
    figs = extract_figures("Ventas de 2,5 y coste de 1.234")
    assert [f.value for f in figs] == [pytest.approx(2.5), pytest.approx(1234.0)]


def test_positions_and_decimals() -> None:
    text = "Revenue was $1,234.50 million."
    f = one(text)
    assert text[f.start : f.end] == f.raw == "$1,234.50 million"
    assert f.decimals == 2
    assert one("1,234").decimals == 0


def test_compound_durations_are_not_amounts():
    assert [f.raw for f in extract_figures("The 3-year average net margin is 3.0%.")] == ["3.0%"]
    for text in ("a 10-year note", "a 52-week high", "over a 30-day period", "a 2-for-1 stock split"):
        assert extract_figures(text) == []
    assert [f.raw for f in extract_figures("over the 5 years")] == ["5"]  # a count stays a figure
