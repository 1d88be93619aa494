"""Stage rebuild_cost: what rebuilding the nine embedding matrices would cost on this machine, extrapolated
from a timed random sample of each (chunker, encoder) pair (a timing stage: it measures, it computes nothing
the study uses)."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.io import write_json
from finrag.retrieve.evaluation_params import GridParams
from finrag.retrieve.params import EmbedParams
from finrag.retrieve.rebuild_cost import RebuildCostParams, rebuild_cost


def run() -> None:
    p, grid, embed = RebuildCostParams.load(), GridParams.load(), EmbedParams.load()
    settings = {name: dict(embed.embedders.get(name, {})) for name in grid.embedders}
    write_json(Path(p.out), rebuild_cost(p, grid.chunkers, settings))


if __name__ == "__main__":
    main(run)
