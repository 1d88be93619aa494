"""Typed params: every params.yaml section has a model and validates; a bad section fails in one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from finrag.core.params import ParamsError
from finrag.core.provenance import params_hash
from finrag.score.params import ScoreParams
from finrag.sections import SECTIONS, check_all
from finrag.serve.params import ServeLoadParams

REPO = Path(__file__).resolve().parents[1]


def test_every_section_of_params_yaml_has_a_model_and_validates():
    checked = check_all(REPO / "params.yaml")
    assert set(checked) == set(yaml.safe_load((REPO / "params.yaml").read_text()))
    assert all(type(m) is SECTIONS[name] for name, m in checked.items())


def _write(tmp_path: Path, data: dict) -> Path:
    path = (
        tmp_path / f"params{len(list(tmp_path.iterdir()))}.yaml"
    )  # a new name each time: params files are cached
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_a_typo_a_wrong_type_and_a_missing_key_are_named(tmp_path):
    section = yaml.safe_load((REPO / "params.yaml").read_text())["serve_load"]
    bad = {**section, "user": [1]}  # a typo of `users`
    with pytest.raises(ParamsError, match=r"section 'serve_load': user: Extra inputs are not permitted"):
        ServeLoadParams.load(_write(tmp_path, {"serve_load": bad}))
    with pytest.raises(ParamsError, match=r"duration_s: Input should be a valid integer"):
        ServeLoadParams.load(_write(tmp_path, {"serve_load": {**section, "duration_s": "long"}}))
    missing = {k: v for k, v in section.items() if k != "out"}
    with pytest.raises(ParamsError, match=r"out: Field required"):
        ServeLoadParams.load(_write(tmp_path, {"serve_load": missing}))
    with pytest.raises(ParamsError, match=r"goal.p99_ms: Field required"):
        ServeLoadParams.load(_write(tmp_path, {"serve_load": {**section, "goal": {"requests_per_s": 1}}}))


def test_a_section_no_model_describes_is_an_error(tmp_path):
    with pytest.raises(ParamsError, match="no model describes: \\['scoring'\\]"):
        check_all(_write(tmp_path, {"scoring": {}}))


def test_provenance_hashes_the_section_as_written_not_the_defaults():
    """A default filled in by the model (score.progress, say) must not change the hash of results computed
    before the field existed."""
    raw = yaml.safe_load((REPO / "params.yaml").read_text())["score"]
    typed = ScoreParams.from_dict(raw)
    assert typed.as_dict() == raw and params_hash(typed) == params_hash(raw)
    trimmed = {k: v for k, v in raw.items() if k != "progress"}
    assert ScoreParams.from_dict(trimmed).progress is True  # the default is used ...
    assert params_hash(ScoreParams.from_dict(trimmed)) == params_hash(trimmed)  # ... and not hashed
