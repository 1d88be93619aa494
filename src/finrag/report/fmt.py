"""How the report prints numbers: one place, used by the views and as the templates' filters."""

from __future__ import annotations

import math


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def fmt(x, digits: int = 2) -> str:
    """Numbers as the report prints them: fixed digits, 'n/a' for missing or NaN."""
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        if math.isnan(x):
            return "n/a"
        return f"{x:,.{digits}f}"
    return str(x)


def pct(x, digits: int = 1) -> str:
    if _missing(x):
        return "n/a"
    return f"{100 * x:.{digits}f}%"


def ci(pair, digits: int = 2) -> str:
    if not pair or any(_missing(v) for v in pair):
        return "n/a"
    return f"[{pair[0]:.{digits}f}, {pair[1]:.{digits}f}]"


def pctci(pair, digits: int = 1) -> str:
    """A proportion's interval in percent, to sit beside pct()."""
    if not pair or any(_missing(v) for v in pair):
        return "n/a"
    return f"[{100 * pair[0]:.{digits}f}, {100 * pair[1]:.{digits}f}]"


def pp(x, digits: int = 1) -> str:
    """A difference of shares in percentage points."""
    return "n/a" if _missing(x) else f"{100 * x:.{digits}f}"


def claims_judged(run: dict) -> int:
    """Claims a model judge ran on (its per-benchmark binary n summed): runs may take shorter prefixes."""
    return sum(b["binary"]["n"] for b in run["benchmarks"].values())


def names(xs, sep: str = ", ") -> str:
    return sep.join(str(x) for x in xs)


FILTERS = {"fmt": fmt, "pct": pct, "ci": ci, "pctci": pctci, "pp": pp, "claims_judged": claims_judged}
