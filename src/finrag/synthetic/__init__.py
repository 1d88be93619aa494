"""Synthetic Spanish financial corpus with gold passages known to the character (runs anywhere, no mirror).

generator.py builds the documents and pages, questions.py the questions, study.py the measurements.
"""

from finrag.synthetic.generator import DEFAULT_SEED, generate_corpus, read_corpus, write_corpus
from finrag.synthetic.models import KINDS, GoldPassage, SyntheticQuestion

__all__ = [
    "DEFAULT_SEED",
    "KINDS",
    "GoldPassage",
    "SyntheticQuestion",
    "generate_corpus",
    "read_corpus",
    "write_corpus",
]
