"""Deterministic generator of a synthetic Spanish financial corpus with gold passages known to the character.

Why: the FinanceBench study depends on a data mirror and English filings; this corpus runs anywhere, in Spanish
(decimal comma, ``1.250 millones de euros``), and every fact is stated exactly once in a passage whose offsets
are recorded when the sentence is written. Four document types: annual reports of invented companies, ETF
prospectuses, key-information documents (KID) and research notes.

Determinism: one ``random.Random(seed)`` threads through everything; no global random state, no clock, no
``hash()`` of strings, no iteration over sets.
"""

from __future__ import annotations

import math
import random
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from finrag.contracts import Document, Page
from finrag.io import read_jsonl, write_json, write_jsonl
from finrag.synthetic.drafts import Candidate, CompanyInfo, CorpusDraft, DocBuilder, Entry, Fig, FundInfo
from finrag.synthetic.formats import meur, num, pct
from finrag.synthetic.models import KINDS, SyntheticQuestion


@dataclass(frozen=True)
class CompanySpec:
    name: str
    suffix: str
    sector: str
    segments: tuple[str, str, str]
    backlog: str  # "cartera de pedidos" or the sector's equivalent


COMPANIES: tuple[CompanySpec, ...] = (
    CompanySpec(
        "Aceros del Cantábrico",
        "S.A.",
        "siderúrgico",
        ("Aceros planos", "Aceros largos", "Distribución siderúrgica"),
        "cartera de pedidos",
    ),
    CompanySpec(
        "Energías del Levante",
        "S.A.",
        "energético",
        ("Generación renovable", "Redes eléctricas", "Comercialización de energía"),
        "cartera de proyectos",
    ),
    CompanySpec(
        "Grupo Alimentario Duero",
        "S.A.",
        "alimentario",
        ("Lácteos", "Conservas vegetales", "Bebidas"),
        "cartera de contratos con distribuidores",
    ),
    CompanySpec(
        "Transportes Ibéricos Unidos",
        "S.A.",
        "logístico",
        ("Transporte por carretera", "Transporte ferroviario", "Almacenaje"),
        "cartera de contratos",
    ),
    CompanySpec(
        "Constructora Atlántica",
        "S.A.",
        "de la construcción",
        ("Edificación", "Obra civil", "Concesiones"),
        "cartera de obra",
    ),
    CompanySpec(
        "Telecomunicaciones Sierra Norte",
        "S.A.",
        "de las telecomunicaciones",
        ("Telefonía móvil", "Fibra óptica", "Soluciones para empresas"),
        "cartera de contratos mayoristas",
    ),
    CompanySpec(
        "Laboratorios Albéniz",
        "S.A.",
        "farmacéutico",
        ("Genéricos", "Especialidades farmacéuticas", "Autocuidado"),
        "cartera de pedidos hospitalarios",
    ),
    CompanySpec(
        "Hoteles Mar de Alborán",
        "S.A.",
        "turístico",
        ("Hoteles urbanos", "Hoteles vacacionales", "Gestión hotelera"),
        "cartera de reservas",
    ),
    CompanySpec(
        "Papelera del Ebro",
        "S.A.",
        "papelero",
        ("Celulosa", "Papel de impresión", "Embalaje"),
        "cartera de pedidos",
    ),
    CompanySpec(
        "Inmobiliaria Castellana",
        "SOCIMI, S.A.",
        "inmobiliario",
        ("Oficinas", "Residencial en alquiler", "Logística urbana"),
        "cartera de rentas contratadas",
    ),
    CompanySpec(
        "Textil Galaica",
        "S.A.",
        "textil",
        ("Moda", "Textil hogar", "Venta en línea"),
        "cartera de pedidos mayoristas",
    ),
    CompanySpec(
        "Aguas y Servicios del Sur",
        "S.A.",
        "de los servicios urbanos",
        ("Ciclo integral del agua", "Gestión de residuos", "Servicios energéticos"),
        "cartera de contratos",
    ),
    CompanySpec(
        "Química del Mediterráneo",
        "S.A.",
        "químico",
        ("Química especializada", "Química básica", "Agroquímica"),
        "cartera de pedidos",
    ),
    CompanySpec(
        "Software del Tajo",
        "S.A.",
        "tecnológico",
        ("Licencias", "Servicios profesionales", "Servicios en la nube"),
        "cartera de contratos recurrentes",
    ),
    CompanySpec(
        "Cementos del Moncayo", "S.A.", "cementero", ("Cemento", "Hormigón", "Áridos"), "cartera de pedidos"
    ),
    CompanySpec(
        "Navieras del Estrecho",
        "S.A.",
        "marítimo",
        ("Pasaje", "Carga rodada", "Servicios portuarios"),
        "cartera de fletes contratados",
    ),
)

