"""The annual-report template of the synthetic corpus: one function per section, in reading order, each sentence
recording the offsets of the figures it states. What the sections share is small and typed: the report being
written and its company (`ReportContext`), and the income statement's figures that later sections restate or
divide by (`KeyFigures`). The sections draw from one random stream in the order they are called, so the corpus
is the same as when this was one function."""

import math
import random
from dataclasses import dataclass

from finrag.synthetic.drafts import CompanyInfo, CorpusDraft, DocBuilder, Entry, Fig
from finrag.synthetic.formats import meur, num, pct
from finrag.synthetic.vocabulary import (
    ASSETS,
    REGIONS,
    SUBSIDIARY_A,
    SUBSIDIARY_B,
    CompanySpec,
    calc,
    change_pct,
    person,
    slug,
    split3,
    uniform,
    verb,
)

MU = "millones de euros"


@dataclass
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


@dataclass
class KeyFigures:
    """The income statement's figures (and their offsets in the document) that later sections use."""

    ebitda: float
    ebitda_p: float
    f_ebitda: Fig
    neto: float
    f_neto: Fig


# --------------------------------------------------------------------------------------------- annual report
def annual_report(rng: random.Random, spec: CompanySpec, year: int, draft: CorpusDraft) -> DocBuilder:
    co, Y, P = spec.name, year, year - 1
    legal = f"{co}, {spec.suffix}"
    b = DocBuilder(
        f"SYN_{slug(co)}_IA_{Y}", f"Informe anual {Y} de {legal}", co, "INFORME_ANUAL", str(Y), spec.sector
    )
    subsidiary = f"{rng.choice(SUBSIDIARY_A)} {rng.choice(SUBSIDIARY_B)}"
    c = ReportContext(rng, spec, draft, b, co, legal, Y, P, subsidiary)
    _summary(c)
    fig = _income_statement(c)
    _segments(c, fig)
    _debt(c, fig)
    _shareholder_remuneration(c, fig)
    regions = _workforce(c)
    _environment(c)
    _board(c)
    _ceo_pay(c)
    draft.companies.append(CompanyInfo(co, [b.doc_id], list(spec.segments), regions))
    return b


def _summary(c: ReportContext) -> None:
    """Summary."""
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


