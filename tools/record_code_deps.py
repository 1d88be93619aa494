"""Record new code hashes in dvc.lock for stages that cannot run on this machine, keeping their data deps and outputs.

Why: the stages that read the embedding matrices (embed, reranker, retrieve, grid, retrieve_filtered, contexts)
need hours of CPU and their outputs are not on every machine. When a change only moves or renames code they
import, and `tools/code_equivalence.py` (or a replay of every stage that can run) proves the behaviour unchanged,
their lock entries should name the new code rather than stay stale. This hashes each stage's `scripts/` and
`src/` deps afresh and leaves every other dep and every output exactly as locked. Say in the commit which proof
it rests on.

    python tools/record_code_deps.py embed@fixed-minilm retrieve@page-mpnet ...   # or --all-absent
"""

from __future__ import annotations

import argparse
from pathlib import Path

CODE_PREFIXES = ("scripts/", "src/")


def _code_dep(dep, root: Path) -> bool:
    rel = Path(dep.fs_path).resolve().relative_to(root).as_posix()
    return rel.startswith(CODE_PREFIXES)


def main() -> None:
    from dvc.repo import Repo

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stages", nargs="*", help="stage names (foreach items as name@item)")
    ap.add_argument(
        "--all-absent", action="store_true", help="every stage with an output missing from this machine"
    )
    args = ap.parse_args()
    repo = Repo(".")
    root = Path(repo.root_dir).resolve()
    with repo.lock:
        stages = [s for s in repo.index.stages if s.cmd]
        if args.all_absent:
            chosen = [s for s in stages if any(not Path(o.fs_path).exists() for o in s.outs)]
        else:
            by_name = {s.addressing.split(":")[-1]: s for s in stages}
            unknown = [n for n in args.stages if n not in by_name]
            if unknown:
                raise SystemExit(f"unknown stage(s): {unknown}")
            chosen = [by_name[n] for n in args.stages]
        for stage in chosen:
            changed = []
            for dep in stage.deps:
                if _code_dep(dep, root):
                    old = dep.hash_info
                    dep.save()
                    if dep.hash_info != old:
                        changed.append(dep.def_path)
            stage.dump(update_lock=True, update_pipeline=False)
            print(f"{stage.addressing}: {', '.join(changed) if changed else 'code deps unchanged'}")


if __name__ == "__main__":
    main()
