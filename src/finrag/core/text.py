"""Shared text pieces: accent folding and every stop-word list, in one place.

The lists differ on purpose, each tuned for the measure it drives, and each has produced results the study reports;
merging them would change those results (retrieval runs that need hours of embeddings to redo, grades, judge
verdicts, the verifier's features, the synthetic baselines), so they live side by side here, each named after its
user and saying what it is for. A new list belongs here too.
"""

from __future__ import annotations

import unicodedata


def fold_accents(s: str) -> str:
    """NFKD, then drop combining marks: inversión -> inversion, año -> ano."""
    return "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))


# ---------------------------------------------------------------- search (BM25)


def _words(s: str) -> frozenset[str]:
    return frozenset(s.split())


# Function words only (articles, pronouns, auxiliaries, conjunctions, common prepositions), as NLTK's English
# list. Not scikit-learn's ENGLISH_STOP_WORDS: it also drops content words that matter in filings ("interest",
# "amount", "bill", "system", "part", "first", "top"), and importing scikit-learn here cost seconds per process.
SEARCH_STOP_EN = _words(
    """
    a an the and or but if then else so than too very s t can will just don should now i me my myself we
    our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its
    itself they them their theirs themselves what which who whom whose this that these those am is are
    was were be been being have has had having do does did doing would could might must shall may of at
    by for with about into through during to from in on off out as until while such only own same both
    each other any some all here there when where why how also
    """
)

# Spanish function words (articles, prepositions, pronouns, conjunctions, auxiliaries; after accent folding),
# after the Snowball Spanish stop list; no installed package ships one.
SEARCH_STOP_ES = _words(
    """
    a al algo algunas algunos ante antes como con contra cual cuales cuando de del desde donde durante e
    el ella ellas ellos en entre era erais eran eras eres es esa esas ese eso esos esta estaba estaban
    estado estamos estan estar estas este esto estos estoy fue fueron fui ha habia habian han has hasta
    hay la las le les lo los me mi mis mucho muchos muy nada ni nos nosotros o os otra otras otro otros
    para pero poco por porque que quien quienes se sea sean ser si sido sin sobre son su sus tambien te
    tenemos tener tiene tienen todo todos tu tus un una uno unos usted ustedes y ya yo
    """
)


# ---------------------------------------------------------------- claims and the numeric judge (content words, names)

# English function words plus filing filler ("company", "approximately"): what is left of a claim are the content
# words the numeric judge and the overlap judge look for in the passages.
_CLAIM_STOP_TEXT = """
    a about above after again against all almost along already also although always am among an and
    another any are around as at be became because been before being below between both but by can cannot
    could did do does doing done down during each either else enough etc even ever every few for from
    further had has have having he her here hers herself him himself his how however i if in into is it
    its itself just least less many may me might more most much must my myself neither no nor not now of
    off often on once only onto or other others otherwise our ours ourselves out over own per perhaps
    quite rather same several she should since so some such than that the their theirs them themselves
    then there thereby therefore these they this those though through throughout thus to together too
    toward towards under until up upon us very via was we well were what whatever when whenever where
    whereas whether which while who whoever whole whom whose why will with within without would yet you
    your yours yourself yourselves company companys approximately respectively
"""
CLAIM_STOP_EN = frozenset(_CLAIM_STOP_TEXT.split())


# ---------------------------------------------------------------- the correctness grader (token overlap with gold)

# added to scikit-learn's ENGLISH_STOP_WORDS (or to GRADER_STOP_ES): units, hedges and filler that an answer and
# its gold answer may word differently without disagreeing
GRADER_STOP_EXTRA = frozenset({
    "fy", "fiscal", "year", "years", "company", "companies", "approximately", "roughly", "around", "about",
    "million", "millions", "billion", "billions", "mn", "bn", "usd", "total", "answer", "based", "primarily",
    "mainly", "significant", "key", "main", "major", "ratio", "q1", "q2", "q3", "q4", "inc", "corporation", "corp",
    "vs", "versus", "compared",
})  # fmt: skip
GRADER_STOP_ES = frozenset({
    "el", "la", "los", "las", "de", "del", "en", "y", "que", "por", "con", "un", "una", "es", "se", "al", "lo", "su",
    "sus", "para", "como", "más", "mas", "ha", "han", "fue", "son", "millones", "miles", "euros", "ejercicio", "año",
})  # fmt: skip


# ---------------------------------------------------------------- the extractive backend (best line for a question)

# a short list: question words and filing filler, so that a line is picked by the words it shares with the question
# fmt: off
EXTRACTIVE_STOP = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "company", "did", "do", "does", "fiscal", "for",
    "from", "has", "have", "how", "in", "is", "it", "its", "of", "on", "or", "per", "that", "the",
    "their", "this", "to", "was", "were", "what", "when", "which", "who", "will", "with", "year",
})
# fmt: on


# ---------------------------------------------------------------- the synthetic study's lexical baselines (Spanish)

# Spanish function and question words, matched after lower-casing and accent folding (the accented forms are
# kept as first written: they never match folded text, and removing them changes nothing)
SYNTHETIC_BASELINE_STOP = frozenset(
    [
        "a",
        "al",
        "ante",
        "con",
        "de",
        "del",
        "el",
        "en",
        "entre",
        "es",
        "esta",
        "este",
        "fue",
        "la",
        "las",
        "lo",
        "los",
        "para",
        "por",
        "que",
        "qué",
        "se",
        "sin",
        "su",
        "sus",
        "un",
        "una",
        "uno",
        "unos",
        "y",
        "o",
        "u",
        "cual",
        "cuál",
        "cuales",
        "cuáles",
        "cuanto",
        "cuánto",
        "cuanta",
        "cuánta",
        "cuantos",
        "cuántos",
        "cuantas",
        "cuántas",
        "como",
        "cómo",
        "ha",
        "han",
        "the",
        "of",
        "in",
        "and",
        "to",
        "is",
        "what",
        "which",
        "how",
    ]
)