def _income_statement(c: ReportContext) -> KeyFigures:
    """Income statement."""
    rng, draft, b, co, Y, P = c.rng, c.draft, c.b, c.co, c.Y, c.P
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
    f_ing, f_ing_p = b.fig("fila_ingresos", ing, num(ing)), b.fig("fila_ingresos", ing_p, num(ing_p))
    f_ebitda = b.fig("fila_ebitda", ebitda, num(ebitda))
    f_ebit = b.fig("fila_ebit", ebit, num(ebit))
    f_neto, f_neto_p = b.fig("fila_neto", neto, num(neto)), b.fig("fila_neto", neto_p, num(neto_p))
    f_restr = b.fig("nota_reestructuracion", restr, num(restr))
    f_gain = b.fig("nota_plusvalia", gain, num(gain))
    b.ask("tabla", f"¿Cuáles fueron los ingresos de {co} en {Y}?", f"{meur(ing)}.", [f_ing], unit=MU)
    b.ask("tabla", f"¿Cuáles fueron los ingresos de {co} en {P}?", f"{meur(ing_p)}.", [f_ing_p], unit=MU)
    b.ask("tabla", f"¿Cuál fue el EBITDA ajustado de {co} en {Y}?", f"{meur(ebitda)}.", [f_ebitda], unit=MU)
    b.ask(
        "tabla",
        f"¿Cuál fue el resultado de explotación (EBIT) de {co} en {Y}?",
        f"{meur(ebit)}.",
        [f_ebit],
        unit=MU,
    )
    b.ask(
        "tabla", f"¿Cuál fue el resultado neto atribuido de {co} en {Y}?", f"{meur(neto)}.", [f_neto], unit=MU
    )
    b.ask(
        "tabla",
        f"¿Cuál fue el resultado neto atribuido de {co} en {P}?",
        f"{meur(neto_p)}.",
        [f_neto_p],
        unit=MU,
    )
    b.ask(
        "nota_pie",
        f"¿Qué importe de costes de reestructuración excluye el EBITDA ajustado de {co} en {Y}?",
        f"{meur(restr)}.",
        [f_restr],
        unit=MU,
    )
    b.ask(
        "nota_pie",
        f"¿Qué plusvalía incluye el resultado neto atribuido de {co} en {Y}?",
        f"{meur(gain)}.",
        [f_gain],
        unit=MU,
    )
    b.ask(
        "tabla_y_nota",
        f"¿Cuál fue el EBITDA ajustado de {co} en {Y} y qué costes de reestructuración excluye?",
        f"{meur(ebitda)}, que excluye {meur(restr)} de costes de reestructuración.",
        [f_ebitda, f_restr],
        unit=MU,
    )
    b.ask(
        "tabla_y_nota",
        f"¿Cuál fue el resultado neto atribuido de {co} en {Y} y qué plusvalía incluye?",
        f"{meur(neto)}, que incluye una plusvalía de {meur(gain)}.",
        [f_neto, f_gain],
        unit=MU,
    )
    v = change_pct(ing, ing_p)
    b.ask(
        "calculo",
        f"¿Qué variación porcentual registraron los ingresos de {co} en {Y} respecto a {P}?",
        f"Los ingresos {verb(v)} un {pct(abs(v))} ({num(ing)} frente a {num(ing_p)} millones de euros).",
        [calc(v, pct(abs(v)))],
        [f_ing, f_ing_p],
        unit="%",
    )
    v = round(ebitda / ing * 100, 1)
    b.ask(
        "calculo",
        f"¿Cuál fue el margen de EBITDA ajustado sobre ingresos de {co} en {Y}?",
        f"{pct(v)} ({num(ebitda)} / {num(ing)} millones de euros).",
        [calc(v, pct(v))],
        [f_ebitda, f_ing],
        unit="%",
    )
    v = round(ebitda - restr, 1)
    b.ask(
        "calculo",
        f"¿Cuál habría sido el EBITDA de {co} en {Y} si se restaran los costes de reestructuración "
        "que excluye el EBITDA ajustado?",
        f"{meur(v)} ({num(ebitda)} - {num(restr)}).",
        [calc(v, num(v))],
        [f_ebitda, f_restr],
        unit=MU,
    )
    v = change_pct(neto, neto_p)
    b.ask(
        "calculo",
        f"¿Qué variación porcentual registró el resultado neto atribuido de {co} en {Y} respecto a {P}?",
        f"El resultado neto atribuido {verb(v, 'aumentó', 'disminuyó')} un {pct(abs(v))}.",
        [calc(v, pct(abs(v)))],
        [f_neto, f_neto_p],
        unit="%",
    )
    draft.metric("ingresos", Entry(co, f_ing, b.doc_id, MU))
    return KeyFigures(ebitda, ebitda_p, f_ebitda, neto, f_neto)


def _segments(c: ReportContext, fig: KeyFigures) -> None:
    """Segments."""
    rng, spec, b, co, Y, P, subsidiary = c.rng, c.spec, c.b, c.co, c.Y, c.P, c.subsidiary
    ebitda, ebitda_p, f_ebitda = fig.ebitda, fig.ebitda_p, fig.f_ebitda
    s = b.section("EBITDA por segmento")
    seg = split3(rng, ebitda)
    seg_p = split3(rng, ebitda_p)
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
        [f_seg[k], f_ebitda],
        unit="%",
    )


def _debt(c: ReportContext, fig: KeyFigures) -> None:
    """Debt."""
    rng, draft, b, co, Y = c.rng, c.draft, c.b, c.co, c.Y
    ebitda, f_ebitda = fig.ebitda, fig.f_ebitda
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
        [f_debt, f_ebitda],
        unit="veces",
    )
    draft.metric("deuda", Entry(co, f_debt, b.doc_id, MU))


