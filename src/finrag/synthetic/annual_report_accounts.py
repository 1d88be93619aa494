"""The annual report's financial sections (summary, income statement, segments, debt, shareholder remuneration)
and the records every section shares: the report being written (`ReportContext`) and the income statement as
stated (`IncomeStatement`), which the later sections restate or divide by. annual_report.py calls the sections in
reading order; each draws from the one random stream in the same order as the single function it replaced."""

import random
from dataclasses import dataclass

from finrag.synthetic.drafts import CorpusDraft, DocBuilder, Entry, Fig
from finrag.synthetic.formats import meur, num, pct
from finrag.synthetic.vocabulary import ASSETS, CompanySpec, calc, change_pct, split3, uniform, verb

MU = "millones de euros"


@dataclass(frozen=True)
class ReportContext:
    """One report being written: the random stream, the company, the document and the corpus it joins."""

    rng: random.Random
    spec: CompanySpec
    draft: CorpusDraft
    b: DocBuilder
    co: str
    legal: str
    Y: int  # noqa: N815 (the report's year, as the sentences name it)
    P: int  # noqa: N815 (the year before)
    subsidiary: str


@dataclass(frozen=True)
class IncomeStatement:
    """The income statement's figures as stated (value, writing, passage): the table questions ask about them
    and segments, debt and shareholder remuneration divide by EBITDA and net profit."""

    ing: Fig
    ing_p: Fig
    ebitda: Fig
    ebitda_p: Fig
    ebit: Fig
    neto: Fig
    neto_p: Fig
    restr: Fig
    gain: Fig


def summary(c: ReportContext) -> None:
    """Opens the report with two plain-text facts (countries, backlog) the text questions ask about."""
    rng, spec, b, co, legal, Y = c.rng, c.spec, c.b, c.co, c.legal, c.Y
    s = b.section("Resumen del ejercicio")
    countries = rng.randint(4, 60)
    backlog = uniform(rng, 300, 9000)
    s.para(
        (f"{legal} es un grupo del sector {spec.sector} con presencia en {countries} países.", "paises"),
        (f"Al cierre de {Y}, la {spec.backlog} ascendía a {meur(backlog)}.", "cartera"),
        "El ejercicio estuvo marcado por la moderación de la inflación y la normalización de los tipos de interés.",
    )
    f_countries = b.fig("paises", countries, num(countries, 0))
    b.ask(
        "texto",
        f"¿En cuántos países está presente {co}?",
        f"En {countries} países.",
        [f_countries],
        unit="países",
    )
    f_backlog = b.fig("cartera", backlog, num(backlog))
    b.ask(
        "texto",
        f"¿A cuánto ascendía la {spec.backlog} de {co} al cierre de {Y}?",
        f"{meur(backlog)}.",
        [f_backlog],
        unit="millones de euros",
    )


def income_statement(c: ReportContext) -> IncomeStatement:
    """Two years of revenue, EBITDA, EBIT and net profit with two table footnotes; later sections use its figures."""
    rng, b, co, Y, P = c.rng, c.b, c.co, c.Y, c.P
    s = b.section("Cuenta de resultados consolidada")
    ing = uniform(rng, 800, 15000)
    ing_p = round(ing / rng.uniform(0.85, 1.2), 1)
    margin = rng.uniform(0.08, 0.3)
    ebitda = round(ing * margin, 1)
    ebitda_p = round(ing_p * (margin + rng.uniform(-0.02, 0.02)), 1)
    ebit = round(ebitda * rng.uniform(0.5, 0.8), 1)
    ebit_p = round(ebitda_p * rng.uniform(0.5, 0.8), 1)
    neto = round(ebit * rng.uniform(0.55, 0.75), 1)
    neto_p = round(ebit_p * rng.uniform(0.55, 0.75), 1)
    restr = uniform(rng, 5, 80)
    gain = uniform(rng, 3, 60)
    s.para("Las cifras de la tabla se expresan en millones de euros.")
    m1 = s.note(f"Excluye {meur(restr)} de costes de reestructuración.", "nota_reestructuracion", "table")
    m2 = s.note(
        f"Incluye una plusvalía de {meur(gain)} por la venta de {rng.choice(ASSETS)}.",
        "nota_plusvalia",
        "table",
    )
    s.table(
        ["Concepto", str(Y), str(P)],
        [
            (["Ingresos", num(ing), num(ing_p)], "fila_ingresos"),
            ([f"EBITDA ajustado{m1}", num(ebitda), num(ebitda_p)], "fila_ebitda"),
            (["Resultado de explotación (EBIT)", num(ebit), num(ebit_p)], "fila_ebit"),
            ([f"Resultado neto atribuido{m2}", num(neto), num(neto_p)], "fila_neto"),
        ],
    )
    st = IncomeStatement(
        ing=b.fig("fila_ingresos", ing, num(ing)),
        ing_p=b.fig("fila_ingresos", ing_p, num(ing_p)),
        ebitda=b.fig("fila_ebitda", ebitda, num(ebitda)),
        ebitda_p=b.fig("fila_ebitda", ebitda_p, num(ebitda_p)),
        ebit=b.fig("fila_ebit", ebit, num(ebit)),
        neto=b.fig("fila_neto", neto, num(neto)),
        neto_p=b.fig("fila_neto", neto_p, num(neto_p)),
        restr=b.fig("nota_reestructuracion", restr, num(restr)),
        gain=b.fig("nota_plusvalia", gain, num(gain)),
    )
    _ask_income_statement(c, st)
    _ask_income_calculations(c, st)
    c.draft.metric("ingresos", Entry(co, st.ing, b.doc_id, MU))
    return st


