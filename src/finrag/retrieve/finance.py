"""Finance-aware search: three rules an analyst applies when looking for a figure in a filing, each a wrapper
around any registered base method (bm25, dense, hybrid), registered as `<base>+<rule>`.

- `expand`: financial abbreviations and synonyms are spelt out in the query ("capex" -> "purchases of property,
  plant and equipment, capital expenditures"): filings say the long form, questions often the short one.
- `route`: a question about a statement line ("capex", "total assets", "operating cash flow", a ratio of them)
  is routed to the financial-statement pages of that kind (income statement, balance sheet, cash flow statement),
  found by their headings and table shape; those pages are fused (RRF) with the base ranking.
- `neighbours`: a statement continued on the next page: the page after each top hit of the same document joins
  the ranking (fused, with a lower weight), so a table cut by a page break is found whole.
- `finance`: all three.

The rules are written from accounting vocabulary (statement titles, line items, ratio definitions), fixed before
they were measured on FinanceBench, and nothing in them is fitted to its questions or evidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from finrag.retrieve.search import SEARCH_METHODS, Hit, SearchContext, rrf, search

# abbreviation / synonym -> the words filings use; matched as whole words, case-insensitive
EXPANSIONS: dict[str, str] = {
    r"cap ?ex|capital expenditures?": "purchases of property, plant and equipment capital expenditures additions",
    r"pp&e|pp & e|ppe": "property, plant and equipment",
    r"cogs": "cost of goods sold cost of sales cost of revenue",
    r"cost of goods sold": "cost of sales cost of revenue",
    r"sg&a|sg & a": "selling, general and administrative expenses",
    r"r&d|r & d": "research and development expenses",
    r"d&a|d & a": "depreciation and amortization",
    r"ebitda": "operating income depreciation and amortization earnings before interest taxes",
    r"ebit": "operating income earnings before interest and taxes",
    r"eps": "earnings per share diluted basic",
    r"fcf|free cash flows?": "net cash provided by operating activities purchases of property, plant and equipment",
    r"operating cash flows?|cash flows? from operations|cash from operations|cfo": (
        "net cash provided by operating activities"
    ),
    r"revenues?|sales|top line": "revenue net sales total revenues",
    r"net income|net profit|net earnings|bottom line": "net income net earnings attributable",
    r"gross margin": "gross profit revenue cost of sales",
    r"operating margin": "operating income revenue",
    r"net (?:profit )?margin": "net income revenue",
    r"effective tax rate": "provision for income taxes income before income taxes effective tax rate",
    r"working capital": "total current assets total current liabilities",
    r"current ratio": "total current assets total current liabilities",
    r"quick ratio": "cash and cash equivalents marketable securities accounts receivable total current liabilities",
    r"inventory turnover": "inventories cost of sales",
    r"days payable(?: outstanding)?|dpo": "accounts payable cost of sales",
    r"days sales outstanding|dso": "accounts receivable revenue",
    r"roa|return on assets": "net income total assets",
    r"roe|return on equity": "net income total shareholders' equity",
    r"fixed asset turnover": "property, plant and equipment, net revenue",
    r"asset turnover": "total assets revenue",
    r"interest coverage": "interest expense operating income",
    r"debt to equity|debt-to-equity|leverage": "long-term debt total shareholders' equity",
    r"dividends?(?: payout)?": "dividends declared per share cash dividends paid",
    r"share repurchases?|buybacks?": "repurchases of common stock treasury stock",
    r"yoy|year over year|year-over-year": "compared to prior year increase decrease",
}
_EXPANSION_RES = [(re.compile(rf"(?<![\w&]){k}(?![\w&])", re.IGNORECASE), v) for k, v in EXPANSIONS.items()]


def expand_query(query: str) -> str:
    """The query followed by the long forms of the financial terms it uses (each once)."""
    extra: list[str] = []
    for pattern, words in _EXPANSION_RES:
        if pattern.search(query) and words not in extra:
            extra.append(words)
    return f"{query} {' '.join(extra)}" if extra else query


# statement kind -> (what a question about it says, what the statement's title says)
STATEMENTS: dict[str, tuple[str, str]] = {
    "income": (
        r"revenues?|net sales|sales|cost of (?:goods sold|sales|revenue)|cogs|gross (?:profit|margin)|operating "
        r"(?:income|margin|expenses?)|net (?:income|earnings|loss|profit|margin)|ebitda|ebit|eps|earnings per "
        r"share|sg&a|r&d|research and development|selling, general|interest expense|income tax|effective tax "
        r"rate|depreciation|d&a|interest coverage",
        r"statements? of (?:consolidated )?(?:operations|income|earnings|comprehensive income)|income statements?|"
        r"statements? of (?:operations|income) and comprehensive",
    ),
    "balance": (
        r"total assets|total liabilities|current assets|current liabilities|working capital|current ratio|quick "
        r"ratio|inventor(?:y|ies)|accounts (?:receivable|payable)|property, plant|pp&e|ppe|goodwill|long-term "
        r"debt|total debt|shareholders'? equity|stockholders'? equity|return on (?:assets|equity)|roa|roe|debt to "
        r"equity|debt-to-equity|asset turnover|days payable|dpo|days sales|dso|cash and cash equivalents",
        r"balance sheets?|statements? of (?:consolidated )?financial (?:position|condition)",
    ),
    "cashflow": (
        r"cash flows?|capex|cap ex|capital expenditures?|free cash flow|fcf|cash from operations|operating "
        r"activities|investing activities|financing activities|dividends? paid|share repurchases?|buybacks?|"
        r"purchases? of property",
        r"statements? of (?:consolidated )?cash flows?|cash flows? statements?",
    ),
}
_QUESTION_RES = {
    k: re.compile(rf"(?<![\w&])(?:{q})(?![\w&])", re.IGNORECASE) for k, (q, _) in STATEMENTS.items()
}
_TITLE_RES = {k: re.compile(t, re.IGNORECASE) for k, (_, t) in STATEMENTS.items()}
_NUMBER = re.compile(r"\(?\$?\d[\d,]*(?:\.\d+)?\)?")
TITLE_CHARS = 600  # a statement's title sits at the top of its page
MIN_NUMBER_SHARE = 0.15  # table shape: at least this share of the page's tokens are figures


def question_statements(question: str) -> set[str]:
    """The statement kinds a question's line items belong to (empty: not a statement question)."""
    return {k for k, r in _QUESTION_RES.items() if r.search(question)}


