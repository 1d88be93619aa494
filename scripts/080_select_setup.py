"""Stage select_setup: apply the selection rule fixed in params.yaml (before any answer is generated)."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.io import read_json, write_json
from finrag.core.provenance import provenance
from finrag.retrieve.evaluation_params import SelectParams
from finrag.retrieve.grid import select_setup


def run() -> None:
    p = SelectParams.load()
    grid = read_json(Path(p.grid))
    chosen = select_setup(grid["setups"], p.rule.model_dump())
    chosen["_provenance"] = provenance("08_select", p, inputs=[p.grid])
    write_json(Path(p.out), chosen)


if __name__ == "__main__":
    main(run)