def _ask_income_statement(c: ReportContext, st: IncomeStatement) -> None:
    """The table, footnote and table-plus-footnote questions, one per figure the statement states."""
    b, co, Y, P = c.b, c.co, c.Y, c.P
    ing, ing_p, ebitda, ebit = st.ing, st.ing_p, st.ebitda, st.ebit
    neto, neto_p, restr, gain = st.neto, st.neto_p, st.restr, st.gain
    b.ask("tabla", f"¿Cuáles fueron los ingresos de {co} en {Y}?", f"{meur(ing.value)}.", [ing], unit=MU)
    b.ask("tabla", f"¿Cuáles fueron los ingresos de {co} en {P}?", f"{meur(ing_p.value)}.", [ing_p], unit=MU)
    b.ask(
        "tabla", f"¿Cuál fue el EBITDA ajustado de {co} en {Y}?", f"{meur(ebitda.value)}.", [ebitda], unit=MU
    )
    b.ask(
        "tabla",
        f"¿Cuál fue el resultado de explotación (EBIT) de {co} en {Y}?",
        f"{meur(ebit.value)}.",
        [ebit],
        unit=MU,
    )
    b.ask(
        "tabla",
        f"¿Cuál fue el resultado neto atribuido de {co} en {Y}?",
        f"{meur(neto.value)}.",
        [neto],
        unit=MU,
    )
    b.ask(
        "tabla",
        f"¿Cuál fue el resultado neto atribuido de {co} en {P}?",
        f"{meur(neto_p.value)}.",
        [neto_p],
        unit=MU,
    )
    b.ask(
        "nota_pie",
        f"¿Qué importe de costes de reestructuración excluye el EBITDA ajustado de {co} en {Y}?",
        f"{meur(restr.value)}.",
        [restr],
        unit=MU,
    )
    b.ask(
        "nota_pie",
        f"¿Qué plusvalía incluye el resultado neto atribuido de {co} en {Y}?",
        f"{meur(gain.value)}.",
        [gain],
        unit=MU,
    )
    b.ask(
        "tabla_y_nota",
        f"¿Cuál fue el EBITDA ajustado de {co} en {Y} y qué costes de reestructuración excluye?",
        f"{meur(ebitda.value)}, que excluye {meur(restr.value)} de costes de reestructuración.",
        [ebitda, restr],
        unit=MU,
    )
    b.ask(
        "tabla_y_nota",
        f"¿Cuál fue el resultado neto atribuido de {co} en {Y} y qué plusvalía incluye?",
        f"{meur(neto.value)}, que incluye una plusvalía de {meur(gain.value)}.",
        [neto, gain],
        unit=MU,
    )


