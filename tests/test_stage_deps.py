"""Each DVC stage depends on exactly the modules its script reaches (tools/stage_deps.py walks the imports:
function-level ones, relative ones, lazy "module:Class" registry strings, f-strings among them, and the data files
of packages that read files beside themselves), and dvc.yaml holds that list: an edit re-runs only what it touches.
"""

from __future__ import annotations

import importlib.util

import pytest
import yaml

from finrag.core.config import repo_root

ROOT = repo_root()
RETRIEVAL_AND_GENERATION = {
    "embed", "reranker", "retrieve", "grid", "select_setup", "retrieve_filtered", "contexts", "generate",
}  # fmt: skip


def _tool():
    spec = importlib.util.spec_from_file_location("stage_deps", ROOT / "tools" / "stage_deps.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def reach() -> dict[str, set[str]]:
    """stage -> the code files dvc.yaml says it depends on."""
    doc = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))
    out = {}
    for name, body in doc["stages"].items():
        st = body.get("do", body)
        out[name] = {d for d in st.get("deps", []) if d.startswith(("scripts/", "src/"))}
    return out


def _stale(reach: dict[str, set[str]], path: str) -> set[str]:
    return {name for name, files in reach.items() if path in files}


def test_dvc_yaml_code_deps_are_the_generated_ones():
    diff = _tool().differences(yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8")))
    assert not diff, f"run `uv run python tools/stage_deps.py --write`: {sorted(diff)} differ"


def test_no_stage_depends_on_a_whole_folder(reach):
    folders = {d for files in reach.values() for d in files if (ROOT / d).is_dir() and "templates" not in d}
    assert folders <= {"src/finrag/serve/static", "src/finrag/trust/labelling_static"}, folders


def test_an_edit_to_the_finance_rules_touches_only_the_finance_stages(reach):
    stale = _stale(reach, "src/finrag/retrieve/finance.py")
    assert 1 <= len(stale) <= 3 and not stale & RETRIEVAL_AND_GENERATION, stale


def test_an_edit_to_the_grader_touches_no_retrieval_or_generation_stage(reach):
    stale = _stale(reach, "src/finrag/score/grader.py")
    assert "grader_validation" in stale and not stale & (RETRIEVAL_AND_GENERATION | {"ingest", "chunk"}), (
        stale
    )


def test_an_edit_to_the_service_touches_only_the_services_stages(reach):
    assert _stale(reach, "src/finrag/serve/app.py") == {"serve_load", "setup_time"}
    assert _stale(reach, "src/finrag/serve/params.py") == {"serve_load", "setup_time"}  # a new serve key


def test_the_walker_sees_function_level_lazy_and_f_string_imports():
    tool = _tool()
    files = set(tool.code_deps("scripts/170_agreement.py"))
    # finrag.score.verifier.judges is reached only through the judge registry's lazy "module:Class" string
    assert "src/finrag/score/verifier/judges.py" in files
    assert "scripts/_stage.py" in files and "src/finrag/__init__.py" in files
    assert (
        "src/finrag/llm/prompts/templates" in files
    )  # read with importlib.resources.files("finrag.llm.prompts")


def test_an_f_string_registry_target_counts(tmp_path):
    tool = _tool()
    script = tmp_path / "s.py"
    script.write_text('X = {b: f"finrag.retrieve.finance:{b}_route" for b in ("bm25",)}\n')
    assert "finrag.retrieve.finance" in tool.imports_of(script, "scripts")


def test_a_timing_stage_depends_on_the_code_it_times(reach):
    """replay_time re-measures when the code of any stage it replays changes (meta.times in dvc.yaml, the same
    stages as params.yaml's replay_time.stages); setup_time likewise for the stages before the first answer."""
    from finrag.core.config import params

    doc = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))
    timed = list(dict.fromkeys(s.split("@", 1)[0] for s in params("replay_time")["stages"]))
    assert doc["stages"]["replay_time"]["meta"]["times"] == timed
    assert "src/finrag/score/grader.py" in reach["replay_time"]
    assert "src/finrag/score/verifier/train.py" in reach["replay_time"] & reach["setup_time"]
    assert "src/finrag/retrieve/finance.py" in reach["replay_time"]  # retrieve_finance is replayed


# Stages that build the matrices and trained retrieval weights, and stages that measure rather than compute.
BUILDS_MATRICES_OR_WEIGHTS = {"embed", "reranker"}
MEASURES = {"replay_time", "setup_time", "serve_load", "rebuild_cost", "judge_cost"}


def test_verify_re_executes_every_stage_that_needs_no_matrix():
    """`finrag verify` (and CI) re-executes every stage after the matrices whose inputs are in git: a stage left out
    of replay_time.stages must read a matrix or the re-ranker's weights, be frozen, or measure."""
    from finrag.core.config import params

    doc = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))
    verified = {s.split("@", 1)[0] for s in params("replay_time")["stages"]}
    needs_matrix = {
        name
        for name, body in doc["stages"].items()
        if any(
            d.startswith(("data/embeddings/", "data/models/reranker"))
            for d in body.get("do", body).get("deps", [])
        )
    }
    frozen = {name for name, body in doc["stages"].items() if body.get("frozen")}
    left_out = set(doc["stages"]) - verified - needs_matrix - frozen - BUILDS_MATRICES_OR_WEIGHTS - MEASURES
    assert not left_out, (
        f"add to params.yaml replay_time.stages (or say why it cannot replay): {sorted(left_out)}"
    )
    assert {"evaluate_filtered", "evaluate_finance_dense", "contexts_summary"} <= verified