REGIONS = ("Resto de Europa", "Latinoamérica", "Norteamérica", "Norte de África", "Asia-Pacífico")
FIRST_NAMES = (
    ("Dña.", "Lucía"),
    ("D.", "Javier"),
    ("Dña.", "Carmen"),
    ("D.", "Andrés"),
    ("Dña.", "Elena"),
    ("D.", "Tomás"),
    ("Dña.", "Marta"),
    ("D.", "Ignacio"),
    ("Dña.", "Beatriz"),
    ("D.", "Ramón"),
    ("Dña.", "Inés"),
    ("D.", "Álvaro"),
)
SURNAMES = (
    "Ferrer",
    "Ortega",
    "Salcedo",
    "Quiroga",
    "Albarracín",
    "Montoya",
    "Iriarte",
    "Villalba",
    "Cuesta",
    "Mendizábal",
    "Roldán",
    "Esteve",
    "Lozano",
    "Arregui",
)
SUBSIDIARY_A = ("Industrias", "Servicios", "Tecnologías", "Distribuciones", "Soluciones", "Ingeniería")
SUBSIDIARY_B = ("Andinas", "Bálticas", "Lusitanas", "Alpinas", "del Adriático", "Atlánticas", "del Bósforo")
ASSETS = (
    "un edificio de oficinas",
    "una participación minoritaria",
    "una planta no estratégica",
    "un negocio de mantenimiento",
    "una cartera de inmuebles",
    "una filial en Portugal",
)
HOUSES = ("Analistas de Bolsa Ibérica", "Mercados y Valores Research", "Bolsa Norte Análisis")
GESTORAS = ("Solana", "Iberfondos", "Atalaya")
INDICES = (
    ("Iberia Dividendo", "las compañías españolas y portuguesas con mayor rentabilidad por dividendo"),
    ("Euro Bonos Verdes", "los bonos verdes denominados en euros con calificación de grado de inversión"),
    ("Global Tecnología", "las mayores compañías tecnológicas cotizadas de los mercados desarrollados"),
    ("Emergentes Sostenible", "las compañías de mercados emergentes con mejor valoración medioambiental"),
    (
        "Euro Corporativo Corto Plazo",
        "los bonos corporativos en euros con vencimiento residual inferior a cinco años",
    ),
    ("Europa Valor", "las compañías europeas con menor valoración relativa"),
    ("Mundo Baja Volatilidad", "las acciones globales de menor volatilidad histórica"),
    ("Eurozona Pequeñas Compañías", "las compañías de pequeña capitalización de la zona euro"),
)
HEDGED = ("USD Cubierta (Acc)", "CHF Cubierta (Acc)", "GBP Cubierta (Dist)", "JPY Cubierta (Acc)")
REPLICATION = (
    "física completa",
    "física optimizada (muestreo)",
    "sintética mediante permutas de rendimiento total",
)

DEFAULT_SEED = 20241231


def slug(text: str) -> str:
    """ASCII upper-case identifier: 'Aceros del Cantábrico' -> 'ACEROS_DEL_CANTABRICO'."""
    ascii_ = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return "_".join("".join(c if c.isalnum() else " " for c in ascii_).upper().split())