def _ask_income_calculations(c: ReportContext, st: IncomeStatement) -> None:
    """Growth, margin and the EBITDA before the adjustment: answers no passage states, only its inputs."""
    b, co, Y, P = c.b, c.co, c.Y, c.P
    ing, ing_p, ebitda = st.ing.value, st.ing_p.value, st.ebitda.value
    restr, neto, neto_p = st.restr.value, st.neto.value, st.neto_p.value
    v = change_pct(ing, ing_p)
    b.ask(
        "calculo",
        f"¿Qué variación porcentual registraron los ingresos de {co} en {Y} respecto a {P}?",
        f"Los ingresos {verb(v)} un {pct(abs(v))} ({num(ing)} frente a {num(ing_p)} millones de euros).",
        [calc(v, pct(abs(v)))],
        [st.ing, st.ing_p],
        unit="%",
    )
    v = round(ebitda / ing * 100, 1)
    b.ask(
        "calculo",
        f"¿Cuál fue el margen de EBITDA ajustado sobre ingresos de {co} en {Y}?",
        f"{pct(v)} ({num(ebitda)} / {num(ing)} millones de euros).",
        [calc(v, pct(v))],
        [st.ebitda, st.ing],
        unit="%",
    )
    v = round(ebitda - restr, 1)
    b.ask(
        "calculo",
        f"¿Cuál habría sido el EBITDA de {co} en {Y} si se restaran los costes de reestructuración "
        "que excluye el EBITDA ajustado?",
        f"{meur(v)} ({num(ebitda)} - {num(restr)}).",
        [calc(v, num(v))],
        [st.ebitda, st.restr],
        unit=MU,
    )
    v = change_pct(neto, neto_p)
    b.ask(
        "calculo",
        f"¿Qué variación porcentual registró el resultado neto atribuido de {co} en {Y} respecto a {P}?",
        f"El resultado neto atribuido {verb(v, 'aumentó', 'disminuyó')} un {pct(abs(v))}.",
        [calc(v, pct(abs(v)))],
        [st.neto, st.neto_p],
        unit="%",
    )


def segments(c: ReportContext, st: IncomeStatement) -> None:
    """The EBITDA split over the company's three segments (summing to the group's), one with an acquisition note."""
    rng, spec, b, co, Y, P, subsidiary = c.rng, c.spec, c.b, c.co, c.Y, c.P, c.subsidiary
    ebitda = st.ebitda.value
    s = b.section("EBITDA por segmento")
    seg = split3(rng, ebitda)
    seg_p = split3(rng, st.ebitda_p.value)
    j = rng.randrange(3)
    contrib = round(seg[j] * rng.uniform(0.05, 0.25), 1)
    s.para("Cifras en millones de euros. La suma de los segmentos coincide con el EBITDA ajustado del grupo.")
    m = s.note(
        f"Incluye la contribución de {subsidiary}, adquirida durante el ejercicio, por {meur(contrib)}.",
        "nota_filial",
        "table",
    )
    rows = []
    for i, name in enumerate(spec.segments):
        rows.append(([name + (m if i == j else ""), num(seg[i]), num(seg_p[i])], f"fila_segmento_{i}"))
    s.table(["Segmento", str(Y), str(P)], rows)
    f_seg = [b.fig(f"fila_segmento_{i}", seg[i], num(seg[i])) for i in range(3)]
    f_contrib = b.fig("nota_filial", contrib, num(contrib))
    for i, name in enumerate(spec.segments):
        b.ask(
            "tabla",
            f"¿Cuál fue el EBITDA del segmento {name} de {co} en {Y}?",
            f"{meur(seg[i])}.",
            [f_seg[i]],
            unit=MU,
        )
    b.ask(
        "nota_pie",
        f"¿Cuánto aportó {subsidiary} al EBITDA del segmento {spec.segments[j]} de {co} en {Y}?",
        f"{meur(contrib)}.",
        [f_contrib],
        unit=MU,
    )
    b.ask(
        "tabla_y_nota",
        f"¿Cuál fue el EBITDA del segmento {spec.segments[j]} de {co} en {Y} y cuánto aportó {subsidiary}?",
        f"{meur(seg[j])}, de los que {meur(contrib)} corresponden a {subsidiary}.",
        [f_seg[j], f_contrib],
        unit=MU,
    )
    k = rng.randrange(3)
    v = round(seg[k] / ebitda * 100, 1)
    b.ask(
        "calculo",
        f"¿Qué peso tuvo el segmento {spec.segments[k]} en el EBITDA ajustado de {co} en {Y}?",
        f"{pct(v)} ({num(seg[k])} de {num(ebitda)} millones de euros).",
        [calc(v, pct(v))],
        [f_seg[k], st.ebitda],
        unit="%",
    )


