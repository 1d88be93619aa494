"""Find the numbers in a financial answer, with their scale, unit and sign, so two answers can be compared.

Why hand-written: general quantity parsers (e.g. quantulum3) do not know accounting conventions — ``(1,234)`` as a
negative, ``bps``, ``$1.5bn``/``MM``, Spanish ``13.668,9`` with ``millones`` — nor that ``FY2023`` or ``Q2`` are not
amounts. Everything here is a small, documented set of regular expressions.

Conventions of :class:`Figure`:

* ``value`` is fully scaled: ``"$1.5 billion"`` -> ``1.5e9``; ``"1,577"`` under a stated ``"in millions"`` ->
  ``1.577e9``. Percentages stay in percent units (``"5.1%"`` -> ``5.1``, ``is_percent``); basis points stay in bps
  (``"20 bps"`` -> ``20``, ``is_bps``); :meth:`Figure.percent_value` gives both in percent units.
* Signs: a leading minus or accounting parentheses make ``value`` negative (``in_parens`` records which).
* Years (1990-2035 standing alone, ``FY2023``, ``FY23``, ``Q2 2023``, ``Jun'23``) are returned with ``is_year``;
  day numbers of dates, ordinals, quarter/half labels (``Q2``, ``H1``), form names (``10-K``), list markers and
  codes glued to letters (``MMM26``, ``COVID-19``) are not figures at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "Figure",
    "detect_number_lang",
    "extract_figures",
    "normalise_number",
    "shown_number_lang",
    "stated_scale",
]

SCALE_WORDS: dict[str, float] = {
    "thousand": 1e3,
    "thousands": 1e3,
    "k": 1e3,
    "million": 1e6,
    "millions": 1e6,
    "m": 1e6,
    "mm": 1e6,
    "mn": 1e6,
    "mln": 1e6,
    "mio": 1e6,
    "billion": 1e9,
    "billions": 1e9,
    "b": 1e9,
    "bn": 1e9,
    "bln": 1e9,
    "trillion": 1e12,
    "trillions": 1e12,
    "tn": 1e12,
    # Spanish (long scale: "billón" is 1e12)
    "mil": 1e3,
    "miles": 1e3,
    "millón": 1e6,
    "millon": 1e6,
    "millones": 1e6,
    "mill.": 1e6,
    "mil millones": 1e9,
    "miles de millones": 1e9,
    "millardos": 1e9,
    "billón": 1e12,
    "billones": 1e12,
}

_CURRENCY_CANON = {
    "$": "USD",
    "us$": "USD",
    "usd": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "dólares": "USD",
    "€": "EUR",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "£": "GBP",
    "gbp": "GBP",
    "¥": "JPY",
}

# thousands groups must end the run of digits: "7.2105" is one decimal number, not "7.210" and "5"
_NUM = r"(?:\d{1,3}(?:[,.\u00a0\u202f]\d{3})+(?!\d)(?:[.,]\d+)?|\d+(?:[.,]\d+)?|[.,]\d+)"
_CUR_PRE = r"(?:US\$|USD|\$|€|EUR|£|GBP|¥)"
_SCALE_ALT = (
    r"miles\s+de\s+millones|mil\s+millones|thousands?|millions?|billions?|trillions?|millones|mill[óo]n|mill\."
    r"|millardos|bill[óo]n|billones|miles|mil|bln|mln|mio|bn|mn|mm|tn|k|m|b(?!\.p\.)"
)
_PCT_ALT = (
    r"(?P<pp>percentage\s+points?|pct\.?\s*pts?|ppts?|pp|p\.p\.|puntos\s+porcentuales)"
    r"|(?P<bps>basis\s+points?|bps|bp|b\.p\.|puntos\s+b[áa]sicos|p\.b\.|pb)"
    r"|(?P<pct>%|percent|per\s?cent|por\s?ciento)"
)
_CUR_POST = r"(?:USD|EUR|U\.?S\.?\s+dollars?|dollars?|d[óo]lares|euros?|€|\$)"

_FIGURE_RE = re.compile(
    rf"""
    (?:(?P<cur0>{_CUR_PRE})\s?(?=\())?
    (?P<open>\(\s*)?
    (?P<sign1>[-−–]\s?)?
    (?:(?P<cur1>{_CUR_PRE})\s?)?
    (?P<sign2>[-−–])?
    (?P<num>{_NUM})
    (?:\s?(?P<scale>{_SCALE_ALT})(?![A-Za-zÀ-ÿ]))?
    (?:\s?(?:{_PCT_ALT})(?![A-Za-zÀ-ÿ]))?
    (?:\s?(?:de\s+)?(?P<cur2>{_CUR_POST})(?![A-Za-zÀ-ÿ]))?
    (?P<close>\s*\))?
    (?:(?<=\))\s?(?P<scale2>{_SCALE_ALT})(?![A-Za-zÀ-ÿ]))?
    (?:(?<=\))\s?(?P<pct2>%|percent))?
    """,
    re.VERBOSE | re.IGNORECASE,
)

_MONTHS = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|jun(?:e)?|jul(?:y)?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre"
    r"|octubre|noviembre|diciembre"
)
_MONTH_BEFORE = re.compile(rf"(?:{_MONTHS})\.?\s+$", re.IGNORECASE)
_MONTH_AFTER = re.compile(rf"^\s*(?:de\s+)?(?:{_MONTHS})\b", re.IGNORECASE)
_YEAR_PREFIX = re.compile(
    r"(?:\b(?:FY|CY|FQ|Q[1-4]|H[12]|fiscal(?:\s+year)?|año|ejercicio)\s?'?|'\s?)$", re.IGNORECASE
)
_ORDINAL_AFTER = re.compile(r"^(?:st|nd|rd|th|º|ª|er|o)\b", re.IGNORECASE)
_FORM_AFTER = re.compile(r"^-(?:K|Q|F|KSB|QSB)\b")
# "3-year average", "52-week high", "30-day period", "2-for-1 split": a compound adjective, not an amount
_DURATION_AFTER = re.compile(r"^-(?:years?|months?|weeks?|days?|quarters?|hours?|for-\d)\b", re.IGNORECASE)
_LIST_MARKER = re.compile(r"(?:^|\n)[ \t]*$")

_STATED_SCALE_RE = re.compile(
    r"""
    (?:\b(?:in|en|expressed\ in|expresad[oa]s?\ en|all\ figures\ in)\s+
        (?:(?:US\$|USD|\$|€|EUR|dollars|euros|d[óo]lares)\s+)?(?:of\s+)?
        (?P<a>thousands|millions|billions|trillions|miles\s+de\s+millones|miles|millones|mn|bn|mm|k)\b)
    |(?:(?:US\$|USD|\$|€|EUR)\s+in\s+(?P<b>thousands|millions|billions))\b
    |(?:\(\s*(?P<c>thousands|millions|billions)\b)
    |(?:\(\s*(?:amounts\s+)?(?:US\$|USD|\$|€|EUR)\s+(?P<d>thousands|millions|billions)\b)
    |(?P<e>(?:\$|\bUSD)\s?000s\b|\(\s*(?:in\s+)?(?:\$|USD)\s?000\s*\))
    """,
    re.VERBOSE | re.IGNORECASE,
)

_ES_HINT = re.compile(r"\b(?:millones|miles|ejercicio|beneficio|ingresos|el|la|los|del|por\s+ciento)\b", re.I)
_ES_NUM = re.compile(
    r"\d{1,3}(?:\.\d{3})+,\d+|(?<![\d.,])\d+,\d{1,2}(?![\d,.])|\d{1,3}(?:\.\d{3}){2,}(?![\d,])"
)
_EN_NUM = re.compile(
    r"\d{1,3}(?:,\d{3})+\.\d+|(?<![\d.,])\d+\.\d{1,2}(?![\d,.])|\d{1,3}(?:,\d{3}){2,}(?![\d.])"
)


@dataclass(frozen=True)
class Figure:
    """One number found in a text; see the module docstring for the conventions."""

    value: float
    raw: str
    start: int
    end: int
    is_percent: bool = False
    is_bps: bool = False
    is_pp: bool = False  # "percentage points": compared as percent
    scale: float = 1.0
    scale_explicit: bool = False  # the scale came from the figure itself ("1.5bn"), not a stated default
    currency: str | None = None
    is_year: bool = False
    in_parens: bool = False  # accounting negative "(1,234)"
    decimals: int = 0  # digits written after the decimal mark: the precision the writer claimed

    @property
    def is_ratio_unit(self) -> bool:
        """Percent, percentage points or basis points."""
        return self.is_percent or self.is_bps or self.is_pp

    def percent_value(self) -> float | None:
        """Value in percent units (bps / 100), or None for a non-percent figure."""
        if self.is_bps:
            return self.value / 100.0
        if self.is_percent or self.is_pp:
            return self.value
        return None


def shown_number_lang(text: str) -> str | None:
    """'es' / 'en' when the text's own number formats tell ("2.431,7" / "2,431.7"), else None."""
    es, en = len(_ES_NUM.findall(text)), len(_EN_NUM.findall(text))
    if es == en:
        return None
    return "es" if es > en else "en"


def detect_number_lang(text: str) -> str:
    """'es' when the text's number formats (or words) say decimal comma, else 'en'."""
    es = len(_ES_NUM.findall(text))
    en = len(_EN_NUM.findall(text))
    if es > en:
        return "es"
    if es == en and es == 0 and len(_ES_HINT.findall(text)) >= 2:
        return "es"
    return "en"


def normalise_number(raw: str, lang: str | None = None) -> float | None:
    """Parse a written number ("1,234.5", "1.234,5", "2,2", "(1,234)", "-3") to a float; None if it is not one.

    ``lang`` ("en" / "es") settles the ambiguous forms "1,234" and "1.234"; without it English is assumed for
    those, unambiguous forms ("13.668,9", "2,2") are read as written.
    """
    s = raw.strip().replace("\u00a0", "").replace("\u202f", "").replace(" ", "")
    neg = False
    if s.startswith("(") and s.endswith(")"):
        neg, s = True, s[1:-1]
    if s[:1] in "-−–":
        neg, s = True, s[1:]
    if not s or not re.fullmatch(r"[\d.,]+", s) or not re.search(r"\d", s):
        return None
    es = (lang or "en").lower().startswith("es")
    dots, commas = s.count("."), s.count(",")
    if dots and commas:
        dec = "." if s.rfind(".") > s.rfind(",") else ","
        thou = "," if dec == "." else "."
        if s.count(dec) > 1:
            return None
        s = s.replace(thou, "").replace(dec, ".")
    elif commas:
        head, _, tail = s.rpartition(",")
        if commas > 1:
            if not re.fullmatch(r"\d{1,3}(?:,\d{3})+", s):
                return None
            s = s.replace(",", "")
        elif len(tail) == 3 and not es and head not in ("", "0"):
            s = s.replace(",", "")  # English thousands
        else:
            s = s.replace(",", ".")  # decimal comma
    elif dots:
        head, _, tail = s.rpartition(".")
        if dots > 1:
            if not re.fullmatch(r"\d{1,3}(?:\.\d{3})+", s):
                return None
            s = s.replace(".", "")
        elif len(tail) == 3 and es and head not in ("", "0"):
            s = s.replace(".", "")  # Spanish thousands
    try:
        v = float(s)
    except ValueError:
        return None
    return -v if neg else v


def stated_scale(text: str) -> float | None:
    """The default scale a text announces ("in USD millions", "(in thousands)", "en millones"), or None."""
    m = _STATED_SCALE_RE.search(text or "")
    if not m:
        return None
    if m.group("e"):
        return 1e3  # "($000s)": amounts in thousands
    word = re.sub(r"\s+", " ", (m.group("a") or m.group("b") or m.group("c") or m.group("d")).lower())
    if word == "miles":
        return 1e3
    return SCALE_WORDS.get(word) or SCALE_WORDS.get(word.rstrip("s"))


def extract_figures(text: str, lang: str | None = None, default_scale: float | None = None) -> list[Figure]:  # noqa: C901 (one branch per figure notation)
    """All figures in ``text`` in order of appearance.

    ``lang`` ("en"/"es"; auto-detected when None) resolves "1,234" vs "1.234". ``default_scale`` applies to plain
    amounts (no scale word, not percent, not a year) when the text itself states no scale ("in millions"); a
    scale stated in the text wins over ``default_scale``.
    """
    if not text:
        return []
    text = str(text)
    lang = lang or detect_number_lang(text)
    text_scale = stated_scale(text)
    dflt = text_scale or default_scale
    out: list[Figure] = []
    for m in _FIGURE_RE.finditer(text):
        num = m.group("num")
        s0, e0 = m.start("num"), m.end("num")
        before = text[max(0, s0 - 40) : s0]
        lead = m.start()
        after_num = text[e0 : e0 + 12]
        # glued to a word on the left ("MMM26", "COVID-19", "Q2"): a code, unless it is a year label ("FY2023")
        left = text[lead - 1] if lead > 0 else ""
        left_of_num = text[s0 - 1] if s0 > 0 else ""
        year_label = bool(_YEAR_PREFIX.search(before))
        glued_code = (
            m.group("cur1") is not None and m.end("cur1") == s0
        )  # "USD7.2bn": the code is the currency
        if (
            left.isalpha() or (left_of_num.isalpha() and not glued_code) or left_of_num == "_"
        ) and not year_label:
            continue
        sign = m.group("sign1") or m.group("sign2")
        sign_pos = m.start("sign1") if m.group("sign1") else (m.start("sign2") if m.group("sign2") else -1)
        hyphenated = sign_pos > 0 and (text[sign_pos - 1].isalnum() or text[sign_pos - 1] in ".%)")
        if hyphenated:
            if not re.fullmatch(r"(?:19|20)\d\d", num) and text[sign_pos - 1].isalpha():
                continue  # "COVID-19": a code
            sign = None  # "2021-2022", "5-10%": a range dash, not a minus
        if not (m.group("scale") or m.group("pct") or m.group("bps") or m.group("pp") or m.group("scale2")):
            # "777X", "2022Q2", "1st", "10th": part of a word or an ordinal ("2.5x" is a multiple: kept)
            if (after_num[:1].isalpha() or after_num[:1] == "_") and not re.match(r"^x\b", after_num):
                continue
            if _FORM_AFTER.match(after_num) or _DURATION_AFTER.match(after_num):
                continue
        # dates: "May 26, 2023" / "26 May 2023" (the day); the year itself is flagged below
        digits_only = re.fullmatch(r"\d{1,2}", num) is not None
        if digits_only and (_MONTH_BEFORE.search(before) or _MONTH_AFTER.match(text[e0:])):
            continue
        # list markers: "(1) usual and customary ...", "1. Find ..." at a line start
        bare_parens = (
            m.group("open")
            and m.group("close")
            and not (m.group("cur0") or m.group("cur1") or m.group("scale"))
        )
        if digits_only and bare_parens and m.group("pct") is None and int(num) < 30:
            continue
        if digits_only and re.match(r"^[.)]\s", text[e0 : e0 + 2]) and _LIST_MARKER.search(text[:lead]):
            continue
        value = normalise_number(num, lang)
        if value is None:
            continue
        is_pct = m.group("pct") is not None or m.group("pct2") is not None
        is_bps = m.group("bps") is not None
        is_pp = m.group("pp") is not None
        cur_raw = (m.group("cur0") or m.group("cur1") or m.group("cur2") or "").strip().lower()
        if re.fullmatch(r"u\.?s\.?\s+dollars?", cur_raw):
            cur_raw = "usd"  # "U.S. dollars"
        currency = _CURRENCY_CANON.get(cur_raw) if cur_raw else None
        scale_word = m.group("scale") or m.group("scale2")
        scale, explicit = 1.0, False
        if scale_word:
            sw = re.sub(r"\s+", " ", scale_word.lower())
            # bare "m"/"b"/"k" need a currency ("$5m"; "3M" is a company, "5 m" metres); "mil" needs Spanish
            loose_letter = sw in ("m", "b", "k") and not currency
            if not loose_letter and not (sw == "mil" and lang != "es" and not currency):
                scale, explicit = SCALE_WORDS.get(sw, 1.0), True
            elif text[e0 : e0 + 1].isalpha():
                continue  # "3M": a name, not three million
        neg = bool(sign)
        in_parens = bool(m.group("open") and m.group("close"))
        is_plain_int = re.fullmatch(r"\d{4}", num) is not None
        is_year = False
        if not (is_pct or is_bps or is_pp or currency or explicit or in_parens or neg):
            standalone = is_plain_int and 1990 <= int(num) <= 2035
            is_year = standalone or (year_label and re.fullmatch(r"\d{2}|\d{4}", num) is not None)
        if (neg or in_parens) and value > 0:
            value = -value
        if not (is_pct or is_bps or is_pp or is_year or explicit) and dflt:
            per_unit = re.match(
                r"^\s*(?:per|a|/)\s*(?:share|unit|diluted|basic)\b", text[m.end() : m.end() + 20], re.I
            )
            if not per_unit:
                scale = dflt
        # trim the captured text to what belongs to the figure (drop an unmatched parenthesis)
        start, end = m.start(), m.end()
        if m.group("open") and not m.group("close"):
            start = m.end("open")
        if m.group("close") and not m.group("open"):
            end = m.end() - len(m.group("close"))
        if m.group("sign1") and not sign:
            start = m.end("sign1")
        raw = text[start:end].strip()
        canon = num.replace("\u00a0", "").replace("\u202f", "")
        # decimals as written, after resolving which mark is the decimal one
        dec = 0
        if re.search(r"[.,]\d+$", canon):
            tail = re.split(r"[.,]", canon)[-1]
            as_thousands = abs(abs(value) - abs(float(canon.replace(",", "").replace(".", "")))) < 1e-9
            dec = 0 if as_thousands else len(tail)
        out.append(
            Figure(
                value=value * scale,
                raw=raw,
                start=start,
                end=end,
                is_percent=is_pct,
                is_bps=is_bps,
                is_pp=is_pp,
                scale=scale,
                scale_explicit=explicit,
                currency=currency,
                is_year=is_year,
                in_parens=in_parens,
                decimals=dec,
            )
        )
    return out
