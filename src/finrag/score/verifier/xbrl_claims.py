"""Verified financial claims from inline XBRL: each tagged figure in a filing's table is ground truth.

An `ix:nonFraction` fact carries its concept, its period (through its context), its `scale` and `sign`. The
visible row label and the period turn it into a claim in plain words ("Caterpillar's Total sales and revenues
for the three months ended June 30, 2023 were $17,318 million."), and the rendered table rows around it are the
evidence a reader would check it against. Unsupported claims come from controlled perturbations of the same
fact, so the only thing that differs between a positive and its negative is the thing a judge must notice:

- `value`: the figure off by 5-60% (never within 1%), formatted alike;
- `scale`: million <-> billion / thousand with the same digits;
- `sign`: a loss stated as a gain (or the reverse);
- `period`: the same row's figure for another period, stated for this one;
- `neighbour`: the adjacent row's figure in the same column;
- `direction`: "increased" for a decrease (or the reverse) between two periods;
- `other_table`: the right claim shown with another table of the same filing (unsupported, not contradicted).

Only filings the mirror marks as training-only (`edgar_train/`, companies FinanceBench does not cover) are used:
FinanceBench's documents and their HTML stand-ins are the study's test set.
"""

from __future__ import annotations

import csv
import datetime as dt
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import lxml.etree

from finrag.score.verifier.pairs import SCALE_WORD, ClaimPair, format_money, perturb_value

_IX = "{http://www.xbrl.org/2013/inlineXBRL}"
_XBRLI = "{http://www.xbrl.org/2003/instance}"
_MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]  # fmt: skip
_NUM = re.compile(r"^\(?\s*[\d,]+(\.\d+)?\s*\)?$")


@dataclass
class Fact:
    concept: str
    context: str
    value: float  # signed, in units (scale applied)
    display: str  # digits as shown
    scale: int
    decimals_shown: int
    unit: str  # "usd", "usd_per_share", "shares"
    row: int
    col: int


@dataclass
class Table:
    rows: list[list[str]]
    facts: list[Fact]


