"""Every benchmark script imports, and each runs once on tiny inputs where its inputs are here (benchmarks
print figures; they are not timed tests). A benchmark broken by a moved import (bench_llm once was) fails here."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from finrag.core.config import repo_root

BENCH = repo_root() / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py"))

# script -> (tiny arguments, what it needs: paths under the repository or the mirror, modules)
TINY: dict[str, tuple[list[str], list[str]]] = {
    "bench_embed.py": (["--n", "2", "--models", "minilm", "--threads", "1", "--no-onnx"], ["mirror:tatqa"]),
    "bench_e5_torch.py": (
        ["--n", "4", "--queries", "2", "--n-speed", "4", "--speed-only"],
        ["data/questions/all.jsonl", "data/chunks/structure.jsonl"],
    ),
    "bench_llm.py": (
        ["--questions", "1", "--max-tokens", "4"],
        ["module:llama_cpp", "data/questions/all.jsonl"],
    ),
    "bench_parse.py": (["--limit", "1"], ["mirror:financebench"]),
    "bench_search.py": (["--n", "1"], ["data/embeddings/structure/minilm.npy"]),
    "bench_verifier.py": (["--n", "3"], ["mirror:humanlabels", "data/models/verifier"]),
    "gpu_check.py": (["--n", "8", "--batch-size", "4"], []),
    "compare_pdf_libraries.py": (["--repeat", "1", "--libs", "pypdfium2"], ["mirror:financebench"]),
    "probe_verifier_reproducibility.py": ([], ["mirror:humanlabels", "data/models/verifier"]),
}


def test_every_benchmark_has_a_tiny_run():
    assert set(SCRIPTS) == set(TINY)


@pytest.mark.parametrize("script", SCRIPTS)
def test_benchmark_imports(script):
    spec = importlib.util.spec_from_file_location(f"bench_{script[:-3]}", BENCH / script)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # top-level imports only; main() runs under __main__
    assert callable(getattr(module, "main", None)), f"{script} has no main()"


def _missing(needs: list[str]) -> str | None:
    mirror = os.environ.get("FINRAG_MIRROR")
    for need in needs:
        kind, _, what = need.partition(":")
        if kind == "mirror":
            if not mirror or not (Path(mirror) / what).exists():
                return f"needs {what}/ in the data mirror (FINRAG_MIRROR)"
        elif kind == "module":
            if importlib.util.find_spec(what) is None:
                return f"needs the {what} module (uv sync --extra llm)"
        elif not (repo_root() / need).exists():
            return f"needs {need} (a pipeline output not on this machine)"
    return None


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_benchmark_runs_once_on_tiny_inputs(script):
    args, needs = TINY[script]
    why = _missing(needs)
    if why:
        pytest.skip(f"{script}: {why}")
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        cwd=repo_root(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip(), f"{script} printed no figure"