def debt_and_financing(c: ReportContext, st: IncomeStatement) -> None:
    """Net debt with its lease note and its terms in prose; the leverage question divides it by EBITDA."""
    rng, draft, b, co, Y = c.rng, c.draft, c.b, c.co, c.Y
    ebitda = st.ebitda.value
    s = b.section("Deuda y financiación")
    debt = uniform(rng, ebitda * 0.4, ebitda * 3.5)
    leases = round(debt * rng.uniform(0.05, 0.2), 1)
    cost = uniform(rng, 2.0, 5.5)
    fixed = rng.randint(55, 90)
    life = uniform(rng, 2.5, 7.5)
    m = s.note(f"Incluye pasivos por arrendamiento por {meur(leases)}.", "nota_arrendamientos")
    s.para(
        (f"La deuda financiera neta se situó en {meur(debt)}{m} al cierre de {Y}.", "deuda"),
        (f"El coste medio de la deuda bruta fue del {pct(cost)}.", "coste_deuda"),
        (f"El {fixed} % de la deuda bruta está referenciado a tipo fijo.", "tipo_fijo"),
        (f"La vida media de la deuda es de {num(life)} años.", "vida_media"),
    )
    f_debt = b.fig("deuda", debt, num(debt))
    f_leases = b.fig("nota_arrendamientos", leases, num(leases))
    b.ask(
        "texto",
        f"¿Cuál era la deuda financiera neta de {co} al cierre de {Y}?",
        f"{meur(debt)}.",
        [f_debt],
        unit=MU,
    )
    b.ask(
        "texto",
        f"¿Cuál fue el coste medio de la deuda bruta de {co} en {Y}?",
        f"{pct(cost)}.",
        [b.fig("coste_deuda", cost, pct(cost))],
        unit="%",
    )
    b.ask(
        "texto",
        f"¿Qué porcentaje de la deuda bruta de {co} está referenciado a tipo fijo?",
        f"{pct(fixed, 0)}.",
        [b.fig("tipo_fijo", fixed, pct(fixed, 0))],
        unit="%",
    )
    b.ask(
        "texto",
        f"¿Cuál es la vida media de la deuda de {co}?",
        f"{num(life)} años.",
        [b.fig("vida_media", life, num(life))],
        unit="años",
    )
    b.ask(
        "nota_pie",
        f"¿Qué importe de pasivos por arrendamiento incluye la deuda financiera neta de {co}?",
        f"{meur(leases)}.",
        [f_leases],
        unit=MU,
    )
    b.ask(
        "texto_y_nota",
        f"¿Cuál era la deuda financiera neta de {co} al cierre de {Y} y qué importe de pasivos "
        "por arrendamiento incluye?",
        f"{meur(debt)}, que incluye {meur(leases)} de pasivos por arrendamiento.",
        [f_debt, f_leases],
        unit=MU,
    )
    v = round(debt / ebitda, 1)
    b.ask(
        "calculo",
        f"¿Cuántas veces el EBITDA ajustado de {Y} representa la deuda financiera neta de {co}?",
        f"{num(v)} veces ({num(debt)} / {num(ebitda)}).",
        [calc(v, num(v))],
        [f_debt, st.ebitda],
        unit="veces",
    )
    draft.metric("deuda", Entry(co, f_debt, b.doc_id, MU))