def page_statement(text: str) -> str | None:
    """The statement a page holds, from the title at its top and a table's share of figures; else None."""
    tokens = text.split()
    if not tokens or sum(bool(_NUMBER.fullmatch(t)) for t in tokens) / len(tokens) < MIN_NUMBER_SHARE:
        return None
    head = text[:TITLE_CHARS]
    found = [(m.start(), k) for k, r in _TITLE_RES.items() if (m := r.search(head))]
    return min(found)[1] if found else None


def _statement_index(ctx: SearchContext) -> dict[int, str]:
    """Chunk index -> statement kind, worked out once per search context."""
    if "statements" not in ctx.memo:
        ctx.memo["statements"] = {
            i: s for i, c in enumerate(ctx.chunks) if (s := page_statement(c.body or c.text))
        }
    return ctx.memo["statements"]


def _next_in_doc(ctx: SearchContext, i: int) -> int | None:
    j = i + 1
    return j if j < len(ctx.chunks) and ctx.chunks[j].doc_id == ctx.chunks[i].doc_id else None


ROUTE_WEIGHT = 1.0  # RRF weight of the statement-page ranking beside the base ranking's 1.0
NEIGHBOUR_WEIGHT = 0.5  # the next pages of the top hits count half a base rank


def finance_search(
    ctx: SearchContext, base: str, query: str, k: int, allowed: set[int] | None, rules: Iterable[str]
) -> list[Hit]:
    """`base` search with the given rules (expand, route, neighbours) applied."""
    rules = set(rules)
    q = expand_query(query) if "expand" in rules else query
    depth = max(ctx.depth, k)
    base_hits = search(ctx, base, q, depth, allowed)
    ranked = [i for i, _ in base_hits]
    rankings, weights = [ranked], [1.0]
    if "route" in rules and (kinds := question_statements(query)):
        statements = _statement_index(ctx)
        routed = [i for i in ranked if statements.get(i) in kinds]  # in the base ranking's order
        if routed:
            rankings.append(routed)
            weights.append(ROUTE_WEIGHT)
    if "neighbours" in rules:
        nxt = [
            j
            for i in ranked[:k]
            if (j := _next_in_doc(ctx, i)) is not None and (allowed is None or j in allowed)
        ]
        if nxt:
            rankings.append(nxt)
            weights.append(NEIGHBOUR_WEIGHT)
    if len(rankings) == 1:
        return base_hits[:k]
    return rrf(rankings, k=ctx.rrf_k, weights=tuple(weights), depth=depth)[:k]


FINANCE_RULES: dict[str, tuple[str, ...]] = {
    "expand": ("expand",),
    "route": ("route",),
    "neighbours": ("neighbours",),
    "finance": ("expand", "route", "neighbours"),
}
FINANCE_BASES = ("bm25", "dense", "hybrid")


class FinanceSearch:
    """A registered search method: `base` with `rules` (the search registry names it `<base>+<rule set>`)."""

    def __init__(self, base: str, rule_set: str):
        self.base, self.rules = base, FINANCE_RULES[rule_set]

    def __call__(self, ctx: SearchContext, query: str, k: int, allowed: set[int] | None = None) -> list[Hit]:
        return finance_search(ctx, self.base, query, k, allowed, self.rules)


# registered here, where the finance stages load them (finrag.retrieve.beyond_grid imports this module), so the
# search registry's own module does not reach this one and an edit here re-runs only the finance stages
for _base in FINANCE_BASES:
    for _rule_set in FINANCE_RULES:
        SEARCH_METHODS.register(f"{_base}+{_rule_set}")(FinanceSearch(_base, _rule_set))
