"""The state of the study as one file: `finrag release pack OUT.tar` / `finrag release restore FILE`.

The archive holds the DVC cache objects of every output `dvc.lock` records that git does not track (embeddings,
chunks, trained models, runs, ...) plus `release.json`: for each output its stage, path, DVC hash, size and
whether the archive holds it, and for each object its md5 (DVC's content address) and size. `restore` checks
every object against its md5 before it enters `.dvc/cache`, then `dvc checkout` puts the outputs in place, so
`dvc status` is clean and `dvc repro` replays. Outputs whose objects this machine's cache lacks are listed as
missing (a release made here says so; `--require-all` refuses to write one).

Why a tar of cache objects rather than `dvc push` alone: a reviewer without the remote's credentials can move
the study as one file; `dvc push` / `dvc pull` to the configured remote (docs/data.md, "Data release") do the same
object by object.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

RELEASE_MANIFEST = "release.json"
FORMAT = 1


class ReleaseError(ValueError):
    """A release could not be packed or restored. One line that says what to do."""


@dataclass(frozen=True)
class Output:
    stage: str
    path: str
    md5: str  # "<hex>" for a file, "<hex>.dir" for a folder
    size: int | None
    nfiles: int | None


def lock_outputs(root: Path) -> list[Output]:
    """Every output dvc.lock records (stages with foreach items included), in the lock's order."""
    lock_file = root / "dvc.lock"
    if not lock_file.exists():
        raise ReleaseError(f"no dvc.lock in {root}: run `dvc repro` first")
    lock = yaml.safe_load(lock_file.read_text(encoding="utf-8")) or {}
    out = []
    for stage, body in (lock.get("stages") or {}).items():
        for o in body.get("outs") or []:
            if o.get("md5"):
                out.append(Output(stage, o["path"], o["md5"], o.get("size"), o.get("nfiles")))
    return out


def git_tracked(root: Path, paths: list[str]) -> set[str]:
    """The paths git tracks (outputs with `cache: false`, kept in git: the release leaves them to git)."""
    if not paths:
        return set()
    res = subprocess.run(
        ["git", "ls-files", "--", *paths], cwd=root, capture_output=True, text=True, check=False
    )
    if res.returncode != 0:
        return set()
    tracked = set(res.stdout.split())
    return {p for p in paths if p in tracked}


def _dvc() -> str:
    """The venv's dvc (beside this Python: it works when the venv is not on PATH), else the one on PATH."""
    import sys

    beside = Path(sys.executable).with_name("dvc")
    return str(beside) if beside.exists() else (shutil.which("dvc") or "dvc")


def cache_dir(root: Path) -> Path:
    """The DVC cache's md5 object folder (`dvc cache dir` + files/md5)."""
    try:
        res = subprocess.run([_dvc(), "cache", "dir"], cwd=root, capture_output=True, text=True, check=False)
        found = res.stdout.strip() if res.returncode == 0 else ""
    except OSError:  # no dvc at all: the default location
        found = ""
    return (Path(found) if found else root / ".dvc" / "cache") / "files" / "md5"


def object_path(cache: Path, md5: str) -> Path:
    return cache / md5[:2] / md5[2:]


def md5_file(path: Path) -> str:
    h = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _objects_of(cache: Path, out: Output) -> tuple[list[str], bool]:
    """The object ids an output needs (a folder: its .dir listing and every file in it), and whether all exist."""
    ids = [out.md5]
    top = object_path(cache, out.md5)
    if not top.exists():
        return ids, False
    if out.md5.endswith(".dir"):
        entries = json.loads(top.read_text(encoding="utf-8"))
        ids += [e["md5"] for e in entries]
    return ids, all(object_path(cache, i).exists() for i in ids)