def shareholder_remuneration(c: ReportContext, st: IncomeStatement) -> None:
    """Dividend and buyback in prose, each with a footnote; the pay-out question divides by net profit."""
    rng, b, co, Y = c.rng, c.b, c.co, c.Y
    s = b.section("Retribución al accionista")
    dps = uniform(rng, 0.15, 1.6, 2)
    interim = round(dps * rng.uniform(0.3, 0.5), 2)
    div_total = round(st.neto.value * rng.uniform(0.3, 0.7), 1)
    buyback = float(rng.randint(20, 300))
    executed = round(buyback * rng.uniform(0.3, 0.9), 1)
    ma = s.note(
        f"Incluye el dividendo a cuenta de {num(interim, 2)} euros por acción abonado en enero de {Y + 1}.",
        "nota_dividendo_cuenta",
    )
    mb = s.note(f"Al cierre del ejercicio se habían ejecutado {meur(executed)}.", "nota_recompra")
    s.para(
        (
            f"El consejo propondrá a la junta general un dividendo de {num(dps, 2)} euros por acción{ma} con cargo a {Y}.",
            "dpa",
        ),
        (f"El importe total destinado a dividendos asciende a {meur(div_total)}.", "dividendos_total"),
        (
            f"Además, la compañía mantiene un programa de recompra de acciones por un máximo de {meur(buyback, 0)}{mb}.",
            "recompra",
        ),
    )
    f_dps = b.fig("dpa", dps, num(dps, 2))
    f_interim = b.fig("nota_dividendo_cuenta", interim, num(interim, 2))
    f_div = b.fig("dividendos_total", div_total, num(div_total))
    f_buy = b.fig("recompra", buyback, num(buyback, 0))
    f_exec = b.fig("nota_recompra", executed, num(executed))
    b.ask(
        "texto",
        f"¿Qué dividendo por acción propondrá el consejo de {co} con cargo a {Y}?",
        f"{num(dps, 2)} euros por acción.",
        [f_dps],
        unit="euros por acción",
    )
    b.ask(
        "texto",
        f"¿Qué importe total destina {co} a dividendos con cargo a {Y}?",
        f"{meur(div_total)}.",
        [f_div],
        unit=MU,
    )
    b.ask(
        "texto",
        f"¿Por qué importe máximo es el programa de recompra de acciones de {co}?",
        f"{meur(buyback, 0)}.",
        [f_buy],
        unit=MU,
    )
    _ask_remuneration_notes(c, f_dps, f_interim, f_buy, f_exec)
    _ask_remuneration_calculations(c, f_div, st.neto, f_buy, f_exec)
    c.draft.metric("dpa", Entry(co, f_dps, b.doc_id, "euros por acción"))


def _ask_remuneration_notes(c: ReportContext, dps: Fig, interim: Fig, buyback: Fig, executed: Fig) -> None:
    """What only the footnotes state (interim dividend, buyback executed), alone and with the sentence they qualify."""
    b, co, Y = c.b, c.co, c.Y
    b.ask(
        "nota_pie",
        f"¿De cuánto fue el dividendo a cuenta por acción que {co} abonó en enero de {Y + 1}?",
        f"{num(interim.value, 2)} euros por acción.",
        [interim],
        unit="euros por acción",
    )
    b.ask(
        "nota_pie",
        f"¿Qué importe del programa de recompra de acciones de {co} se había ejecutado al cierre del "
        "ejercicio?",
        f"{meur(executed.value)}.",
        [executed],
        unit=MU,
    )
    b.ask(
        "texto_y_nota",
        f"¿Qué dividendo por acción propondrá {co} con cargo a {Y} y cuánto se abonó a cuenta?",
        f"{num(dps.value, 2)} euros por acción, que incluyen {num(interim.value, 2)} euros abonados a cuenta.",
        [dps, interim],
        unit="euros por acción",
    )
    b.ask(
        "texto_y_nota",
        f"¿Por qué importe máximo es el programa de recompra de {co} y cuánto se había ejecutado "
        "al cierre del ejercicio?",
        f"{meur(buyback.value, 0)}, de los que se habían ejecutado {meur(executed.value)}.",
        [buyback, executed],
        unit=MU,
    )


def _ask_remuneration_calculations(
    c: ReportContext, div: Fig, neto: Fig, buyback: Fig, executed: Fig
) -> None:
    """Pay-out (dividends over net profit, two sections apart) and the share of the buyback executed."""
    b, co, Y = c.b, c.co, c.Y
    v = round(div.value / neto.value * 100, 1)
    b.ask(
        "calculo",
        f"¿Qué porcentaje del resultado neto atribuido de {Y} destina {co} a dividendos (pay-out)?",
        f"{pct(v)} ({num(div.value)} / {num(neto.value)} millones de euros).",
        [calc(v, pct(v))],
        [div, neto],
        unit="%",
    )
    v = round(executed.value / buyback.value * 100, 1)
    b.ask(
        "calculo",
        f"¿Qué porcentaje de su programa de recompra de acciones había ejecutado {co} al cierre del "
        "ejercicio?",
        f"{pct(v)} ({num(executed.value)} de {num(buyback.value, 0)} millones de euros).",
        [calc(v, pct(v))],
        [buyback, executed],
        unit="%",
    )
