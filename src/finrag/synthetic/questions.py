"""Questions of the synthetic corpus: pick candidates per kind, add comparisons and unanswerable questions.

Every answerable question carries its gold figures and the passages (char offsets) that state them; a
``calculo`` question's gold figure is computed, and its passages state the inputs (``support_figures``). A
``no_respondible`` question names real entities of the corpus but asks for something no document states; the terms
whose absence makes it so are recorded (``absent_terms`` within ``absent_scope``) and checked here and in the tests.
"""

from __future__ import annotations

import random
from itertools import combinations
from typing import cast

from finrag.core.contracts import Page
from finrag.synthetic.drafts import Candidate, CorpusDraft, Entry
from finrag.synthetic.formats import num
from finrag.synthetic.models import KINDS, GoldPassage, SyntheticKind, SyntheticQuestion
from finrag.synthetic.vocabulary import HEDGED, REGIONS

# share of each kind in the question set (no_respondible must stay within 6-7 %)
DEFAULT_SHARES: dict[str, float] = {
    "texto": 0.16,
    "tabla": 0.16,
    "nota_pie": 0.11,
    "texto_y_nota": 0.10,
    "tabla_y_nota": 0.10,
    "calculo": 0.18,
    "comparacion": 0.125,
    "no_respondible": 0.065,
}

# metric -> (question template, True when the larger value "wins")
COMPARISONS: dict[str, tuple[str, bool]] = {
    "ingresos": ("¿Qué compañía obtuvo más ingresos en {Y}, {a} o {b}, y cuánto ingresó cada una?", True),
    "deuda": (
        "¿Qué compañía tenía una deuda financiera neta mayor al cierre de {Y}, {a} o {b}, y de cuánto era la "
        "de cada una?",
        True,
    ),
    "dpa": (
        "¿Qué compañía propone un dividendo por acción mayor con cargo a {Y}, {a} o {b}, y de cuánto es el de "
        "cada una?",
        True,
    ),
    "plantilla": (
        "¿Qué compañía tenía más empleados al cierre de {Y}, {a} o {b}, y cuántos tenía cada una?",
        True,
    ),
    "alcance1": (
        "¿Qué compañía registró más emisiones de alcance 1 en {Y}, {a} o {b}, y cuántas registró cada una?",
        True,
    ),
    "consejeros": (
        "¿Qué consejo de administración es más numeroso, el de {a} o el de {b}, y cuántos consejeros "
        "tiene cada uno?",
        True,
    ),
    "ter": (
        "¿Qué fondo tiene menores gastos corrientes en su clase EUR (Acc), {a} o {b}, y cuáles son los de cada "
        "uno?",
        False,
    ),
    "patrimonio": (
        "¿Qué fondo tenía más patrimonio al cierre de {Y}, {a} o {b}, y cuánto tenía cada uno?",
        True,
    ),
    "irr": (
        "¿Qué producto tiene un indicador resumido de riesgo más alto en su documento de datos fundamentales, "
        "{a} o {b}, y cuál es el de cada uno?",
        True,
    ),
}

NOT_STATED = "No consta en los documentos del corpus"