def training_filings(mirror: Path) -> list[tuple[Path, str]]:
    """(path, company) of every filing MANIFEST.csv marks as training-only; nothing else is ever read here."""
    out = []
    with open(Path(mirror) / "MANIFEST.csv", newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["kind"] == "edgar_html_train" and "training only" in row.get("note", ""):
                p = Path(mirror) / row["local_path"]
                if p.exists():
                    out.append((p, row["company"]))
    return sorted(out)


def _date(s: str) -> dt.date:
    return dt.date.fromisoformat(s.strip()[:10])


def _contexts(root) -> dict[str, tuple[dt.date | None, dt.date, bool]]:
    """context id -> (start or None for an instant, end, dimensional?)."""
    out: dict[str, tuple[dt.date | None, dt.date, bool]] = {}
    for c in root.iter(f"{_XBRLI}context"):
        per = c.find(f"{_XBRLI}period")
        if per is None:
            continue
        inst = per.find(f"{_XBRLI}instant")
        seg = c.find(f"{_XBRLI}entity/{_XBRLI}segment") is not None
        try:
            if inst is not None:
                out[c.get("id")] = (None, _date(inst.text or ""), seg)
            else:
                out[c.get("id")] = (
                    _date(per.findtext(f"{_XBRLI}startDate") or ""),
                    _date(per.findtext(f"{_XBRLI}endDate") or ""),
                    seg,
                )
        except ValueError:
            continue
    return out


def _units(root) -> dict[str, str]:
    out = {}
    for u in root.iter(f"{_XBRLI}unit"):
        text = " ".join(x.text or "" for x in u.iter() if x.text).lower()
        if "divide" in "".join(str(x.tag) for x in u.iter()).lower() and "usd" in text and "shares" in text:
            out[u.get("id")] = "usd_per_share"
        elif "usd" in text:
            out[u.get("id")] = "usd"
        elif "shares" in text:
            out[u.get("id")] = "shares"
    return out


def _text(el) -> str:
    return re.sub(r"\s+", " ", "".join(el.itertext())).strip()


def _tables(root, units: dict[str, str]) -> Iterator[Table]:
    """Each visible table with tagged figures: its rows as cell texts (empty cells dropped) and its facts."""
    for t in root.iter("{*}table"):
        rows: list[list[str]] = []
        facts: list[Fact] = []
        for tr in t.iter("{*}tr"):
            cells: list[str] = []
            for td in tr:
                if not isinstance(td.tag, str) or lxml.etree.QName(td).localname not in ("td", "th"):
                    continue
                txt = _text(td)
                if txt in ("", "$", ")", "%"):
                    continue
                for f in td.iter(f"{_IX}nonFraction"):
                    unit = units.get(f.get("unitRef", ""))
                    disp = (f.text or "").strip()
                    if unit is None or not _NUM.match(disp) or f.get("format", "").endswith("zerodash"):
                        continue
                    try:
                        raw = float(disp.strip("() ").replace(",", ""))
                        scale = int(f.get("scale") or 0)
                    except ValueError:
                        continue
                    dec = len(disp.split(".")[1]) if "." in disp else 0
                    sign = -1.0 if f.get("sign") == "-" else 1.0
                    facts.append(
                        Fact(
                            f.get("name", ""),
                            f.get("contextRef", ""),
                            sign * raw * 10**scale,
                            disp,
                            scale,
                            dec,
                            unit,
                            len(rows),
                            len(cells),
                        )  # fmt: skip
                    )
                cells.append(txt)
            if cells:
                rows.append(cells)
        if facts and len(rows) >= 3:
            yield Table(rows, facts)


def _period_phrase(ctx: tuple[dt.date | None, dt.date, bool], fiscal: bool) -> str:
    start, end, _ = ctx
    when = f"{_MONTHS[end.month - 1]} {end.day}, {end.year}"
    if start is None:
        return f"as of {when}"
    months = round((end - start).days / 30.4)
    if months >= 11:
        return f"for fiscal {end.year}" if fiscal else f"for the fiscal year ended {when}"
    words = {3: "three", 6: "six", 9: "nine"}.get(months)
    return f"for the {words} months ended {when}" if words else f"for the period ended {when}"


def _value_text(f: Fact, value: float, scale: int | None = None) -> str:
    if f.unit == "usd_per_share":
        return ("-" if value < 0 else "") + f"${abs(value):,.2f} per share"
    if f.unit == "shares":
        s = f.scale if scale is None else scale
        word = SCALE_WORD.get(s, "")
        return f"{value / 10**s:,.{f.decimals_shown}f}{word} shares"
    return format_money(value, f.scale if scale is None else scale, f.decimals_shown)


_TEMPLATES = [
    "{company}'s {label} {period} was {value}.",
    "{Period}, {company} reported {label_l} of {value}.",
    "{label} {period} amounted to {value}.",
    "For {company}, {label_l} {period} totaled {value}.",
    "{company} had {label_l} of {value} {period}.",
]


def _claim(rng: random.Random, company: str, label: str, period: str, value: str) -> str:
    t = rng.choice(_TEMPLATES)
    return t.format(company=company, label=label, label_l=label[:1].lower() + label[1:], period=period,
                    Period=period[:1].upper() + period[1:], value=value)  # fmt: skip


def _window(rows: list[list[str]], row: int, span: int = 4, head: int = 3) -> str:
    """The table's header rows and the rows around `row`, one line a row: what a reader checks the claim on."""
    idx = sorted(
        set(range(min(head, len(rows)))) | set(range(max(0, row - span), min(len(rows), row + span + 1)))
    )
    return "\n".join(" | ".join(rows[i]) for i in idx)


def _label(rows: list[list[str]], f: Fact) -> str | None:
    cells = rows[f.row]
    label = cells[0] if cells and not _NUM.match(cells[0]) else ""
    label = re.sub(r"\s*\(\d\)\s*$", "", label).strip(" :")
    return label if 3 <= len(label) <= 90 and f.col > 0 else None


def filing_pairs(path: Path, company: str, rng: random.Random, per_filing: int) -> list[ClaimPair]:
    """Up to `per_filing` supported claims of one filing, each with one perturbed partner."""
    root = _ns_tree(path.read_text(encoding="utf-8", errors="replace"))
    if root is None:
        return []
    ctxs, units = _contexts(root), _units(root)
    tables = list(_tables(root, units))
    if not tables:
        return []
    short = re.sub(r",?\s+(Inc|Corp|Corporation|Company|Co|Ltd|plc|N\.V|Holdings)\.?,?$", "", company.strip(),
                   flags=re.IGNORECASE).strip()  # fmt: skip
    short = short.title() if short.isupper() else short
    candidates = []
    for ti, t in enumerate(tables):
        for f in t.facts:
            ctx = ctxs.get(f.context)
            label = _label(t.rows, f)
            if ctx is None or label is None or ctx[2] or f.value == 0:
                continue
            candidates.append((ti, f, ctx, label))
    rng.shuffle(candidates)
    out: list[ClaimPair] = []
    doc = f"{path.parent.name}/{path.name}"
    for ti, f, ctx, label in candidates[:per_filing]:
        t = tables[ti]
        fiscal = rng.random() < 0.3
        period = _period_phrase(ctx, fiscal)
        evidence = _window(t.rows, f.row)
        group = f"xbrl:{doc}"
        pos = ClaimPair(claim=_claim(rng, short, label, period, _value_text(f, f.value)), evidence=evidence,
                        label=1, source="xbrl", kind="supported", group=group)  # fmt: skip
        negs = _perturbed(rng, t, tables, ti, f, ctx, ctxs, short, label, period, fiscal, group)
        if negs:
            out.extend([pos, *negs])
    return out


def _perturbed(rng, t, tables, ti, f, ctx, ctxs, company, label, period, fiscal, group) -> list[ClaimPair]:
    same_row = [
        g for g in t.facts
        if g.row == f.row and g.context != f.context and g.context in ctxs and not ctxs[g.context][2]
        and abs(g.value - f.value) > 0.01 * abs(f.value)
    ]  # fmt: skip
    neighbours = [
        g for g in t.facts
        if abs(g.row - f.row) == 1 and g.context == f.context and abs(g.value - f.value) > 0.01 * abs(f.value)
    ]  # fmt: skip
    kinds = ["value", "value", "scale", "sign", "other_table"]
    kinds += ["period", "direction"] * bool(same_row) + ["neighbour"] * bool(neighbours)
    kind = rng.choice(kinds)
    evidence = _window(t.rows, f.row)
    if kind == "value":
        text = _claim(
            rng, company, label, period, _value_text(f, perturb_value(rng, f.value, f.decimals_shown))
        )
    elif kind == "scale":
        if f.unit == "usd_per_share":
            return []
        new_scale = {6: rng.choice([3, 9]), 3: 6, 9: 6, 0: 3}.get(f.scale, 6)
        shown = f.value / 10**f.scale * 10**new_scale
        text = _claim(rng, company, label, period, _value_text(f, shown, new_scale))
    elif kind == "sign":
        text = _claim(rng, company, label, period, _value_text(f, -f.value))
    elif kind == "period":
        g = rng.choice(same_row)
        text = _claim(rng, company, label, period, _value_text(f, g.value))
    elif kind == "neighbour":
        g = rng.choice(neighbours)
        text = _claim(rng, company, label, period, _value_text(f, g.value))
    elif kind == "direction":
        g = rng.choice(same_row)
        other = ctxs[g.context]
        if other[1] == ctx[1]:
            return []
        (a, pa), (b, pb) = sorted([(f, ctx), (g, other)], key=lambda x: x[1][1])  # earlier, later
        truth = "increased" if b.value > a.value else "decreased"
        wrong = "decreased" if truth == "increased" else "increased"
        text = (f"{company}'s {label[:1].lower() + label[1:]} {wrong} from {_value_text(a, a.value)} "
                f"{_period_phrase(pa, fiscal)} to {_value_text(b, b.value)} {_period_phrase(pb, fiscal)}.")  # fmt: skip
        twin = text.replace(f" {wrong} ", f" {truth} ", 1)
        # the direction claim comes with its supported twin, so the two differ only in the word
        return [
            ClaimPair(claim=twin, evidence=evidence, label=1, source="xbrl", kind="supported", group=group),
            ClaimPair(claim=text, evidence=evidence, label=0, source="xbrl", kind="direction", group=group),
        ]
    else:  # other_table: the right claim, another table's evidence
        others = [i for i in range(len(tables)) if i != ti]
        if not others:
            return []
        o = tables[rng.choice(others)]
        evidence = _window(o.rows, rng.randrange(len(o.rows)))
        text = _claim(rng, company, label, period, _value_text(f, f.value))
    return [ClaimPair(claim=text, evidence=evidence, label=0, source="xbrl", kind=kind, group=group)]


def _ns_tree(raw: str):
    """The filing as XML when it is well-formed XHTML (inline XBRL is), else lxml's HTML tree."""
    try:
        return lxml.etree.fromstring(raw.encode("utf-8"), lxml.etree.XMLParser(huge_tree=True, recover=True))
    except lxml.etree.XMLSyntaxError:
        return lxml.etree.fromstring(raw.encode("utf-8"), lxml.etree.HTMLParser(huge_tree=True))
