"""Stage synthetic_corpus: generate the deterministic Spanish corpus (documents, pages, questions, gold)."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.config import params
from finrag.synthetic.generator import write_corpus


def run() -> None:
    p = params("synthetic_corpus")
    write_corpus(Path(p["out_dir"]), seed=p["seed"], **p.get("generator", {}))


if __name__ == "__main__":
    main(run)
