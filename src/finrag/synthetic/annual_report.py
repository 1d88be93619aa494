"""The annual-report template of the synthetic corpus: one function per section, in reading order, each sentence
recording the offsets of the figures it states. The financial sections and the records they all share live in
annual_report_accounts.py; the people, environment and governance sections follow the entry point here. The
sections draw from one random stream in the order they are called, so the corpus is the same as when this was
one function."""

import math
import random

from finrag.synthetic.annual_report_accounts import (
    ReportContext,
    debt_and_financing,
    income_statement,
    segments,
    shareholder_remuneration,
    summary,
)
from finrag.synthetic.drafts import CompanyInfo, CorpusDraft, DocBuilder, Entry, Fig
from finrag.synthetic.formats import num, pct
from finrag.synthetic.vocabulary import (
    REGIONS,
    SUBSIDIARY_A,
    SUBSIDIARY_B,
    CompanySpec,
    calc,
    change_pct,
    person,
    slug,
    uniform,
    verb,
)

TCO2E = "toneladas de CO2 equivalente"
KEUR = "miles de euros"


# --------------------------------------------------------------------------------------------- annual report
def annual_report(rng: random.Random, spec: CompanySpec, year: int, draft: CorpusDraft) -> DocBuilder:
    """One company's annual report; its figures join the corpus's cross-document comparisons through ``draft``."""
    co, Y, P = spec.name, year, year - 1
    legal = f"{co}, {spec.suffix}"
    b = DocBuilder(
        f"SYN_{slug(co)}_IA_{Y}", f"Informe anual {Y} de {legal}", co, "INFORME_ANUAL", str(Y), spec.sector
    )
    subsidiary = f"{rng.choice(SUBSIDIARY_A)} {rng.choice(SUBSIDIARY_B)}"
    c = ReportContext(rng, spec, draft, b, co, legal, Y, P, subsidiary)
    summary(c)
    st = income_statement(c)
    segments(c, st)
    debt_and_financing(c, st)
    shareholder_remuneration(c, st)
    regions = _workforce(c)
    _environment(c)
    _board(c)
    _ceo_pay(c)
    draft.companies.append(CompanyInfo(co, [b.doc_id], list(spec.segments), regions))
    return b


def _workforce(c: ReportContext) -> list[str]:
    """Headcount by region (Spain and two others) with a temporary-staff note; returns the regions, which the
    company's record keeps for the corpus's unanswerable questions."""
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
    """Emissions and energy for two years, with the location-based scope-2 figure only in a note, and a target."""
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
    _ask_emissions_table(c, f_a1, f_a2, b.fig("fila_energia", energy, num(energy)), f_loc)
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
    draft.metric("alcance1", Entry(co, f_a1, b.doc_id, TCO2E))


def _ask_emissions_table(c: ReportContext, a1: Fig, a2: Fig, energy: Fig, location: Fig) -> None:
    """The table's questions; the scope-2 pair needs the row and its note, which sit in different passages."""
    b, co, Y, t = c.b, c.co, c.Y, TCO2E
    b.ask(
        "tabla",
        f"¿Cuántas emisiones de alcance 1 registró {co} en {Y}?",
        f"{num(a1.value, 0)} {t}.",
        [a1],
        unit=t,
    )
    b.ask(
        "tabla",
        f"¿Cuántas emisiones de alcance 2 registró {co} en {Y}?",
        f"{num(a2.value, 0)} {t}.",
        [a2],
        unit=t,
    )
    b.ask(
        "tabla", f"¿Cuánta energía consumió {co} en {Y}?", f"{num(energy.value)} GWh.", [energy], unit="GWh"
    )
    b.ask(
        "nota_pie",
        f"¿A cuánto ascenderían las emisiones de alcance 2 de {co} en {Y} con el método basado en la "
        "ubicación?",
        f"{num(location.value, 0)} {t}.",
        [location],
        unit=t,
    )
    b.ask(
        "tabla_y_nota",
        f"¿Cuántas emisiones de alcance 2 registró {co} en {Y} y a cuánto ascenderían con el "
        "método basado en la ubicación?",
        f"{num(a2.value, 0)} {t} (método de mercado) y {num(location.value, 0)} {t} (método de ubicación).",
        [a2, location],
        unit=t,
    )


def _board(c: ReportContext) -> None:
    """The board in prose (size, independents, women, meetings): counts written as plain integers."""
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
    """The CEO's pay table (thousands of euros, not millions: a unit a careless answer gets wrong) and the board's."""
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
    f_tp, f_tp_p = b.fig("fila_ret_total", tp, num(tp, 0)), b.fig("fila_ret_total", tp_p, num(tp_p, 0))
    _ask_ceo_pay_table(
        c,
        b.fig("fila_ret_fija", fixed_pay, num(fixed_pay, 0)),
        b.fig("fila_ret_variable", var_pay, num(var_pay, 0)),
        f_tp,
        b.fig("nota_bonus", bonus, num(bonus, 0)),
    )
    b.ask(
        "texto",
        f"¿A cuánto ascendió la retribución total devengada por el conjunto del consejo de {co} en {Y}?",
        f"{num(board_pay, 0)} {KEUR}.",
        [b.fig("ret_consejo", board_pay, num(board_pay, 0))],
        unit=KEUR,
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


def _ask_ceo_pay_table(c: ReportContext, fixed: Fig, variable: Fig, total: Fig, bonus: Fig) -> None:
    """The table's questions; the bonus is stated only in the note under the variable-pay row."""
    b, co, Y, ku = c.b, c.co, c.Y, KEUR
    b.ask(
        "tabla",
        f"¿Cuál fue la retribución fija del consejero delegado de {co} en {Y}?",
        f"{num(fixed.value, 0)} {ku}.",
        [fixed],
        unit=ku,
    )
    b.ask(
        "tabla",
        f"¿Cuál fue la retribución variable anual del consejero delegado de {co} en {Y}?",
        f"{num(variable.value, 0)} {ku}.",
        [variable],
        unit=ku,
    )
    b.ask(
        "tabla",
        f"¿Cuál fue la retribución total del consejero delegado de {co} en {Y}?",
        f"{num(total.value, 0)} {ku}.",
        [total],
        unit=ku,
    )
    b.ask(
        "nota_pie",
        f"¿De qué importe fue el bonus extraordinario incluido en la retribución variable del "
        f"consejero delegado de {co} en {Y}?",
        f"{num(bonus.value, 0)} {ku}.",
        [bonus],
        unit=ku,
    )
    b.ask(
        "tabla_y_nota",
        f"¿Cuál fue la retribución variable anual del consejero delegado de {co} en {Y} y qué "
        "bonus extraordinario incluye?",
        f"{num(variable.value, 0)} {ku}, que incluyen un bonus de {num(bonus.value, 0)} {ku}.",
        [variable, bonus],
        unit=ku,
    )