def _u(rng: random.Random, lo: float, hi: float, d: int = 1) -> float:
    return float(round(rng.uniform(lo, hi), d))


def _person(rng: random.Random) -> str:
    title, first = rng.choice(FIRST_NAMES)
    a, b = rng.sample(SURNAMES, 2)
    return f"{title} {first} {a} {b}"


def _calc(value: float, raw: str) -> Fig:
    """A computed figure (no passage states it)."""
    return Fig(float(value), raw, None)


def _change(new: float, old: float) -> float:
    return round((new / old - 1.0) * 100.0, 1)


def _verb(change: float, up: str = "aumentaron", down: str = "disminuyeron") -> str:
    return up if change >= 0 else down


def _split(rng: random.Random, total: float) -> list[float]:
    """Three positive parts (1 decimal) summing to ``total`` exactly as displayed."""
    w = [rng.uniform(0.25, 1.0) for _ in range(3)]
    s = sum(w)
    parts = [round(total * w[0] / s, 1), round(total * w[1] / s, 1)]
    parts.append(round(total - parts[0] - parts[1], 1))
    return parts


# --------------------------------------------------------------------------------------------- annual report
def _annual_report(rng: random.Random, spec: CompanySpec, year: int, draft: CorpusDraft) -> DocBuilder:
    co, Y, P = spec.name, year, year - 1
    legal = f"{co}, {spec.suffix}"
    b = DocBuilder(
        f"SYN_{slug(co)}_IA_{Y}", f"Informe anual {Y} de {legal}", co, "INFORME_ANUAL", str(Y), spec.sector
    )
    subsidiary = f"{rng.choice(SUBSIDIARY_A)} {rng.choice(SUBSIDIARY_B)}"

    # 1. summary
    s = b.section("Resumen del ejercicio")
    countries = rng.randint(4, 60)
    backlog = _u(rng, 300, 9000)
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

    # 2. income statement
    s = b.section("Cuenta de resultados consolidada")
    ing = _u(rng, 800, 15000)
    ing_p = round(ing / rng.uniform(0.85, 1.2), 1)
    margin = rng.uniform(0.08, 0.3)
    ebitda = round(ing * margin, 1)
    ebitda_p = round(ing_p * (margin + rng.uniform(-0.02, 0.02)), 1)
    ebit = round(ebitda * rng.uniform(0.5, 0.8), 1)
    ebit_p = round(ebitda_p * rng.uniform(0.5, 0.8), 1)
    neto = round(ebit * rng.uniform(0.55, 0.75), 1)
    neto_p = round(ebit_p * rng.uniform(0.55, 0.75), 1)
    restr = _u(rng, 5, 80)
    gain = _u(rng, 3, 60)
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
    mu = "millones de euros"
    b.ask("tabla", f"¿Cuáles fueron los ingresos de {co} en {Y}?", f"{meur(ing)}.", [f_ing], unit=mu)
    b.ask("tabla", f"¿Cuáles fueron los ingresos de {co} en {P}?", f"{meur(ing_p)}.", [f_ing_p], unit=mu)
    b.ask("tabla", f"¿Cuál fue el EBITDA ajustado de {co} en {Y}?", f"{meur(ebitda)}.", [f_ebitda], unit=mu)
    b.ask(
        "tabla",
        f"¿Cuál fue el resultado de explotación (EBIT) de {co} en {Y}?",
        f"{meur(ebit)}.",
        [f_ebit],
        unit=mu,
    )
    b.ask(
        "tabla", f"¿Cuál fue el resultado neto atribuido de {co} en {Y}?", f"{meur(neto)}.", [f_neto], unit=mu
    )
    b.ask(
        "tabla",
        f"¿Cuál fue el resultado neto atribuido de {co} en {P}?",
        f"{meur(neto_p)}.",
        [f_neto_p],
        unit=mu,
    )
    b.ask(
        "nota_pie",
        f"¿Qué importe de costes de reestructuración excluye el EBITDA ajustado de {co} en {Y}?",
        f"{meur(restr)}.",
        [f_restr],
        unit=mu,
    )
    b.ask(
        "nota_pie",
        f"¿Qué plusvalía incluye el resultado neto atribuido de {co} en {Y}?",
        f"{meur(gain)}.",
        [f_gain],
        unit=mu,
    )
    b.ask(
        "tabla_y_nota",
        f"¿Cuál fue el EBITDA ajustado de {co} en {Y} y qué costes de reestructuración excluye?",
        f"{meur(ebitda)}, que excluye {meur(restr)} de costes de reestructuración.",
        [f_ebitda, f_restr],
        unit=mu,
    )
    b.ask(
        "tabla_y_nota",
        f"¿Cuál fue el resultado neto atribuido de {co} en {Y} y qué plusvalía incluye?",
        f"{meur(neto)}, que incluye una plusvalía de {meur(gain)}.",
        [f_neto, f_gain],
        unit=mu,
    )
    v = _change(ing, ing_p)
    b.ask(
        "calculo",
        f"¿Qué variación porcentual registraron los ingresos de {co} en {Y} respecto a {P}?",
        f"Los ingresos {_verb(v)} un {pct(abs(v))} ({num(ing)} frente a {num(ing_p)} millones de euros).",
        [_calc(v, pct(abs(v)))],
        [f_ing, f_ing_p],
        unit="%",
    )
    v = round(ebitda / ing * 100, 1)
    b.ask(
        "calculo",
        f"¿Cuál fue el margen de EBITDA ajustado sobre ingresos de {co} en {Y}?",
        f"{pct(v)} ({num(ebitda)} / {num(ing)} millones de euros).",
        [_calc(v, pct(v))],
        [f_ebitda, f_ing],
        unit="%",
    )
    v = round(ebitda - restr, 1)
    b.ask(
        "calculo",
        f"¿Cuál habría sido el EBITDA de {co} en {Y} si se restaran los costes de reestructuración "
        "que excluye el EBITDA ajustado?",
        f"{meur(v)} ({num(ebitda)} - {num(restr)}).",
        [_calc(v, num(v))],
        [f_ebitda, f_restr],
        unit=mu,
    )
    v = _change(neto, neto_p)
    b.ask(
        "calculo",
        f"¿Qué variación porcentual registró el resultado neto atribuido de {co} en {Y} respecto a {P}?",
        f"El resultado neto atribuido {_verb(v, 'aumentó', 'disminuyó')} un {pct(abs(v))}.",
        [_calc(v, pct(abs(v)))],
        [f_neto, f_neto_p],
        unit="%",
    )
    draft.metric("ingresos", Entry(co, f_ing, b.doc_id, mu))

    # 3. segments
    s = b.section("EBITDA por segmento")
    seg = _split(rng, ebitda)
    seg_p = _split(rng, ebitda_p)
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
            unit=mu,
        )
    b.ask(
        "nota_pie",
        f"¿Cuánto aportó {subsidiary} al EBITDA del segmento {spec.segments[j]} de {co} en {Y}?",
        f"{meur(contrib)}.",
        [f_contrib],
        unit=mu,
    )
    b.ask(
        "tabla_y_nota",
        f"¿Cuál fue el EBITDA del segmento {spec.segments[j]} de {co} en {Y} y cuánto aportó {subsidiary}?",
        f"{meur(seg[j])}, de los que {meur(contrib)} corresponden a {subsidiary}.",
        [f_seg[j], f_contrib],
        unit=mu,
    )
    k = rng.randrange(3)
    v = round(seg[k] / ebitda * 100, 1)
    b.ask(
        "calculo",
        f"¿Qué peso tuvo el segmento {spec.segments[k]} en el EBITDA ajustado de {co} en {Y}?",
        f"{pct(v)} ({num(seg[k])} de {num(ebitda)} millones de euros).",
        [_calc(v, pct(v))],
        [f_seg[k], f_ebitda],
        unit="%",
    )

    # 4. debt
    s = b.section("Deuda y financiación")
    debt = _u(rng, ebitda * 0.4, ebitda * 3.5)
    leases = round(debt * rng.uniform(0.05, 0.2), 1)
    cost = _u(rng, 2.0, 5.5)
    fixed = rng.randint(55, 90)
    life = _u(rng, 2.5, 7.5)
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
        unit=mu,
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
        unit=mu,
    )
    b.ask(
        "texto_y_nota",
        f"¿Cuál era la deuda financiera neta de {co} al cierre de {Y} y qué importe de pasivos "
        "por arrendamiento incluye?",
        f"{meur(debt)}, que incluye {meur(leases)} de pasivos por arrendamiento.",
        [f_debt, f_leases],
        unit=mu,
    )
    v = round(debt / ebitda, 1)
    b.ask(
        "calculo",
        f"¿Cuántas veces el EBITDA ajustado de {Y} representa la deuda financiera neta de {co}?",
        f"{num(v)} veces ({num(debt)} / {num(ebitda)}).",
        [_calc(v, num(v))],
        [f_debt, f_ebitda],
        unit="veces",
    )
    draft.metric("deuda", Entry(co, f_debt, b.doc_id, mu))

    # 5. shareholder remuneration
    s = b.section("Retribución al accionista")
    dps = _u(rng, 0.15, 1.6, 2)
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
        unit=mu,
    )
    b.ask(
        "texto",
        f"¿Por qué importe máximo es el programa de recompra de acciones de {co}?",
        f"{meur(buyback, 0)}.",
        [f_buy],
        unit=mu,
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
        unit=mu,
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
        unit=mu,
    )
    v = round(div_total / neto * 100, 1)
    b.ask(
        "calculo",
        f"¿Qué porcentaje del resultado neto atribuido de {Y} destina {co} a dividendos (pay-out)?",
        f"{pct(v)} ({num(div_total)} / {num(neto)} millones de euros).",
        [_calc(v, pct(v))],
        [f_div, f_neto],
        unit="%",
    )
    v = round(executed / buyback * 100, 1)
    b.ask(
        "calculo",
        f"¿Qué porcentaje de su programa de recompra de acciones había ejecutado {co} al cierre del "
        "ejercicio?",
        f"{pct(v)} ({num(executed)} de {num(buyback, 0)} millones de euros).",
        [_calc(v, pct(v))],
        [f_buy, f_exec],
        unit="%",
    )
    draft.metric("dpa", Entry(co, f_dps, b.doc_id, "euros por acción"))

    # 6. workforce
    s = b.section("Plantilla")
    regions = ["España", *rng.sample(REGIONS, 2)]
    hc = [rng.randint(800, 15000), rng.randint(150, 6000), rng.randint(150, 6000)]
    hc_p = [round(x * rng.uniform(0.88, 1.08)) for x in hc]
    tot, tot_p = sum(hc), sum(hc_p)
    jr = rng.randrange(3)
    temps = rng.randint(30, max(31, min(900, hc[jr] // 4)))
    women = _u(rng, 22, 58)
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
    v = _change(tot, tot_p)
    b.ask(
        "calculo",
        f"¿Qué variación porcentual tuvo la plantilla total de {co} en {Y} respecto a {P}?",
        f"La plantilla {_verb(v, 'creció', 'se redujo')} un {pct(abs(v))} ({num(tot, 0)} frente a {num(tot_p, 0)}).",
        [_calc(v, pct(abs(v)))],
        [f_tot, f_tot_p],
        unit="%",
    )
    draft.metric("plantilla", Entry(co, f_tot, b.doc_id, "empleados"))

    # 7. environment
    s = b.section("Medio ambiente")
    a1 = rng.randint(2000, 900000)
    a1_p = round(a1 * rng.uniform(0.9, 1.2))
    a2 = rng.randint(1000, 300000)
    a2_p = round(a2 * rng.uniform(0.9, 1.25))
    location = round(a2 * rng.uniform(1.2, 2.5))
    energy = _u(rng, 50, 9000)
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
    v = _change(a1, a1_p)
    b.ask(
        "calculo",
        f"¿Qué variación porcentual tuvieron las emisiones de alcance 1 de {co} en {Y} respecto a {P}?",
        f"Las emisiones de alcance 1 {_verb(v)} un {pct(abs(v))}.",
        [_calc(v, pct(abs(v)))],
        [f_a1, f_a1_p],
        unit="%",
    )
    draft.metric("alcance1", Entry(co, f_a1, b.doc_id, t))

    # 8. board
    s = b.section("Consejo de administración")
    n = rng.randint(9, 15)
    ind = rng.randint(math.ceil(n / 3), n - 2)
    meetings = rng.randint(8, 16)
    w = rng.randint(3, n // 2 + 1)
    w_pct = round(w / n * 100, 1)
    chair = _person(rng)
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
        [_calc(v, pct(v))],
        [f_n, f_ind],
        unit="%",
    )
    draft.metric("consejeros", Entry(co, f_n, b.doc_id, "consejeros"))

    # 9. CEO pay
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
    v = _change(tp, tp_p)
    b.ask(
        "calculo",
        f"¿Qué variación porcentual tuvo la retribución total del consejero delegado de {co} en {Y} "
        f"respecto a {P}?",
        f"La retribución total {_verb(v, 'aumentó', 'disminuyó')} un {pct(abs(v))}.",
        [_calc(v, pct(abs(v)))],
        [f_tp, f_tp_p],
        unit="%",
    )

    draft.companies.append(CompanyInfo(co, [b.doc_id], list(spec.segments), regions))
    return b


# --------------------------------------------------------------------------------------------- ETF prospectus
@dataclass
class _FundFacts:
    name: str
    index: str
    isin_acc: str
    doc_id: str


def _isin(rng: random.Random) -> str:
    chars = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
    return "IE000" + "".join(rng.choice(chars) for _ in range(6)) + str(rng.randrange(10))


def _etf(
    rng: random.Random, gestora: str, index: str, desc: str, year: int, draft: CorpusDraft
) -> _FundFacts:
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
    td = _u(rng, 0.02, 0.40, 2)
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
    ter_acc = _u(rng, 0.05, 0.45, 2)
    ter_dist = round(ter_acc + rng.choice((0.02, 0.03, 0.05)), 2)
    ter_h = round(ter_acc + _u(rng, 0.03, 0.15, 2), 2)
    hcost = _u(rng, 0.02, 0.12, 2)
    classes = ["EUR (Acc)", "EUR (Dist)", hedged]
    isins = [_isin(rng) for _ in classes]
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
        [_calc(v, num(v, 0))],
        [f_ter[2], f_ter[0]],
        unit="puntos básicos",
    )
    v = round(10000 * ter_acc / 100, 2)
    b.ask(
        "calculo",
        f"¿Cuántos euros al año supondrían los gastos corrientes de la clase EUR (Acc) de {name} para "
        "una inversión de 10.000 euros?",
        f"{num(v, 0)} euros al año ({pct(ter_acc, 2)} de 10.000 euros).",
        [_calc(v, num(v, 0))],
        [f_ter[0]],
        unit="euros",
    )
    draft.metric("ter", Entry(name, f_ter[0], b.doc_id, "%"))

    s = b.section("Política de distribución")
    dist_amt = _u(rng, 0.2, 2.5, 2)
    dy = _u(rng, 0.8, 5.5)
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
    aum = _u(rng, 80, 6000)
    mgmt = round(ter_h + _u(rng, 0.05, 0.3, 2), 2)
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
    return _FundFacts(name, index, isins[0], b.doc_id)


# --------------------------------------------------------------------------------------------- KID
def _kid(rng: random.Random, fund: _FundFacts, year: int, draft: CorpusDraft) -> None:
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
        "Tensión": (_u(rng, -45, -20), _u(rng, -18, -6)),
        "Desfavorable": (_u(rng, -15, -3), _u(rng, -4, -0.5)),
        "Moderado": (_u(rng, 1.5, 8), _u(rng, 2, 7)),
        "Favorable": (_u(rng, 12, 35), _u(rng, 7.5, 14)),
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
        [_calc(v, num(v))],
        [f_fav, f_unf],
        unit="puntos porcentuales",
    )

    s = b.section("¿Cuáles son los costes?")
    op = _u(rng, 0.01, 0.12, 2)
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


# --------------------------------------------------------------------------------------------- research note
def _research_note(
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
    px = _u(rng, 3, 60, 2)
    upside = rng.uniform(-0.15, 0.45)
    po = round(px * (1 + upside), 2)
    rec = "COMPRAR" if upside > 0.15 else ("MANTENER" if upside > -0.05 else "VENDER")
    wacc = _u(rng, 6.5, 10.5)
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
    v = _change(po, px)
    b.ask(
        "calculo",
        f"¿Qué potencial de revalorización (o caída) implica el precio objetivo de {house} para {co} "
        "frente a su cotización en la fecha de la nota?",
        f"Un {pct(abs(v))} ({num(po, 2)} frente a {num(px, 2)} euros).",
        [_calc(v, pct(abs(v)))],
        [f_po, f_px],
        unit="%",
    )

    s = b.section("Estimaciones")
    ing24 = next(e.fig for e in draft.metrics["ingresos"] if e.doc_id == report.doc_id)
    ing25 = round(ing24.value * rng.uniform(0.97, 1.12), 1)
    ing26 = round(ing25 * rng.uniform(1.0, 1.1), 1)
    mg = rng.uniform(0.08, 0.3)
    e25, e26 = round(ing25 * mg, 1), round(ing26 * (mg + rng.uniform(0, 0.01)), 1)
    bpa25 = _u(rng, 0.2, 4.5, 2)
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
        _pair_candidate(
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
    per = _u(rng, 6, 28)
    dy = _u(rng, 0.5, 7.5)
    ev = _u(rng, 4, 16)
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
    sens = _u(rng, 0.3, 3.5, 2)
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


def _pair_candidate(
    question: str, answer: str, figs: list[Fig], doc_ids: list[str], company: str, unit: str
) -> Candidate:
    return Candidate("comparacion", question, answer, figs, [], unit, doc_ids, company, "")


# --------------------------------------------------------------------------------------------- corpus
def build_draft(
    seed: int,
    n_companies: int = 12,
    n_etfs: int = 6,
    n_kids: int | None = None,
    n_notes: int | None = None,
    year: int = 2024,
) -> CorpusDraft:
    """All documents as drafts (not yet paginated), with question candidates and comparison entries."""
    if not 2 <= n_companies <= len(COMPANIES):
        raise ValueError(f"n_companies must be between 2 and {len(COMPANIES)}, got {n_companies}")
    if not 2 <= n_etfs <= len(INDICES):
        raise ValueError(f"n_etfs must be between 2 and {len(INDICES)}, got {n_etfs}")
    n_kids = n_etfs - 1 if n_kids is None else n_kids
    n_notes = n_companies // 2 if n_notes is None else n_notes
    if not 0 <= n_kids <= n_etfs or not 0 <= n_notes <= n_companies:
        raise ValueError(
            f"need 0 <= n_kids <= n_etfs and 0 <= n_notes <= n_companies (got {n_kids}, {n_notes})"
        )
    rng = random.Random(seed)
    draft = CorpusDraft(year=year)
    specs = rng.sample(COMPANIES, n_companies)
    reports = []
    for spec in specs:
        b = _annual_report(rng, spec, year, draft)
        draft.builders.append(b)
        reports.append(b)
    for company, report in zip(draft.companies[:n_notes], reports[:n_notes], strict=True):
        _research_note(rng, company, report, year, draft)
    funds = [
        _etf(rng, rng.choice(GESTORAS), idx, desc, year, draft) for idx, desc in rng.sample(INDICES, n_etfs)
    ]
    for fund in funds[:n_kids]:
        _kid(rng, fund, year, draft)
    return draft


def generate_corpus(
    seed: int = DEFAULT_SEED,
    n_companies: int = 12,
    n_etfs: int = 6,
    n_questions: int = 280,
    n_kids: int | None = None,
    n_notes: int | None = None,
    year: int = 2024,
    shares: dict[str, float] | None = None,
) -> tuple[list[Document], list[Page], list[SyntheticQuestion]]:
    """Documents, pages (one per '##' section, 0-based) and questions with gold passages; same seed, same bytes."""
    from finrag.synthetic.questions import build_questions

    draft = build_draft(seed, n_companies, n_etfs, n_kids, n_notes, year)
    documents: list[Document] = []
    pages: list[Page] = []
    passages = {}
    for b in draft.builders:
        doc, doc_pages, doc_passages = b.assemble()
        documents.append(doc)
        pages.extend(doc_pages)
        passages.update(doc_passages)
    # the question sampler gets its own stream, so adding a document template does not reshuffle the questions of
    # the others more than necessary
    qrng = random.Random(f"{seed}:questions")
    questions = build_questions(draft, passages, pages, qrng, n_questions, shares)
    return documents, pages, questions


def corpus_summary(documents: list[Document], pages: list[Page], questions: list[SyntheticQuestion]) -> dict:
    counts = Counter(q.kind for q in questions)
    return {
        "n_documents": len(documents),
        "n_pages": len(pages),
        "n_questions": len(questions),
        "documents_by_form": dict(sorted(Counter(d.form for d in documents).items())),
        "kind_counts": {k: counts.get(k, 0) for k in KINDS},
        "no_respondible_share": counts.get("no_respondible", 0) / len(questions) if questions else 0.0,
    }


def write_corpus(out_dir: str | Path, seed: int = DEFAULT_SEED, **kwargs) -> dict:
    """Write documents.jsonl, pages.jsonl, questions.jsonl and summary.json atomically; return the summary."""
    out = Path(out_dir)
    documents, pages, questions = generate_corpus(seed, **kwargs)
    write_jsonl(out / "documents.jsonl", documents)
    write_jsonl(out / "pages.jsonl", pages)
    write_jsonl(out / "questions.jsonl", questions)
    summary = {
        "seed": seed,
        **{k: v for k, v in kwargs.items()},
        **corpus_summary(documents, pages, questions),
    }
    write_json(out / "summary.json", summary)
    return summary


def read_corpus(out_dir: str | Path) -> tuple[list[Document], list[Page], list[SyntheticQuestion]]:
    """Read back what write_corpus wrote (malformed lines raise ValueError naming file:line)."""
    out = Path(out_dir)
    return (
        read_jsonl(out / "documents.jsonl", Document),
        read_jsonl(out / "pages.jsonl", Page),
        read_jsonl(out / "questions.jsonl", SyntheticQuestion),
    )


def serialize(documents: list[Document], pages: list[Page], questions: list[SyntheticQuestion]) -> bytes:
    """The corpus as one byte string (what determinism tests compare)."""
    lines = [r.model_dump_json() for r in (*documents, *pages, *questions)]
    return ("\n".join(lines) + "\n").encode("utf-8")


__all__ = [
    "DEFAULT_SEED",
    "build_draft",
    "corpus_summary",
    "generate_corpus",
    "read_corpus",
    "serialize",
    "write_corpus",
]
