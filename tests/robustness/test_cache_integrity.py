"""The response cache never replays an edited or conflicting entry in silence.

Every entry carries response_sha256; a hand-edited response, a missing checksum, or one key stored twice with
different responses is CacheCorrupt naming file:line (both places for a duplicate); an identical duplicate is
harmless. `finrag replay --verify` checks the whole cache (exit 0 / 1, every problem as file:line: reason), and
tools/migrate_cache_checksums.py adds checksums to v1 entries idempotently and refuses conflicting duplicates.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from finrag.cli import app
from finrag.core.io import canonical_json, sha256_text
from finrag.llm.backends.base import Backend, Completion
from finrag.llm.cache import (
    FORMAT_VERSION,
    CacheCorrupt,
    CachedLLM,
    ResponseCache,
    entry_line,
    verify_cache,
)

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "migrate_cache_checksums.py"


class Echo(Backend):
    name = "echo"
    model = "echo-1"

    def revision(self) -> str:
        return "rev-1"

    def _complete(self, messages, decoding, documents):
        return Completion(
            text=f"answer to {messages[-1]['content']} seed={decoding['seed']}", model=self.model
        )


def _record(cache_dir: Path, n: int = 24, stage: str = "gen") -> list[str]:
    llm = CachedLLM(Echo(), cache_dir, mode="auto", stage=stage)
    return [llm.complete([{"role": "user", "content": f"q{i}"}], {}, item_id=f"q{i}")[1] for i in range(n)]


def _fullest_shard(cache_dir: Path) -> Path:
    """The shard with the most lines (at least 2 for these tests)."""
    shard = max(sorted(cache_dir.rglob("*.jsonl")), key=lambda p: len(p.read_bytes().splitlines()))
    assert len(shard.read_bytes().splitlines()) >= 2, "the test needs a shard with two entries"
    return shard


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, entries: list[dict]) -> None:
    path.write_bytes(b"".join(entry_line(e) for e in entries))


def _sha(response) -> str:
    return sha256_text(canonical_json(response))


# ------------------------------------------------------------------------------------------ writing, loading


def test_new_entries_carry_the_checksum_of_their_response(tmp_path):
    keys = _record(tmp_path)
    cache = ResponseCache(tmp_path)
    assert len(cache) == len(keys)
    for key in keys:
        e = cache.get(key)
        assert e["v"] == FORMAT_VERSION == 2
        assert e["response_sha256"] == _sha(e["response"])


def test_hand_edited_response_text_is_corrupt_naming_file_and_line(tmp_path):
    _record(tmp_path)
    shard = _fullest_shard(tmp_path)
    entries = _lines(shard)
    entries[1]["response"]["text"] = "a better answer, typed by hand"
    _write(shard, entries)
    with pytest.raises(CacheCorrupt, match=rf"{shard}:2: response does not match its checksum"):
        ResponseCache(tmp_path)


def test_missing_checksum_is_corrupt(tmp_path):
    _record(tmp_path)
    shard = _fullest_shard(tmp_path)
    entries = _lines(shard)
    del entries[1]["response_sha256"]
    _write(shard, entries)
    with pytest.raises(CacheCorrupt, match=rf"{shard}:2: entry has no response checksum"):
        ResponseCache(tmp_path)


def test_conflicting_duplicate_is_corrupt_naming_both_places(tmp_path):
    _record(tmp_path)
    shard = _fullest_shard(tmp_path)
    entries = _lines(shard)
    other = json.loads(json.dumps(entries[0]))
    other["response"]["text"] = "a different answer for the same key"
    other["response_sha256"] = _sha(other["response"])  # internally consistent: only the duplicate is wrong
    _write(shard, [*entries, other])
    n = len(entries) + 1
    with pytest.raises(CacheCorrupt) as err:
        ResponseCache(tmp_path)
    msg = str(err.value)
    assert msg.startswith(f"{shard}:{n}: key {entries[0]['key']} stored again with a different response")
    assert f"first at {shard}:1" in msg


def test_conflicting_duplicate_across_stages_names_both_files(tmp_path):
    (key,) = _record(tmp_path, n=1, stage="a")
    (src,) = (tmp_path / "a").glob("*.jsonl")
    (entry,) = _lines(src)
    entry["response"]["text"] = "changed"
    entry["response_sha256"] = _sha(entry["response"])
    dst = tmp_path / "b" / src.name
    dst.parent.mkdir()
    _write(dst, [entry])
    with pytest.raises(CacheCorrupt, match=rf"{dst}:1: key {key} .* \(first at {src}:1\)"):
        ResponseCache(tmp_path)


def test_identical_duplicate_is_fine_and_the_first_is_kept(tmp_path):
    keys = _record(tmp_path)
    shard = _fullest_shard(tmp_path)
    entries = _lines(shard)
    again = {**entries[0], "created": "2099-01-01T00:00:00+00:00"}  # same response, other metadata
    _write(shard, [*entries, again])
    cache = ResponseCache(tmp_path)
    assert len(cache) == len(keys)
    assert cache.get(entries[0]["key"])["created"] == entries[0]["created"]
    assert cache.where[entries[0]["key"]] == f"{shard}:1"
    assert verify_cache(tmp_path)["duplicates"] == 1


def test_append_refuses_a_conflicting_duplicate(tmp_path):
    (key,) = _record(tmp_path, n=1)
    cache = ResponseCache(tmp_path)
    entry = json.loads(json.dumps(cache.get(key)))
    entry["response"]["text"] = "other"
    with pytest.raises(CacheCorrupt, match="refusing to append"):
        cache.append("gen", entry)
    assert len(ResponseCache(tmp_path)) == 1


def test_torn_last_line_is_still_tolerated(tmp_path):
    keys = _record(tmp_path)
    shard = _fullest_shard(tmp_path)
    with open(shard, "ab") as fh:
        fh.write(b'{"v":2,"key":"ab')
    with pytest.warns(RuntimeWarning, match="torn last line"):
        cache = ResponseCache(tmp_path)
    assert len(cache) == len(keys)
    assert verify_cache(tmp_path)["ok"] is True


# ---------------------------------------------------------------------------------------- replay --verify


def _verify(cache_dir: Path):
    return CliRunner().invoke(app, ["replay", "--verify", "--cache-dir", str(cache_dir)])


def test_replay_verify_exit_0_with_a_one_line_summary(tmp_path):
    keys = _record(tmp_path)
    res = _verify(tmp_path)
    assert res.exit_code == 0, (res.stdout, res.stderr)
    (line,) = res.stdout.splitlines()
    summary = json.loads(line)
    assert summary["ok"] is True and summary["entries"] == len(keys)
    assert summary["shards"] == len(list(tmp_path.rglob("*.jsonl"))) and summary["problems"] == 0


def test_replay_verify_exit_1_listing_every_problem(tmp_path):
    _record(tmp_path)
    shards = sorted(tmp_path.rglob("*.jsonl"), key=lambda p: -len(p.read_bytes().splitlines()))
    a, b = shards[0], shards[1]
    ea = _lines(a)
    ea[1]["response"]["text"] = "edited"
    dup = {**ea[0], "response": {**ea[0]["response"], "text": "conflict"}}
    dup["response_sha256"] = _sha(dup["response"])
    _write(a, [*ea, dup])
    eb = _lines(b)
    del eb[0]["response_sha256"]
    _write(b, eb)
    res = _verify(tmp_path)
    assert res.exit_code == 1, (res.stdout, res.stderr)
    assert json.loads(res.stdout)["ok"] is False
    err = res.stderr.splitlines()
    assert f"{a}:2: response does not match its checksum response_sha256 (edited response?)" in err
    assert any(e.startswith(f"{a}:{len(ea) + 1}: key ") and f"(first at {a}:1)" in e for e in err), err
    assert any(e.startswith(f"{b}:1: entry has no response checksum") for e in err), err
    assert err[-1].startswith("finrag: replay --verify: 3 problems")


def test_replay_without_answers_or_verify_is_a_usage_error(tmp_path):
    _record(tmp_path, n=1)
    res = CliRunner().invoke(app, ["replay", "--cache-dir", str(tmp_path)])
    assert res.exit_code == 2 and "--verify" in res.stderr


# ---------------------------------------------------------------------------------------------- migration


def _migrate_main():
    spec = importlib.util.spec_from_file_location("migrate_cache_checksums", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.main


def _make_v1(cache_dir: Path) -> dict[Path, bytes]:
    """Turn a recorded cache into a v1 one (no checksums), as committed before this format; returns its bytes."""
    before = {}
    for shard in sorted(cache_dir.rglob("*.jsonl")):
        entries = _lines(shard)
        for e in entries:
            del e["response_sha256"]
            e["v"] = 1
        _write(shard, entries)
        before[shard] = shard.read_bytes()
    return before


def test_migration_adds_checksums_preserving_order_and_is_idempotent(tmp_path, capsys):
    keys = _record(tmp_path)
    before = _make_v1(tmp_path)
    with pytest.raises(CacheCorrupt, match="no response checksum"):
        ResponseCache(tmp_path)
    main = _migrate_main()
    assert main([str(tmp_path)]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["migrated"] == first["entries"] == len(keys) and first["shards_rewritten"] == len(before)
    cache = ResponseCache(tmp_path)
    assert len(cache) == len(keys)
    for shard, old in before.items():
        new_entries = _lines(shard)
        old_entries = [json.loads(line) for line in old.splitlines()]
        assert [e["key"] for e in new_entries] == [e["key"] for e in old_entries]  # line order kept
        for e in new_entries:
            assert e["v"] == 2 and e["response_sha256"] == _sha(e["response"])
        # exactly the serialisation ResponseCache.append writes
        assert shard.read_bytes() == b"".join(entry_line(e) for e in new_entries)
    after_first = {s: s.read_bytes() for s in before}
    assert main([str(tmp_path)]) == 0  # a second run changes nothing
    second = json.loads(capsys.readouterr().out)
    assert second["migrated"] == 0 and second["shards_rewritten"] == 0 and second["had_checksum"] == len(keys)
    assert {s: s.read_bytes() for s in before} == after_first
    assert _verify(tmp_path).exit_code == 0


def test_migration_refuses_conflicting_duplicates_and_writes_nothing(tmp_path, capsys):
    _record(tmp_path)
    before = _make_v1(tmp_path)
    shard = max(before, key=lambda p: len(before[p].splitlines()))
    entries = _lines(shard)
    dup = {**entries[0], "response": {**entries[0]["response"], "text": "conflict"}}
    _write(shard, [*entries, dup])
    before[shard] = shard.read_bytes()
    assert _migrate_main()([str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"{shard}:{len(entries) + 1}: key {entries[0]['key']}" in err and f"first at {shard}:1" in err
    assert {s: s.read_bytes() for s in before} == before  # no file touched


def test_migration_keeps_a_torn_last_line_as_it_is(tmp_path, capsys):
    _record(tmp_path)
    before = _make_v1(tmp_path)
    shard = next(iter(before))
    with open(shard, "ab") as fh:
        fh.write(b'{"v":1,"key":"to')
    assert _migrate_main()([str(tmp_path)]) == 0
    assert shard.read_bytes().endswith(b'\n{"v":1,"key":"to')
    assert "torn last line" in capsys.readouterr().err
