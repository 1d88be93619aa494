"""`finrag release pack` / `restore` on a throwaway git + DVC repository: a clean clone restored from the archive
has every output in place and a clean `dvc status`; a damaged archive is refused; git-tracked outputs stay in git."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from finrag.release.bundle import ReleaseError, lock_outputs, pack, restore

DVC = Path(sys.executable).with_name("dvc")

pytestmark = pytest.mark.skipif(
    not DVC.exists() or shutil.which("git") is None, reason="needs dvc (in the project's venv) and git"
)

STAGE = """\
import json, os, sys
os.makedirs("data/dir", exist_ok=True)
open("data/model.bin", "wb").write(bytes(range(256)) * 40)
for i in range(3):
    open(f"data/dir/part{i}.txt", "w").write(f"part {i}\\n")
os.makedirs("results", exist_ok=True)
json.dump({"score": 0.5}, open("results/metrics.json", "w"))
"""

DVC_YAML = """\
stages:
  make:
    cmd: python make.py
    deps: [make.py]
    outs: [data/model.bin, data/dir]
    metrics:
      - results/metrics.json:
          cache: false
"""


def _run(cmd: list[str], cwd: Path) -> str:
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    assert res.returncode == 0, f"{cmd}: {res.stderr}"
    return res.stdout


def _git(cwd: Path, *args: str) -> str:
    return _run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd)


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("study")
    _git(root, "init", "-q")
    _run([str(DVC), "init", "-q"], root)
    _run([str(DVC), "config", "core.analytics", "false"], root)
    (root / "make.py").write_text(STAGE)
    (root / "dvc.yaml").write_text(DVC_YAML)
    (root / ".gitignore").write_text("/data/\n")
    _run([str(DVC), "repro", "-q"], root)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "study")
    return root


def test_pack_then_restore_into_a_clean_clone(study, tmp_path):
    archive = tmp_path / "release.tar"
    m = pack(study, archive)
    assert {o["path"] for o in m["outputs"]} == {"data/model.bin", "data/dir"}  # metrics stay in git
    assert all(o["in_release"] for o in m["outputs"]) and not m["missing"]
    assert len(m["objects"]) == 1 + 1 + 3  # the file, the folder listing and its three files
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(study), str(clone))
    assert not (clone / "data/model.bin").exists()
    r = restore(clone, archive)
    assert r["objects_restored"] == 5 and r["outputs"] == 2
    assert (clone / "data/model.bin").read_bytes() == (study / "data/model.bin").read_bytes()
    assert (clone / "data/dir/part2.txt").read_text() == "part 2\n"
    status = _run([str(DVC), "status", "--json"], clone)
    assert json.loads(status) == {}  # clean: `dvc repro` has nothing to run
    assert restore(clone, archive)["objects_restored"] == 0  # a second restore adds nothing


def test_a_damaged_archive_is_refused(study, tmp_path):
    archive = tmp_path / "release.tar"
    m = pack(study, archive)
    victim = next(i for i in m["objects"] if not i.endswith(".dir"))
    bad = tmp_path / "bad.tar"
    with tarfile.open(archive) as src, tarfile.open(bad, "w") as dst:
        for member in src.getmembers():
            data = src.extractfile(member).read()
            if member.name == f"objects/{victim[:2]}/{victim[2:]}":
                data = b"X" + data[1:]
            member.size = len(data)
            import io

            dst.addfile(member, io.BytesIO(data))
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(study), str(clone))
    with pytest.raises(ReleaseError, match="does not match its md5"):
        restore(clone, bad)
    with pytest.raises(ReleaseError, match="no release archive"):
        restore(clone, tmp_path / "absent.tar")


def test_outputs_missing_from_the_cache_are_listed(study, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(study, work)
    shutil.rmtree(work / ".dvc" / "cache")
    m = pack(work, tmp_path / "r.tar")
    assert sorted(m["missing"]) == ["data/dir", "data/model.bin"] and not m["objects"]
    with pytest.raises(ReleaseError, match="not in this machine's DVC cache"):
        pack(work, tmp_path / "r2.tar", require_all=True)


def test_the_study_lock_lists_its_expensive_outputs():
    from finrag.core.config import repo_root

    paths = {o.path for o in lock_outputs(repo_root())}
    assert {"data/chunks/page.jsonl", "data/models/verifier", "data/embeddings/page/mpnet.npy"} <= paths


def test_push_and_pull_through_a_local_folder_remote(study, tmp_path):
    """The project's default remote is a local folder (.dvc/config: `local`, ../.dvc-remote from .dvc/): the
    same `dvc push` / `dvc pull` a reviewer runs against S3 or HTTP."""
    from finrag.core.config import repo_root

    cfg = (repo_root() / ".dvc" / "config").read_text(encoding="utf-8")
    assert "remote = local" in cfg and "../.dvc-remote" in cfg
    work = tmp_path / "work"
    _git(tmp_path, "clone", "-q", str(study), str(work))
    shutil.copytree(study / ".dvc" / "cache", work / ".dvc" / "cache")
    _run([str(DVC), "remote", "add", "-d", "local", str(tmp_path / "remote")], work)
    _run([str(DVC), "checkout", "-q"], work)
    _run([str(DVC), "push", "-q"], work)
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(study), str(clone))
    _run([str(DVC), "remote", "add", "-d", "local", str(tmp_path / "remote")], clone)
    _run([str(DVC), "pull", "-q"], clone)
    assert (clone / "data/dir/part0.txt").read_text() == "part 0\n"
    assert json.loads(_run([str(DVC), "status", "--json"], clone)) == {}