def kind_targets(n_questions: int, shares: dict[str, float] | None = None) -> dict[str, int]:
    """Integer counts per kind summing to n_questions (largest remainder), in KINDS order."""
    shares = shares or DEFAULT_SHARES
    unknown = [k for k in shares if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown question kinds in shares: {unknown}")
    total = sum(shares.values())
    exact = {k: n_questions * shares.get(k, 0.0) / total for k in KINDS}
    out: dict[str, int] = {k: int(v) for k, v in exact.items()}
    rest = n_questions - sum(out.values())
    for k in sorted(KINDS, key=lambda k: (-(exact[k] - out[k]), KINDS.index(k)))[:rest]:
        out[k] += 1
    return out


def _with_unit(raw: str, unit: str) -> str:
    return f"{raw} {unit}".strip() if unit else raw


def comparison_candidates(draft: CorpusDraft) -> list[Candidate]:
    """Two documents must be read: the same metric for two entities (ties skipped), plus note-vs-report pairs."""
    out: list[Candidate] = list(draft.pairs)
    for metric, (template, higher) in COMPARISONS.items():
        entries: list[Entry] = draft.metrics.get(metric, [])
        for a, b in combinations(entries, 2):
            if a.fig.value == b.fig.value:
                continue
            win, lose = (a, b) if (a.fig.value > b.fig.value) == higher else (b, a)
            out.append(
                Candidate(
                    kind="comparacion",
                    question=template.format(Y=draft.year, a=a.label, b=b.label),
                    answer=f"{win.label} ({_with_unit(win.fig.raw, win.unit)}) frente a {lose.label} "
                    f"({_with_unit(lose.fig.raw, lose.unit)}).",
                    figures=[a.fig, b.fig],
                    unit=a.unit,
                    doc_ids=[a.doc_id, b.doc_id],
                    company=f"{a.label}; {b.label}",
                    period=str(draft.year),
                )
            )
    return out


def unanswerable_candidates(draft: CorpusDraft) -> list[Candidate]:
    """Plausible questions about real entities of the corpus whose answer no document states."""
    Y = draft.year
    out: list[Candidate] = []

    def add(group: str, question: str, why: str, terms: list[str], scope: list[str], company: str) -> None:
        out.append(
            Candidate(
                kind="no_respondible",
                question=question,
                answer=f"{NOT_STATED}: {why}.",
                figures=[],
                doc_ids=list(scope),
                company=company,
                period=str(Y),
                answerable=False,
                absent_terms=terms,
                absent_scope=list(scope),
                group=group,
            )
        )

    all_segments = [(c.name, s) for c in draft.companies for s in c.segments]
    for c in draft.companies:
        add(
            "rating",
            f"¿Qué calificación crediticia otorga S&P Global a la deuda de {c.name}?",
            f"ningún documento indica la calificación crediticia de {c.name}",
            ["calificación crediticia", "S&P", "rating"],
            [],
            c.name,
        )
        add(
            "alcance3",
            f"¿Cuántas toneladas de CO2 equivalente de alcance 3 emitió {c.name} en {Y}?",
            f"{c.name} no informa de emisiones de alcance 3",
            ["alcance 3"],
            [],
            c.name,
        )
        add(
            "anio",
            f"¿Cuál fue el EBITDA ajustado de {c.name} en {Y - 3}?",
            f"los documentos de {c.name} solo cubren {Y - 1} y {Y}",
            [str(Y - 3)],
            c.doc_ids,
            c.name,
        )
        add(
            "opciones",
            f"¿Cuántas opciones sobre acciones se concedieron al consejero delegado de {c.name} en {Y}?",
            "el informe no detalla planes de opciones sobre acciones",
            ["opciones sobre acciones", "stock options"],
            c.doc_ids,
            c.name,
        )
        missing = [r for r in REGIONS if r not in c.regions]
        if missing:
            r = missing[0]
            add(
                "region",
                f"¿Cuántos empleados tenía {c.name} en {r} al cierre de {Y}?",
                f"{c.name} no desglosa plantilla en {r}",
                [r],
                c.doc_ids,
                c.name,
            )
        foreign = [s for name, s in all_segments if name != c.name]
        if foreign:
            seg = foreign[len(c.name) % len(foreign)]
            add(
                "segmento",
                f"¿Qué EBITDA obtuvo el segmento {seg} de {c.name} en {Y}?",
                f"{c.name} no tiene un segmento {seg}",
                [seg],
                c.doc_ids,
                c.name,
            )
        if not c.has_note:
            add(
                "sin_nota",
                f"¿Qué precio objetivo fija la nota de análisis sobre {c.name}?",
                f"el corpus no contiene ninguna nota de análisis sobre {c.name}",
                ["precio objetivo"],
                c.doc_ids,
                c.name,
            )
    for f in draft.funds:
        for cls in HEDGED:
            if cls not in f.classes:
                add(
                    "clase",
                    f"¿Cuáles son los gastos corrientes de la clase {cls} de {f.name}?",
                    f"{f.name} no tiene una clase {cls}",
                    [cls],
                    f.doc_ids,
                    f.name,
                )
                break
        if not f.has_kid:
            add(
                "sin_kid",
                f"¿Qué indicador resumido de riesgo asigna el documento de datos fundamentales de {f.name}?",
                f"el corpus no contiene el documento de datos fundamentales de {f.name}",
                ["indicador resumido de riesgo", "clase de riesgo"],
                f.doc_ids,
                f.name,
            )
    return out


def absent_ok(cand: Candidate | SyntheticQuestion, pages: list[Page]) -> bool:
    """True when none of the absent terms occurs (case-insensitively) in the pages of its scope."""
    scope = set(cand.absent_scope)
    terms = [t.lower() for t in cand.absent_terms]
    for p in pages:
        if scope and p.doc_id not in scope:
            continue
        low = p.text.lower()
        if any(t in low for t in terms):
            return False
    return True


def _stratified(cands: list[Candidate], n: int, rng: random.Random) -> list[Candidate]:
    """Round-robin over groups (each shuffled) so every kind of unanswerable question appears."""
    groups: dict[str, list[Candidate]] = {}
    for c in cands:
        groups.setdefault(c.group, []).append(c)
    order = list(groups)
    rng.shuffle(order)
    for g in order:
        rng.shuffle(groups[g])
    out: list[Candidate] = []
    while len(out) < n and any(groups[g] for g in order):
        for g in order:
            if groups[g] and len(out) < n:
                out.append(groups[g].pop())
    return out


def to_synthetic(cand: Candidate, qid: str, passages: dict[str, GoldPassage]) -> SyntheticQuestion:
    """Resolve a candidate's passage keys into gold passages with offsets and the figures each states."""
    keys: list[str] = []
    for f in [*cand.figures, *cand.support]:
        if f.pkey is not None and f.pkey not in keys:
            keys.append(f.pkey)
    gold = []
    for k in keys:
        if k not in passages:
            raise KeyError(f"question '{cand.question}' refers to an unknown passage {k}")
        p = passages[k]
        figs = [f.value for f in [*cand.figures, *cand.support] if f.pkey == k]
        gold.append(p.model_copy(update={"figures": figs}))
    doc_ids = list(cand.doc_ids)
    for p in gold:
        if p.doc_id not in doc_ids:
            doc_ids.append(p.doc_id)
    return SyntheticQuestion(
        qid=qid,
        question=cand.question,
        kind=cast(SyntheticKind, cand.kind),
        answer=cand.answer,
        gold_figures=[f.value for f in cand.figures],
        support_figures=[f.value for f in cand.support],
        unit=cand.unit,
        gold_passages=gold,
        doc_ids=doc_ids,
        company=cand.company,
        period=cand.period,
        answerable=cand.answerable,
        absent_terms=list(cand.absent_terms),
        absent_scope=list(cand.absent_scope),
    )


def build_questions(
    draft: CorpusDraft,
    passages: dict[str, GoldPassage],
    pages: list[Page],
    rng: random.Random,
    n_questions: int = 280,
    shares: dict[str, float] | None = None,
) -> list[SyntheticQuestion]:
    """Sample ``kind_targets(n_questions)`` candidates per kind; raise when the corpus is too small for a kind."""
    pools: dict[str, list[Candidate]] = {k: [] for k in KINDS}
    for b in draft.builders:
        for c in b.candidates:
            pools[c.kind].append(c)
    pools["comparacion"] = comparison_candidates(draft)
    pools["no_respondible"] = [c for c in unanswerable_candidates(draft) if absent_ok(c, pages)]
    targets = kind_targets(n_questions, shares)
    chosen: list[Candidate] = []
    for kind in KINDS:
        pool, n = pools[kind], targets[kind]
        if len(pool) < n:
            raise ValueError(
                f"synthetic corpus too small: {len(pool)} '{kind}' candidates for {n} questions "
                "(raise n_companies / n_etfs or lower n_questions)"
            )
        chosen += _stratified(pool, n, rng) if kind == "no_respondible" else rng.sample(pool, n)
    rng.shuffle(chosen)
    seen: set[str] = set()
    for c in chosen:
        if c.question in seen:
            raise ValueError(f"duplicate synthetic question: {c.question}")
        seen.add(c.question)
    return [to_synthetic(c, f"syn-{i:04d}", passages) for i, c in enumerate(chosen, 1)]


def format_figure(value: float) -> str:
    """Spanish writing of a gold figure with the fewest decimals that keep it exact (for reports)."""
    for d in range(4):
        if abs(round(value, d) - value) < 1e-9:
            return num(value, d)
    return num(value, 4)
