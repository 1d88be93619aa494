"""The key-information-document (KID) template of the synthetic corpus."""

import random

from finrag.synthetic.drafts import CorpusDraft, DocBuilder, Entry
from finrag.synthetic.etf import FundFacts
from finrag.synthetic.formats import num, pct
from finrag.synthetic.vocabulary import calc, slug, uniform


# --------------------------------------------------------------------------------------------- KID
def kid_document(rng: random.Random, fund: FundFacts, year: int, draft: CorpusDraft) -> None:
    name = fund.name
    base = fund.doc_id.removesuffix("_FOLLETO")
    b = DocBuilder(
        f"{base}_KID",
        f"Documento de datos fundamentales: {name}, clase EUR (Acc)",
        name,
        "KID",
        str(year),
        "fondos cotizados",
    )
    draft.builders.append(b)
    doc = "el documento de datos fundamentales"

    s = b.section("¿Qué es este producto?")
    s.para(
        f"Tipo: fondo cotizado armonizado (UCITS ETF), clase EUR (Acc), ISIN {fund.isin_acc}.",
        f"Objetivo: replicar la rentabilidad del índice {fund.index}; los rendimientos se reinvierten.",
    )

    s = b.section("¿Qué riesgos corro y qué podría obtener a cambio?")
    irr = rng.randint(2, 6)
    s.para(
        (
            f"Hemos clasificado este producto en la clase de riesgo {irr} en una escala de 7, en la que 1 significa el "
            "riesgo más bajo.",
            "indicador_riesgo",
        ),
        "Este producto no incluye protección alguna frente a la evolución futura del mercado.",
    )
    f_irr = b.fig("indicador_riesgo", irr, str(irr))
    b.ask(
        "texto",
        f"¿Qué indicador resumido de riesgo, en una escala de 1 a 7, asigna {doc} a {name}?",
        f"Clase de riesgo {irr}.",
        [f_irr],
        unit="",
    )
    draft.metric("irr", Entry(name, f_irr, b.doc_id, ""))

    s = b.section("¿Cuánto tiempo debo mantener la inversión?")
    hold = rng.randint(3, 7)
    s.para(
        (f"Periodo de mantenimiento recomendado: {hold} años.", "periodo_mantenimiento"),
        "Puede vender sus participaciones en cualquier día de negociación sin penalización por salida anticipada.",
    )
    b.ask(
        "texto",
        f"¿Cuál es el periodo de mantenimiento recomendado de {name} según {doc}?",
        f"{hold} años.",
        [b.fig("periodo_mantenimiento", hold, str(hold))],
        unit="años",
    )

    s = b.section("Escenarios de rentabilidad")
    r = {
        "Tensión": (uniform(rng, -45, -20), uniform(rng, -18, -6)),
        "Desfavorable": (uniform(rng, -15, -3), uniform(rng, -4, -0.5)),
        "Moderado": (uniform(rng, 1.5, 8), uniform(rng, 2, 7)),
        "Favorable": (uniform(rng, 12, 35), uniform(rng, 7.5, 14)),
    }
    amount = round(10000 * (1 + r["Moderado"][1] / 100) ** hold)
    s.para("Rentabilidad media anual en cada escenario, tras deducir los costes.")
    m1 = s.note(
        "El escenario de tensión muestra lo que podría obtener en circunstancias extremas de los mercados.",
        None,
        "table",
    )
    m2 = s.note(
        f"Para una inversión de 10.000 euros, el importe que podría recibir al final del periodo recomendado "
        f"en el escenario moderado es de {num(amount, 0)} euros.",
        "nota_moderado",
        "table",
    )
    marks = {"Tensión": m1, "Moderado": m2}
    s.table(
        ["Escenario", "1 año", "Al final del periodo recomendado"],
        [
            ([k + marks.get(k, ""), pct(v1), pct(v2)], f"fila_escenario_{slug(k).lower()}")
            for k, (v1, v2) in r.items()
        ],
    )
    f_mod = b.fig("fila_escenario_moderado", r["Moderado"][1], pct(r["Moderado"][1]))
    f_fav = b.fig("fila_escenario_favorable", r["Favorable"][1], pct(r["Favorable"][1]))
    f_unf = b.fig("fila_escenario_desfavorable", r["Desfavorable"][1], pct(r["Desfavorable"][1]))
    f_fav1 = b.fig("fila_escenario_favorable", r["Favorable"][0], pct(r["Favorable"][0]))
    f_amount = b.fig("nota_moderado", amount, num(amount, 0))
    end = "al final del periodo de mantenimiento recomendado"
    b.ask(
        "tabla",
        f"¿Qué rentabilidad media anual muestra el escenario moderado de {name} {end}?",
        f"{pct(r['Moderado'][1])} anual.",
        [f_mod],
        unit="%",
    )
    b.ask(
        "tabla",
        f"¿Qué rentabilidad muestra el escenario favorable de {name} a 1 año?",
        f"{pct(r['Favorable'][0])}.",
        [f_fav1],
        unit="%",
    )
    b.ask(
        "tabla",
        f"¿Qué rentabilidad media anual muestra el escenario desfavorable de {name} {end}?",
        f"{pct(r['Desfavorable'][1])} anual.",
        [f_unf],
        unit="%",
    )
    b.ask(
        "nota_pie",
        f"¿Qué importe podría recibir un inversor de 10.000 euros en {name} {end} en el escenario moderado?",
        f"{num(amount, 0)} euros.",
        [f_amount],
        unit="euros",
    )
    b.ask(
        "tabla_y_nota",
        f"¿Qué rentabilidad media anual muestra el escenario moderado de {name} {end} y qué importe "
        "recibiría en ese escenario una inversión de 10.000 euros?",
        f"{pct(r['Moderado'][1])} anual; {num(amount, 0)} euros.",
        [f_mod, f_amount],
        unit="%",
    )
    v = round(r["Favorable"][1] - r["Desfavorable"][1], 1)
    b.ask(
        "calculo",
        f"¿Cuántos puntos porcentuales separan la rentabilidad media anual de los escenarios favorable y "
        f"desfavorable de {name} {end}?",
        f"{num(v)} puntos porcentuales.",
        [calc(v, num(v))],
        [f_fav, f_unf],
        unit="puntos porcentuales",
    )

    s = b.section("¿Cuáles son los costes?")
    op = uniform(rng, 0.01, 0.12, 2)
    yrs = rng.choice([y for y in (3, 5) if y != hold])  # not the holding period: each figure once
    total_cost = rng.randint(12, 90)
    s.para("Incidencia anual de los costes sobre la inversión.")
    m = s.note(
        f"Estimación basada en la media de los costes de los últimos {yrs} años.",
        "nota_costes_operacion",
        "table",
    )
    s.table(
        ["Tipo de coste", "Incidencia anual"],
        [
            ([f"Costes de operación{m}", pct(op, 2)], "fila_costes_operacion"),
            (["Comisiones de rendimiento", "No se aplican"], None),
        ],
    )
    s.para(
        (
            f"Para una inversión de 10.000 euros, los costes totales del primer año ascienden a {total_cost} euros.",
            "costes_totales",
        )
    )
    f_op = b.fig("fila_costes_operacion", op, pct(op, 2))
    f_yrs = b.fig("nota_costes_operacion", yrs, str(yrs))
    b.ask(
        "tabla",
        f"¿Qué incidencia anual tienen los costes de operación de {name} según {doc}?",
        f"{pct(op, 2)}.",
        [f_op],
        unit="%",
    )
    b.ask(
        "nota_pie",
        f"¿En la media de cuántos años se basa la estimación de los costes de operación de {name}?",
        f"En la media de los últimos {yrs} años.",
        [f_yrs],
        unit="años",
    )
    b.ask(
        "tabla_y_nota",
        f"¿Qué incidencia anual tienen los costes de operación de {name} y en cuántos años se basa "
        "la estimación?",
        f"{pct(op, 2)}, estimado con la media de los últimos {yrs} años.",
        [f_op, f_yrs],
    )
    b.ask(
        "texto",
        f"¿A cuánto ascienden los costes totales del primer año de {name} para una inversión de 10.000 "
        "euros?",
        f"{total_cost} euros.",
        [b.fig("costes_totales", total_cost, str(total_cost))],
        unit="euros",
    )

    for f in draft.funds:
        if f.name == name:
            f.has_kid = True
            f.doc_ids.append(b.doc_id)
