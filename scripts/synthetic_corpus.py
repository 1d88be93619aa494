"""Stage synthetic_corpus: generate the deterministic Spanish corpus (documents, pages, questions, gold)."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.params import SyntheticCorpusParams
from finrag.synthetic.generator import write_corpus


def run() -> None:
    p = SyntheticCorpusParams.load()
    write_corpus(Path(p.out_dir), seed=p.seed, **p.generator)


if __name__ == "__main__":
    main(run)
