"""The response cache never replays an edited or conflicting entry in silence.

Every entry carries response_sha256; a hand-edited response, a missing checksum, or one key stored twice with
different responses is CacheCorrupt naming file:line (both places for a duplicate); an identical duplicate is
harmless. `finrag replay --verify` checks the whole cache (exit 0 / 1, every problem as file:line: reason).
"""

from __future__ import annotations

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
