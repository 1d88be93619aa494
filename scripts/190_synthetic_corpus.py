"""Stage synthetic_corpus: generate the deterministic Spanish corpus (documents, pages, questions, gold)."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.synthetic.generator import write_corpus
from finrag.synthetic.params import SyntheticCorpusParams


def run() -> None:
    p = SyntheticCorpusParams.load()
    write_corpus(Path(p.out_dir), seed=p.seed, **p.generator)


if __name__ == "__main__":
    main(run)
