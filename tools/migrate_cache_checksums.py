"""One-off migration of the LLM response cache to format v2: give every entry its `response_sha256`.

    python tools/migrate_cache_checksums.py [CACHE_DIR] [--dry-run]      (CACHE_DIR: llm_cache)

Idempotent: an entry that already carries a checksum is left byte for byte as it is (its checksum is checked,
never recomputed), and a shard with nothing to add is not rewritten. A v1 entry gets `response_sha256` =
sha256(canonical_json(response)) and "v": 2, and is re-serialised exactly as `ResponseCache.append` writes a line
(json.dumps(entry, ensure_ascii=False, sort_keys=True, separators=(",", ":"))). Line order, blank lines and a torn
last line (an interrupted write, which the next append cuts off) are kept as they are. Each changed shard is
rewritten atomically: a temporary file in the same folder, fsync, os.replace, fsync of the folder.

Nothing is written unless the WHOLE cache checks first: a malformed line, a key that does not match its request,
a checksum that does not match its response, or a key stored twice with different responses (it would have to
choose one, silently) stops it with exit code 1 and every problem as `file:line: reason`, no file touched.
Identical duplicates are kept (the loader keeps the first). Run it with no recording in progress.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from contextlib import suppress
from pathlib import Path

from finrag.llm.cache import (
    FORMAT_VERSION,
    duplicate_problem,
    entry_line,
    response_checksum,
    scan_shard,
)


def plan(cache_dir: Path) -> tuple[dict[Path, dict[int, bytes]], dict]:
    """({shard: {lineno: new line}}, counts); counts["problems"] lists every `file:line: reason` found."""
    changes: dict[Path, dict[int, bytes]] = {}
    seen: dict[str, tuple[str, dict]] = {}
    counts = {"shards": 0, "entries": 0, "lines": 0, "migrated": 0, "had_checksum": 0, "duplicates": 0}
    problems: list[str] = []
    torn: list[str] = []
    for path in sorted(cache_dir.rglob("*.jsonl")):
        counts["shards"] += 1
        for lineno, entry, problem in scan_shard(path, require_checksum=False):
            where = f"{path}:{lineno}"
            if problem:
                problems.append(f"{where}: {problem}")
                continue
            if entry is None:
                torn.append(f"{where}: torn last line kept as it is (an interrupted write)")
                continue
            counts["lines"] += 1
            if entry.get("response_sha256"):
                if entry["response_sha256"] != response_checksum(entry["response"]):
                    problems.append(f"{where}: response does not match its checksum response_sha256")
                    continue
                counts["had_checksum"] += 1
            else:
                new = {**entry, "v": max(int(entry.get("v", 1)), FORMAT_VERSION)}
                new["response_sha256"] = response_checksum(entry["response"])
                changes.setdefault(path, {})[lineno] = entry_line(new)[:-1]
                counts["migrated"] += 1
            key = entry["key"]
            if key in seen:
                dup = duplicate_problem(key, seen[key][0], seen[key][1], entry)
                if dup:
                    problems.append(f"{where}: {dup}")
                else:
                    counts["duplicates"] += 1
                continue
            seen[key] = (where, entry)
    counts["entries"] = len(seen)
    counts["problems"] = problems
    counts["torn"] = torn
    return changes, counts


def rewrite(path: Path, new_lines: dict[int, bytes]) -> None:
    """Replace the given lines (1-based) of one shard, every other byte kept, atomically."""
    lines = path.read_bytes().split(b"\n")
    for lineno, line in new_lines.items():
        lines[lineno - 1] = line
    data = b"\n".join(lines)
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache_dir", nargs="?", default="llm_cache", type=Path)
    ap.add_argument("--dry-run", action="store_true", help="check and count, write nothing")
    args = ap.parse_args(argv)
    if not args.cache_dir.is_dir():
        print(f"migrate: cache directory not found: {args.cache_dir}", file=sys.stderr)
        return 2
    changes, counts = plan(args.cache_dir)
    for msg in counts["torn"]:
        print(msg, file=sys.stderr)
    if counts["problems"]:
        for msg in counts["problems"]:
            print(msg, file=sys.stderr)
        print(
            f"migrate: {len(counts['problems'])} problems in {args.cache_dir}: nothing written; fix them first",
            file=sys.stderr,
        )
        return 1
    if not args.dry_run:
        for path, new_lines in changes.items():
            rewrite(path, new_lines)
    summary = {k: v for k, v in counts.items() if k not in ("problems", "torn")}
    summary.update(torn=len(counts["torn"]), shards_rewritten=0 if args.dry_run else len(changes))
    summary.update(dry_run=args.dry_run, cache_dir=str(args.cache_dir))
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
