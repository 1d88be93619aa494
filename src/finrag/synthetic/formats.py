"""Spanish number formatting for the synthetic corpus (``13.668,9``, ``2,2 %``, ``1.250 millones de euros``).

Why not ``locale``: it depends on the locales installed on the machine and on process-global state, and the corpus
must be byte-identical everywhere. The rules are few: ``.`` groups thousands, ``,`` marks decimals, a space
before ``%``.
"""

from __future__ import annotations

import re

SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_SUP_RE = re.compile(f"[{SUPERSCRIPTS}]+")


def sup(n: int) -> str:
    """Footnote marker: 1 -> '¹', 12 -> '¹²'."""
    return "".join(SUPERSCRIPTS[int(d)] for d in str(n))


def strip_markers(text: str) -> str:
    """Remove superscript footnote markers (so '2.345,6¹' reads as '2.345,6')."""
    return _SUP_RE.sub("", text)


def num(value: float, decimals: int = 1) -> str:
    """Spanish number: thousands with '.', decimals with ','; a leading '-' for negatives."""
    s = f"{abs(value):,.{decimals}f}"
    s = s.replace(",", "\x00").replace(".", ",").replace("\x00", ".")
    if s.strip("0.,") == "":  # -0,0 reads as 0,0
        return s
    return ("-" if value < 0 else "") + s


def pct(value: float, decimals: int = 1) -> str:
    return f"{num(value, decimals)} %"


def meur(value: float, decimals: int = 1) -> str:
    return f"{num(value, decimals)} millones de euros"


def spanish_variants(value: float, max_decimals: int = 2) -> list[str]:
    """Every Spanish writing of ``value`` with 0..max_decimals decimals that reads back exactly as ``value``."""
    out = []
    for d in range(max_decimals + 1):
        if abs(round(value, d) - value) < 1e-9:
            out.append(num(value, d))
    return out


def figure_in_text(value: float, text: str) -> bool:
    """True when ``value`` is written in Spanish in ``text`` as a whole number token (not inside a larger one)."""
    for v in spanish_variants(abs(value)):
        pattern = rf"(?<![\d.,]){re.escape(v)}(?![\d]|[.,]\d)"
        if re.search(pattern, text):
            return True
    return False