def pack(root: Path, out_file: Path, *, require_all: bool = False, include_tracked: bool = False) -> dict:
    """Write the release archive; return its manifest."""
    root = Path(root)
    cache = cache_dir(root)
    outs = lock_outputs(root)
    tracked = set() if include_tracked else git_tracked(root, [o.path for o in outs])
    entries, objects = [], {}
    for o in outs:
        if o.path in tracked:
            continue
        ids, complete = _objects_of(cache, o)
        entries.append({"stage": o.stage, "path": o.path, "md5": o.md5, "size": o.size, "nfiles": o.nfiles,
                        "in_release": complete})  # fmt: skip
        if complete:
            for i in ids:
                objects[i] = object_path(cache, i).stat().st_size
    missing = [e["path"] for e in entries if not e["in_release"]]
    if require_all and missing:
        raise ReleaseError(f"{len(missing)} output(s) not in this machine's DVC cache (first: {missing[0]}): "
                           "run their stages (or `dvc pull`) first, or pack without --require-all")  # fmt: skip
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=False
    )
    manifest: dict[str, Any] = {
        "format": FORMAT, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "git_commit": commit.stdout.strip() or None, "outputs": entries, "missing": missing,
        "objects": dict(sorted(objects.items())), "bytes": sum(objects.values()),
    }  # fmt: skip
    out_file = Path(out_file)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_file.with_name(out_file.name + ".tmp")
    with tarfile.open(tmp, "w") as tar:
        data = json.dumps(manifest, indent=2).encode("utf-8")
        info = tarfile.TarInfo(RELEASE_MANIFEST)
        info.size, info.mtime = len(data), int(time.time())
        tar.addfile(info, io.BytesIO(data))
        for i in manifest["objects"]:
            tar.add(object_path(cache, i), arcname=f"objects/{i[:2]}/{i[2:]}")
    tmp.replace(out_file)
    return manifest


def _members(tar: tarfile.TarFile) -> Iterator[tuple[str, tarfile.TarInfo]]:
    for m in tar.getmembers():
        if m.name.startswith("objects/") and m.isfile():
            parts = m.name.split("/")
            if len(parts) != 3 or ".." in parts:
                raise ReleaseError(f"not a release archive: unexpected member {m.name}")
            yield parts[1] + parts[2], m


def restore(root: Path, archive: Path, *, checkout: bool = True) -> dict:
    """Verify every object of `archive` against its md5, add it to the DVC cache, then `dvc checkout`."""
    root, archive = Path(root), Path(archive)
    if not archive.exists():
        raise ReleaseError(f"no release archive at {archive}")
    cache = cache_dir(root)
    with tarfile.open(archive, "r") as tar:
        try:
            manifest = json.load(tar.extractfile(RELEASE_MANIFEST))  # type: ignore[arg-type]
        except KeyError as exc:
            raise ReleaseError(f"{archive}: no {RELEASE_MANIFEST}: not a finrag release") from exc
        if manifest.get("format") != FORMAT:
            raise ReleaseError(
                f"{archive}: release format {manifest.get('format')}, this finrag reads {FORMAT}"
            )
        restored = 0
        for oid, member in _members(tar):
            if oid not in manifest["objects"]:
                raise ReleaseError(f"{archive}: object {oid} is not in its manifest")
            target = object_path(cache, oid)
            if target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(target.name + ".restore-tmp")
            with tar.extractfile(member) as src, open(tmp, "wb") as dst:  # type: ignore[union-attr]
                shutil.copyfileobj(src, dst)
            if md5_file(tmp) != oid.removesuffix(".dir"):
                tmp.unlink()
                raise ReleaseError(f"{archive}: object {oid} does not match its md5: the archive is damaged")
            tmp.replace(target)
            restored += 1
    paths = [e["path"] for e in manifest["outputs"] if e["in_release"]]
    if checkout and paths:
        res = subprocess.run([_dvc(), "checkout", "--relink", *paths], cwd=root, capture_output=True, text=True,
                             check=False)  # fmt: skip
        if res.returncode != 0:
            raise ReleaseError(f"dvc checkout failed: {(res.stderr or res.stdout).strip().splitlines()[-1:]}")
    return {"objects_restored": restored, "objects": len(manifest["objects"]), "outputs": len(paths),
            "missing": manifest["missing"], "git_commit": manifest.get("git_commit")}  # fmt: skip
