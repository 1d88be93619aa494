"""The research-note template of the synthetic corpus."""

import random

from finrag.synthetic.drafts import Candidate, CompanyInfo, CorpusDraft, DocBuilder, Fig
from finrag.synthetic.formats import meur, num, pct
from finrag.synthetic.vocabulary import HOUSES, calc, change_pct, slug, uniform


# --------------------------------------------------------------------------------------------- research note
def research_note(
    rng: random.Random, company: CompanyInfo, report: DocBuilder, year: int, draft: CorpusDraft
) -> None:
    co, N = company.name, year + 1
    house = rng.choice(HOUSES)
    b = DocBuilder(
        f"SYN_{slug(co)}_NOTA_{N}",
        f"Nota de análisis de {house} sobre {co}",
        co,
        "NOTA_ANALISIS",
        str(N),
        report.sector,
    )
    draft.builders.append(b)

    s = b.section("Recomendación")
    px = uniform(rng, 3, 60, 2)
    upside = rng.uniform(-0.15, 0.45)
    po = round(px * (1 + upside), 2)
    rec = "COMPRAR" if upside > 0.15 else ("MANTENER" if upside > -0.05 else "VENDER")
    wacc = uniform(rng, 6.5, 10.5)
    m = s.note(
        f"Obtenido por descuento de flujos de caja con un coste medio ponderado del capital del {pct(wacc)}.",
        "nota_wacc",
    )
    s.para(
        (
            f"{house} reitera su recomendación de {rec} sobre {co}, con un precio objetivo de {num(po, 2)} euros por "
            f"acción{m}.",
            "precio_objetivo",
        ),
        (f"En la fecha de la nota la acción cotizaba a {num(px, 2)} euros.", "cotizacion"),
    )
    f_po = b.fig("precio_objetivo", po, num(po, 2))
    f_px = b.fig("cotizacion", px, num(px, 2))
    f_wacc = b.fig("nota_wacc", wacc, pct(wacc))
    b.ask(
        "texto",
        f"¿Qué precio objetivo fija {house} para {co}?",
        f"{num(po, 2)} euros por acción.",
        [f_po],
        unit="euros por acción",
    )
    b.ask(
        "texto",
        f"¿A qué precio cotizaba la acción de {co} en la fecha de la nota de {house}?",
        f"{num(px, 2)} euros.",
        [f_px],
        unit="euros",
    )
    b.ask(
        "nota_pie",
        f"¿Qué coste medio ponderado del capital utiliza {house} para valorar {co}?",
        f"{pct(wacc)}.",
        [f_wacc],
        unit="%",
    )
    b.ask(
        "texto_y_nota",
        f"¿Qué precio objetivo fija {house} para {co} y con qué coste medio ponderado del capital "
        "lo obtiene?",
        f"{num(po, 2)} euros por acción, con un coste medio ponderado del capital del {pct(wacc)}.",
        [f_po, f_wacc],
        unit="euros por acción",
    )
    v = change_pct(po, px)
    b.ask(
        "calculo",
        f"¿Qué potencial de revalorización (o caída) implica el precio objetivo de {house} para {co} "
        "frente a su cotización en la fecha de la nota?",
        f"Un {pct(abs(v))} ({num(po, 2)} frente a {num(px, 2)} euros).",
        [calc(v, pct(abs(v)))],
        [f_po, f_px],
        unit="%",
    )

    s = b.section("Estimaciones")
    ing24 = next(e.fig for e in draft.metrics["ingresos"] if e.doc_id == report.doc_id)
    ing25 = round(ing24.value * rng.uniform(0.97, 1.12), 1)
    ing26 = round(ing25 * rng.uniform(1.0, 1.1), 1)
    mg = rng.uniform(0.08, 0.3)
    e25, e26 = round(ing25 * mg, 1), round(ing26 * (mg + rng.uniform(0, 0.01)), 1)
    bpa25 = uniform(rng, 0.2, 4.5, 2)
    bpa26 = round(bpa25 * rng.uniform(1.0, 1.15), 2)
    amort = round(bpa25 * rng.uniform(0.05, 0.2), 2)
    s.para("Cifras en millones de euros, salvo el beneficio por acción (BPA), en euros.")
    m = s.note(
        f"BPA ajustado: excluye la amortización de intangibles de adquisiciones, equivalente a {num(amort, 2)} "
        "euros por acción en el primer año estimado.",
        "nota_bpa",
        "table",
    )
    s.table(
        ["Concepto", f"{N}e", f"{N + 1}e"],
        [
            (["Ingresos", num(ing25), num(ing26)], "fila_ingresos_est"),
            (["EBITDA", num(e25), num(e26)], "fila_ebitda_est"),
            ([f"BPA{m}", num(bpa25, 2), num(bpa26, 2)], "fila_bpa_est"),
        ],
    )
    f_ing25 = b.fig("fila_ingresos_est", ing25, num(ing25))
    f_bpa = b.fig("fila_bpa_est", bpa25, num(bpa25, 2))
    f_amort = b.fig("nota_bpa", amort, num(amort, 2))
    mu = "millones de euros"
    b.ask("tabla", f"¿Qué ingresos estima {house} para {co} en {N}?", f"{meur(ing25)}.", [f_ing25], unit=mu)
    b.ask(
        "tabla",
        f"¿Qué ingresos estima {house} para {co} en {N + 1}?",
        f"{meur(ing26)}.",
        [b.fig("fila_ingresos_est", ing26, num(ing26))],
        unit=mu,
    )
    b.ask(
        "tabla",
        f"¿Qué EBITDA estima {house} para {co} en {N}?",
        f"{meur(e25)}.",
        [b.fig("fila_ebitda_est", e25, num(e25))],
        unit=mu,
    )
    b.ask(
        "tabla",
        f"¿Qué beneficio por acción (BPA) estima {house} para {co} en {N}?",
        f"{num(bpa25, 2)} euros.",
        [f_bpa],
        unit="euros por acción",
    )
    b.ask(
        "nota_pie",
        f"¿Qué amortización de intangibles por acción excluye el BPA ajustado que estima {house} para {co}?",
        f"{num(amort, 2)} euros por acción.",
        [f_amort],
        unit="euros por acción",
    )
    b.ask(
        "tabla_y_nota",
        f"¿Qué BPA estima {house} para {co} en {N} y qué amortización de intangibles por acción excluye?",
        f"{num(bpa25, 2)} euros, excluida una amortización de {num(amort, 2)} euros por acción.",
        [f_bpa, f_amort],
        unit="euros por acción",
    )
    draft.pairs.append(
        pair_candidate(
            f"Según la nota de {house}, ¿qué ingresos espera {co} en {N}, y cuáles fueron sus ingresos de {year} según "
            "su informe anual?",
            f"{meur(ing25)} estimados para {N}, frente a {meur(ing24.value)} en {year}.",
            [f_ing25, ing24],
            [b.doc_id, report.doc_id],
            co,
            mu,
        )
    )

    s = b.section("Valoración")
    per = uniform(rng, 6, 28)
    dy = uniform(rng, 0.5, 7.5)
    ev = uniform(rng, 4, 16)
    s.para(
        (
            f"Con nuestras estimaciones, {co} cotiza a un PER de {num(per)} veces los beneficios de {N}.",
            "per",
        ),
        (f"La rentabilidad por dividendo estimada para {N} es del {pct(dy)}.", "rentabilidad_dividendo"),
        (f"El valor de empresa equivale a {num(ev)} veces el EBITDA estimado de {N}.", "ev_ebitda"),
    )
    b.ask(
        "texto",
        f"¿A qué PER de {N} cotiza {co} según {house}?",
        f"{num(per)} veces.",
        [b.fig("per", per, num(per))],
        unit="veces",
    )
    b.ask(
        "texto",
        f"¿Qué rentabilidad por dividendo estima {house} para {co} en {N}?",
        f"{pct(dy)}.",
        [b.fig("rentabilidad_dividendo", dy, pct(dy))],
        unit="%",
    )
    b.ask(
        "texto",
        f"¿Cuántas veces su EBITDA estimado de {N} equivale el valor de empresa de {co} según {house}?",
        f"{num(ev)} veces.",
        [b.fig("ev_ebitda", ev, num(ev))],
        unit="veces",
    )

    s = b.section("Riesgos")
    sens = uniform(rng, 0.3, 3.5, 2)
    s.para(
        "Los principales riesgos son una desaceleración de la demanda, el encarecimiento de la financiación y la "
        "ejecución de las adquisiciones.",
        (
            f"Una subida de 100 puntos básicos del coste del capital reduciría nuestro precio objetivo en "
            f"{num(sens, 2)} euros por acción.",
            "sensibilidad",
        ),
    )
    b.ask(
        "texto",
        f"¿En cuánto reduciría el precio objetivo de {co} una subida de 100 puntos básicos del coste del "
        f"capital, según {house}?",
        f"{num(sens, 2)} euros por acción.",
        [b.fig("sensibilidad", sens, num(sens, 2))],
        unit="euros por acción",
    )

    company.has_note = True
    company.doc_ids.append(b.doc_id)


def pair_candidate(
    question: str, answer: str, figs: list[Fig], doc_ids: list[str], company: str, unit: str
) -> Candidate:
    return Candidate("comparacion", question, answer, figs, [], unit, doc_ids, company, "")
