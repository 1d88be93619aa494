"""The synthetic corpus's vocabulary: invented companies, people, places, indices, share classes, and the
small random helpers every document template uses (one `random.Random` threads through all of them)."""

import random
import unicodedata
from dataclasses import dataclass

from finrag.synthetic.drafts import Fig


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


def uniform(rng: random.Random, lo: float, hi: float, d: int = 1) -> float:
    return float(round(rng.uniform(lo, hi), d))


def person(rng: random.Random) -> str:
    title, first = rng.choice(FIRST_NAMES)
    a, b = rng.sample(SURNAMES, 2)
    return f"{title} {first} {a} {b}"


def calc(value: float, raw: str) -> Fig:
    """A computed figure (no passage states it)."""
    return Fig(float(value), raw, None)


def change_pct(new: float, old: float) -> float:
    return round((new / old - 1.0) * 100.0, 1)


def verb(change: float, up: str = "aumentaron", down: str = "disminuyeron") -> str:
    return up if change >= 0 else down


def split3(rng: random.Random, total: float) -> list[float]:
    """Three positive parts (1 decimal) summing to ``total`` exactly as displayed."""
    w = [rng.uniform(0.25, 1.0) for _ in range(3)]
    s = sum(w)
    parts = [round(total * w[0] / s, 1), round(total * w[1] / s, 1)]
    parts.append(round(total - parts[0] - parts[1], 1))
    return parts