def _shareholder_remuneration(c: ReportContext, fig: KeyFigures) -> None:
    """Shareholder remuneration."""
    rng, draft, b, co, Y = c.rng, c.draft, c.b, c.co, c.Y
    neto, f_neto = fig.neto, fig.f_neto
    s = b.section("Retribución al accionista")
    dps = uniform(rng, 0.15, 1.6, 2)
    interim = round(dps * rng.uniform(0.3, 0.5), 2)
    div_total = round(neto * rng.uniform(0.3, 0.7), 1)
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
    b.ask(
        "nota_pie",
        f"¿De cuánto fue el dividendo a cuenta por acción que {co} abonó en enero de {Y + 1}?",
        f"{num(interim, 2)} euros por acción.",
        [f_interim],
        unit="euros por acción",
    )
    b.ask(
        "nota_pie",
        f"¿Qué importe del programa de recompra de acciones de {co} se había ejecutado al cierre del "
        "ejercicio?",
        f"{meur(executed)}.",
        [f_exec],
        unit=MU,
    )
    b.ask(
        "texto_y_nota",
        f"¿Qué dividendo por acción propondrá {co} con cargo a {Y} y cuánto se abonó a cuenta?",
        f"{num(dps, 2)} euros por acción, que incluyen {num(interim, 2)} euros abonados a cuenta.",
        [f_dps, f_interim],
        unit="euros por acción",
    )
    b.ask(
        "texto_y_nota",
        f"¿Por qué importe máximo es el programa de recompra de {co} y cuánto se había ejecutado "
        "al cierre del ejercicio?",
        f"{meur(buyback, 0)}, de los que se habían ejecutado {meur(executed)}.",
        [f_buy, f_exec],
        unit=MU,
    )
    v = round(div_total / neto * 100, 1)
    b.ask(
        "calculo",
        f"¿Qué porcentaje del resultado neto atribuido de {Y} destina {co} a dividendos (pay-out)?",
        f"{pct(v)} ({num(div_total)} / {num(neto)} millones de euros).",
        [calc(v, pct(v))],
        [f_div, f_neto],
        unit="%",
    )
    v = round(executed / buyback * 100, 1)
    b.ask(
        "calculo",
        f"¿Qué porcentaje de su programa de recompra de acciones había ejecutado {co} al cierre del "
        "ejercicio?",
        f"{pct(v)} ({num(executed)} de {num(buyback, 0)} millones de euros).",
        [calc(v, pct(v))],
        [f_buy, f_exec],
        unit="%",
    )
    draft.metric("dpa", Entry(co, f_dps, b.doc_id, "euros por acción"))


