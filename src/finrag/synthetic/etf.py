"""The ETF-prospectus template of the synthetic corpus."""

import random
from dataclasses import dataclass

from finrag.synthetic.drafts import CorpusDraft, DocBuilder, Entry, FundInfo
from finrag.synthetic.formats import meur, num, pct
from finrag.synthetic.vocabulary import HEDGED, REPLICATION, calc, slug, uniform


# --------------------------------------------------------------------------------------------- ETF prospectus
@dataclass
class FundFacts:
    name: str
    index: str
    isin_acc: str
    doc_id: str


def isin(rng: random.Random) -> str:
    chars = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
    return "IE000" + "".join(rng.choice(chars) for _ in range(6)) + str(rng.randrange(10))


def etf_prospectus(
    rng: random.Random, gestora: str, index: str, desc: str, year: int, draft: CorpusDraft
) -> FundFacts:
    Y = year
    name = f"{gestora} {index} UCITS ETF"
    b = DocBuilder(
        f"SYN_{slug(gestora + ' ' + index)}_FOLLETO",
        f"Folleto simplificado de {name}",
        name,
        "FOLLETO_ETF",
        str(Y),
        "fondos cotizados",
    )
    draft.builders.append(b)

    s = b.section("Objetivo de inversión")
    n_const = rng.randint(25, 1500)
    td = uniform(rng, 0.02, 0.40, 2)
    s.para(
        f"El fondo tiene como objetivo replicar la rentabilidad del índice {index}, que agrupa {desc}.",
        (f"El índice está compuesto por {num(n_const, 0)} valores.", "constituyentes"),
        (
            f"La diferencia de seguimiento prevista en condiciones normales de mercado es del {pct(td, 2)} anual.",
            "diferencia_seguimiento",
        ),
    )
    b.ask(
        "texto",
        f"¿Cuántos valores componen el índice que replica {name}?",
        f"{num(n_const, 0)} valores.",
        [b.fig("constituyentes", n_const, num(n_const, 0))],
        unit="valores",
    )
    b.ask(
        "texto",
        f"¿Qué diferencia de seguimiento prevé {name} en condiciones normales de mercado?",
        f"{pct(td, 2)} anual.",
        [b.fig("diferencia_seguimiento", td, pct(td, 2))],
        unit="%",
    )

    s = b.section("Política de inversión y replicación")
    lend = rng.randint(10, 50)
    share = rng.randint(60, 90)
    m = s.note(
        f"El {share} % de los ingresos netos obtenidos por el préstamo de valores se abona al fondo; el resto "
        "retribuye al agente de préstamo.",
        "nota_prestamo",
    )
    s.para(
        f"El fondo utiliza un método de replicación {rng.choice(REPLICATION)}.",
        (f"El fondo podrá prestar valores hasta un máximo del {lend} % de su patrimonio{m}.", "prestamo"),
    )
    f_lend = b.fig("prestamo", lend, pct(lend, 0))
    f_share = b.fig("nota_prestamo", share, pct(share, 0))
    b.ask(
        "texto",
        f"¿Qué porcentaje máximo de su patrimonio puede prestar {name}?",
        f"{pct(lend, 0)}.",
        [f_lend],
        unit="%",
    )
    b.ask(
        "nota_pie",
        f"¿Qué porcentaje de los ingresos netos por préstamo de valores se abona a {name}?",
        f"{pct(share, 0)}.",
        [f_share],
        unit="%",
    )
    b.ask(
        "texto_y_nota",
        f"¿Qué porcentaje máximo de su patrimonio puede prestar {name} y qué parte de los ingresos "
        "netos del préstamo se abona al fondo?",
        f"Hasta el {pct(lend, 0)} del patrimonio; se abona al fondo el "
        f"{pct(share, 0)} de los ingresos netos.",
        [f_lend, f_share],
        unit="%",
    )

    s = b.section("Clases de participaciones")
    hedged = rng.choice(HEDGED[:3])
    freq = rng.choice(("semestral", "trimestral"))
    ter_acc = uniform(rng, 0.05, 0.45, 2)
    ter_dist = round(ter_acc + rng.choice((0.02, 0.03, 0.05)), 2)
    ter_h = round(ter_acc + uniform(rng, 0.03, 0.15, 2), 2)
    hcost = uniform(rng, 0.02, 0.12, 2)
    classes = ["EUR (Acc)", "EUR (Dist)", hedged]
    isins = [isin(rng) for _ in classes]
    s.para(
        "El fondo ofrece las siguientes clases de participaciones, todas ellas admitidas a negociación en la "
        "Bolsa de Madrid."
    )
    m = s.note(
        f"Clase cubierta frente al riesgo de divisa; el coste de cobertura estimado es del {pct(hcost, 2)} "
        "anual.",
        "nota_cobertura",
        "table",
    )
    ters = [ter_acc, ter_dist, ter_h]
    dists = [
        "Acumulación",
        f"Distribución {freq}",
        "Acumulación" if "Acc" in hedged else f"Distribución {freq}",
    ]
    rows = []
    for i, c in enumerate(classes):
        cur = c.split()[0]
        rows.append(
            ([c + (m if i == 2 else ""), isins[i], cur, pct(ters[i], 2), dists[i]], f"fila_clase_{i}")
        )
    s.table(["Clase", "ISIN", "Divisa", "Gastos corrientes", "Distribución"], rows, numeric={3})
    f_ter = [b.fig(f"fila_clase_{i}", ters[i], pct(ters[i], 2)) for i in range(3)]
    f_hcost = b.fig("nota_cobertura", hcost, pct(hcost, 2))
    for i, c in enumerate(classes):
        b.ask(
            "tabla",
            f"¿Cuáles son los gastos corrientes de la clase {c} de {name}?",
            f"{pct(ters[i], 2)}.",
            [f_ter[i]],
            unit="%",
        )
    b.ask(
        "nota_pie",
        f"¿Qué coste de cobertura anual se estima para la clase {hedged} de {name}?",
        f"{pct(hcost, 2)} anual.",
        [f_hcost],
        unit="%",
    )
    b.ask(
        "tabla_y_nota",
        f"¿Cuáles son los gastos corrientes de la clase {hedged} de {name} y qué coste de "
        "cobertura se estima?",
        f"Gastos corrientes del {pct(ter_h, 2)}; coste de cobertura estimado del {pct(hcost, 2)} anual.",
        [f_ter[2], f_hcost],
        unit="%",
    )
    v = round((ter_h - ter_acc) * 100, 1)
    b.ask(
        "calculo",
        f"¿Cuántos puntos básicos más de gastos corrientes soporta la clase {hedged} que la clase "
        f"EUR (Acc) de {name}?",
        f"{num(v, 0)} puntos básicos ({pct(ter_h, 2)} frente a {pct(ter_acc, 2)}).",
        [calc(v, num(v, 0))],
        [f_ter[2], f_ter[0]],
        unit="puntos básicos",
    )
    v = round(10000 * ter_acc / 100, 2)
    b.ask(
        "calculo",
        f"¿Cuántos euros al año supondrían los gastos corrientes de la clase EUR (Acc) de {name} para "
        "una inversión de 10.000 euros?",
        f"{num(v, 0)} euros al año ({pct(ter_acc, 2)} de 10.000 euros).",
        [calc(v, num(v, 0))],
        [f_ter[0]],
        unit="euros",
    )
    draft.metric("ter", Entry(name, f_ter[0], b.doc_id, "%"))

    s = b.section("Política de distribución")
    dist_amt = uniform(rng, 0.2, 2.5, 2)
    dy = uniform(rng, 0.8, 5.5)
    s.para(
        f"Las clases de distribución reparten los rendimientos netos con periodicidad {freq}; las de acumulación los "
        "reinvierten.",
        (
            f"En {Y} la clase EUR (Dist) distribuyó {num(dist_amt, 2)} euros por participación.",
            "distribucion_importe",
        ),
        (
            f"La rentabilidad por distribución de la clase EUR (Dist) en {Y} fue del {pct(dy)}.",
            "rentabilidad_distribucion",
        ),
    )
    b.ask(
        "texto",
        f"¿Cuántos euros por participación distribuyó la clase EUR (Dist) de {name} en {Y}?",
        f"{num(dist_amt, 2)} euros por participación.",
        [b.fig("distribucion_importe", dist_amt, num(dist_amt, 2))],
        unit="euros por participación",
    )
    b.ask(
        "texto",
        f"¿Qué rentabilidad por distribución obtuvo la clase EUR (Dist) de {name} en {Y}?",
        f"{pct(dy)}.",
        [b.fig("rentabilidad_distribucion", dy, pct(dy))],
        unit="%",
    )

    s = b.section("Datos del fondo")
    aum = uniform(rng, 80, 6000)
    mgmt = round(ter_h + uniform(rng, 0.05, 0.3, 2), 2)
    s.para(
        (f"El patrimonio del fondo ascendía a {meur(aum)} al cierre de {Y}.", "patrimonio"),
        (
            f"La comisión de gestión máxima que el folleto permite aplicar es del {pct(mgmt, 2)} anual.",
            "comision_maxima",
        ),
        "El depositario del fondo es una entidad de crédito supervisada por el Banco Central de Irlanda.",
    )
    f_aum = b.fig("patrimonio", aum, num(aum))
    b.ask(
        "texto",
        f"¿Qué patrimonio tenía {name} al cierre de {Y}?",
        f"{meur(aum)}.",
        [f_aum],
        unit="millones de euros",
    )
    b.ask(
        "texto",
        f"¿Cuál es la comisión de gestión máxima que permite aplicar el folleto de {name}?",
        f"{pct(mgmt, 2)} anual.",
        [b.fig("comision_maxima", mgmt, pct(mgmt, 2))],
        unit="%",
    )
    draft.metric("patrimonio", Entry(name, f_aum, b.doc_id, "millones de euros"))

    draft.funds.append(FundInfo(name, [b.doc_id], classes))
    return FundFacts(name, index, isins[0], b.doc_id)