def _workforce(c: ReportContext) -> list[str]:
    """Workforce."""
    rng, draft, b, co, Y, P = c.rng, c.draft, c.b, c.co, c.Y, c.P
    s = b.section("Plantilla")
    regions = ["España", *rng.sample(REGIONS, 2)]
    hc = [rng.randint(800, 15000), rng.randint(150, 6000), rng.randint(150, 6000)]
    hc_p = [round(x * rng.uniform(0.88, 1.08)) for x in hc]
    tot, tot_p = sum(hc), sum(hc_p)
    jr = rng.randrange(3)
    temps = rng.randint(30, max(31, min(900, hc[jr] // 4)))
    women = uniform(rng, 22, 58)
    s.para("Número de empleados al cierre de cada ejercicio por área geográfica.")
    m = s.note(f"Incluye {num(temps, 0)} empleados con contrato temporal.", "nota_temporales", "table")
    rows = [
        ([r + (m if i == jr else ""), num(hc[i], 0), num(hc_p[i], 0)], f"fila_region_{i}")
        for i, r in enumerate(regions)
    ]
    rows.append((["Total", num(tot, 0), num(tot_p, 0)], "fila_plantilla_total"))
    s.table(["Región", str(Y), str(P)], rows)
    s.para((f"Las mujeres representan el {pct(women)} de la plantilla.", "mujeres_plantilla"))
    f_hc = [b.fig(f"fila_region_{i}", hc[i], num(hc[i], 0)) for i in range(3)]
    f_tot = b.fig("fila_plantilla_total", tot, num(tot, 0))
    f_tot_p = b.fig("fila_plantilla_total", tot_p, num(tot_p, 0))
    f_temps = b.fig("nota_temporales", temps, num(temps, 0))
    for i, r in enumerate(regions):
        b.ask(
            "tabla",
            f"¿Cuántos empleados tenía {co} en {r} al cierre de {Y}?",
            f"{num(hc[i], 0)} empleados.",
            [f_hc[i]],
            unit="empleados",
        )
    b.ask(
        "tabla",
        f"¿Cuál era la plantilla total de {co} al cierre de {Y}?",
        f"{num(tot, 0)} empleados.",
        [f_tot],
        unit="empleados",
    )
    b.ask(
        "tabla",
        f"¿Cuál era la plantilla total de {co} al cierre de {P}?",
        f"{num(tot_p, 0)} empleados.",
        [f_tot_p],
        unit="empleados",
    )
    b.ask(
        "nota_pie",
        f"¿Cuántos empleados con contrato temporal incluye la plantilla de {co} en {regions[jr]} en {Y}?",
        f"{num(temps, 0)} empleados.",
        [f_temps],
        unit="empleados",
    )
    b.ask(
        "tabla_y_nota",
        f"¿Cuántos empleados tenía {co} en {regions[jr]} al cierre de {Y} y cuántos de ellos "
        "tenían contrato temporal?",
        f"{num(hc[jr], 0)} empleados, de los que {num(temps, 0)} eran temporales.",
        [f_hc[jr], f_temps],
        unit="empleados",
    )
    b.ask(
        "texto",
        f"¿Qué porcentaje de la plantilla de {co} son mujeres?",
        f"{pct(women)}.",
        [b.fig("mujeres_plantilla", women, pct(women))],
        unit="%",
    )
    v = change_pct(tot, tot_p)
    b.ask(
        "calculo",
        f"¿Qué variación porcentual tuvo la plantilla total de {co} en {Y} respecto a {P}?",
        f"La plantilla {verb(v, 'creció', 'se redujo')} un {pct(abs(v))} ({num(tot, 0)} frente a {num(tot_p, 0)}).",
        [calc(v, pct(abs(v)))],
        [f_tot, f_tot_p],
        unit="%",
    )
    draft.metric("plantilla", Entry(co, f_tot, b.doc_id, "empleados"))
    return regions


def _environment(c: ReportContext) -> None:
    """Environment."""
    rng, draft, b, co, Y, P = c.rng, c.draft, c.b, c.co, c.Y, c.P
    s = b.section("Medio ambiente")
    a1 = rng.randint(2000, 900000)
    a1_p = round(a1 * rng.uniform(0.9, 1.2))
    a2 = rng.randint(1000, 300000)
    a2_p = round(a2 * rng.uniform(0.9, 1.25))
    location = round(a2 * rng.uniform(1.2, 2.5))
    energy = uniform(rng, 50, 9000)
    energy_p = round(energy * rng.uniform(0.9, 1.1), 1)
    target = rng.randint(30, 60)
    s.para(
        "Emisiones de gases de efecto invernadero en toneladas de CO2 equivalente (tCO2e) y consumo de energía."
    )
    m = s.note(
        f"Calculadas según el método basado en el mercado; con el método basado en la ubicación ascenderían "
        f"a {num(location, 0)} tCO2e.",
        "nota_ubicacion",
        "table",
    )
    s.table(
        ["Indicador", str(Y), str(P)],
        [
            (["Emisiones de alcance 1 (tCO2e)", num(a1, 0), num(a1_p, 0)], "fila_alcance1"),
            ([f"Emisiones de alcance 2 (tCO2e){m}", num(a2, 0), num(a2_p, 0)], "fila_alcance2"),
            (["Consumo de energía (GWh)", num(energy), num(energy_p)], "fila_energia"),
        ],
    )
    s.para(
        (
            f"El grupo se ha fijado como objetivo reducir sus emisiones de alcance 1 y 2 un {target} % en 2030 "
            "respecto a 2019.",
            "objetivo_emisiones",
        )
    )
    f_a1, f_a1_p = b.fig("fila_alcance1", a1, num(a1, 0)), b.fig("fila_alcance1", a1_p, num(a1_p, 0))
    f_a2 = b.fig("fila_alcance2", a2, num(a2, 0))
    f_loc = b.fig("nota_ubicacion", location, num(location, 0))
    t = "toneladas de CO2 equivalente"
    b.ask(
        "tabla",
        f"¿Cuántas emisiones de alcance 1 registró {co} en {Y}?",
        f"{num(a1, 0)} {t}.",
        [f_a1],
        unit=t,
    )
    b.ask(
        "tabla",
        f"¿Cuántas emisiones de alcance 2 registró {co} en {Y}?",
        f"{num(a2, 0)} {t}.",
        [f_a2],
        unit=t,
    )
    b.ask(
        "tabla",
        f"¿Cuánta energía consumió {co} en {Y}?",
        f"{num(energy)} GWh.",
        [b.fig("fila_energia", energy, num(energy))],
        unit="GWh",
    )
    b.ask(
        "nota_pie",
        f"¿A cuánto ascenderían las emisiones de alcance 2 de {co} en {Y} con el método basado en la "
        "ubicación?",
        f"{num(location, 0)} {t}.",
        [f_loc],
        unit=t,
    )
    b.ask(
        "tabla_y_nota",
        f"¿Cuántas emisiones de alcance 2 registró {co} en {Y} y a cuánto ascenderían con el "
        "método basado en la ubicación?",
        f"{num(a2, 0)} {t} (método de mercado) y {num(location, 0)} {t} (método de ubicación).",
        [f_a2, f_loc],
        unit=t,
    )
    b.ask(
        "texto",
        f"¿Qué reducción de emisiones de alcance 1 y 2 se ha fijado {co} como objetivo para 2030?",
        f"Un {pct(target, 0)} respecto a 2019.",
        [b.fig("objetivo_emisiones", target, pct(target, 0))],
        unit="%",
    )
    v = change_pct(a1, a1_p)
    b.ask(
        "calculo",
        f"¿Qué variación porcentual tuvieron las emisiones de alcance 1 de {co} en {Y} respecto a {P}?",
        f"Las emisiones de alcance 1 {verb(v)} un {pct(abs(v))}.",
        [calc(v, pct(abs(v)))],
        [f_a1, f_a1_p],
        unit="%",
    )
    draft.metric("alcance1", Entry(co, f_a1, b.doc_id, t))


def _board(c: ReportContext) -> None:
    """Board."""
    rng, draft, b, co, Y = c.rng, c.draft, c.b, c.co, c.Y
    s = b.section("Consejo de administración")
    n = rng.randint(9, 15)
    ind = rng.randint(math.ceil(n / 3), n - 2)
    meetings = rng.randint(8, 16)
    w = rng.randint(3, n // 2 + 1)
    w_pct = round(w / n * 100, 1)
    chair = person(rng)
    s.para(
        (
            f"El consejo de administración está formado por {n} consejeros, de los cuales {ind} son independientes.",
            "consejo_composicion",
        ),
        f"{chair} ocupa la presidencia del consejo.",
        (f"Las consejeras representan el {pct(w_pct)} del consejo.", "consejo_mujeres"),
        (f"Durante {Y} el consejo celebró {meetings} reuniones.", "consejo_reuniones"),
    )
    f_n = b.fig("consejo_composicion", n, str(n))
    f_ind = b.fig("consejo_composicion", ind, str(ind))
    b.ask(
        "texto",
        f"¿Cuántos consejeros forman el consejo de administración de {co}?",
        f"{n} consejeros.",
        [f_n],
        unit="consejeros",
    )
    b.ask(
        "texto",
        f"¿Cuántos consejeros independientes tiene {co}?",
        f"{ind} consejeros independientes.",
        [f_ind],
        unit="consejeros",
    )
    b.ask(
        "texto",
        f"¿Qué porcentaje del consejo de {co} representan las consejeras?",
        f"{pct(w_pct)}.",
        [b.fig("consejo_mujeres", w_pct, pct(w_pct))],
        unit="%",
    )
    b.ask(
        "texto",
        f"¿Cuántas reuniones celebró el consejo de {co} durante {Y}?",
        f"{meetings} reuniones.",
        [b.fig("consejo_reuniones", meetings, str(meetings))],
        unit="reuniones",
    )
    v = round(ind / n * 100, 1)
    b.ask(
        "calculo",
        f"¿Qué porcentaje del consejo de {co} son consejeros independientes?",
        f"{pct(v)} ({ind} de {n} consejeros).",
        [calc(v, pct(v))],
        [f_n, f_ind],
        unit="%",
    )
    draft.metric("consejeros", Entry(co, f_n, b.doc_id, "consejeros"))


def _ceo_pay(c: ReportContext) -> None:
    """CEO pay."""
    rng, b, co, Y, P, subsidiary = c.rng, c.b, c.co, c.Y, c.P, c.subsidiary
    s = b.section("Retribución del consejero delegado")
    fixed_pay = rng.randint(500, 1500)
    fixed_pay_p = round(fixed_pay * rng.uniform(0.9, 1.0))
    var_pay, var_pay_p = rng.randint(300, 1600), rng.randint(300, 1600)
    bonus = rng.randint(50, min(400, var_pay // 2))
    board_pay = rng.randint(2000, 9000)
    s.para("Importes en miles de euros.")
    m = s.note(
        f"Incluye un bonus extraordinario de {num(bonus, 0)} miles de euros por la integración de {subsidiary}.",
        "nota_bonus",
        "table",
    )
    tp, tp_p = fixed_pay + var_pay, fixed_pay_p + var_pay_p
    s.table(
        ["Concepto", str(Y), str(P)],
        [
            (["Retribución fija", num(fixed_pay, 0), num(fixed_pay_p, 0)], "fila_ret_fija"),
            ([f"Retribución variable anual{m}", num(var_pay, 0), num(var_pay_p, 0)], "fila_ret_variable"),
            (["Total", num(tp, 0), num(tp_p, 0)], "fila_ret_total"),
        ],
    )
    s.para(
        (
            f"La retribución total devengada por el conjunto del consejo ascendió a {num(board_pay, 0)} miles de "
            "euros.",
            "ret_consejo",
        )
    )
    ku = "miles de euros"
    f_var = b.fig("fila_ret_variable", var_pay, num(var_pay, 0))
    f_tp, f_tp_p = b.fig("fila_ret_total", tp, num(tp, 0)), b.fig("fila_ret_total", tp_p, num(tp_p, 0))
    f_bonus = b.fig("nota_bonus", bonus, num(bonus, 0))
    b.ask(
        "tabla",
        f"¿Cuál fue la retribución fija del consejero delegado de {co} en {Y}?",
        f"{num(fixed_pay, 0)} {ku}.",
        [b.fig("fila_ret_fija", fixed_pay, num(fixed_pay, 0))],
        unit=ku,
    )
    b.ask(
        "tabla",
        f"¿Cuál fue la retribución variable anual del consejero delegado de {co} en {Y}?",
        f"{num(var_pay, 0)} {ku}.",
        [f_var],
        unit=ku,
    )
    b.ask(
        "tabla",
        f"¿Cuál fue la retribución total del consejero delegado de {co} en {Y}?",
        f"{num(tp, 0)} {ku}.",
        [f_tp],
        unit=ku,
    )
    b.ask(
        "nota_pie",
        f"¿De qué importe fue el bonus extraordinario incluido en la retribución variable del "
        f"consejero delegado de {co} en {Y}?",
        f"{num(bonus, 0)} {ku}.",
        [f_bonus],
        unit=ku,
    )
    b.ask(
        "tabla_y_nota",
        f"¿Cuál fue la retribución variable anual del consejero delegado de {co} en {Y} y qué "
        "bonus extraordinario incluye?",
        f"{num(var_pay, 0)} {ku}, que incluyen un bonus de {num(bonus, 0)} {ku}.",
        [f_var, f_bonus],
        unit=ku,
    )
    b.ask(
        "texto",
        f"¿A cuánto ascendió la retribución total devengada por el conjunto del consejo de {co} en {Y}?",
        f"{num(board_pay, 0)} {ku}.",
        [b.fig("ret_consejo", board_pay, num(board_pay, 0))],
        unit=ku,
    )
    v = change_pct(tp, tp_p)
    b.ask(
        "calculo",
        f"¿Qué variación porcentual tuvo la retribución total del consejero delegado de {co} en {Y} "
        f"respecto a {P}?",
        f"La retribución total {verb(v, 'aumentó', 'disminuyó')} un {pct(abs(v))}.",
        [calc(v, pct(abs(v)))],
        [f_tp, f_tp_p],
        unit="%",
    )
