"""Response cache: keys never collide, replay misses are loud, torn lines are survived, a SIGKILLed recording
resumes without calling the model twice for one item, and saved answers replay with zero calls."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from finrag.core.io import read_jsonl, write_jsonl
from finrag.llm.backends.base import Backend, Completion
from finrag.llm.cache import (
    CacheCorrupt,
    CachedLLM,
    CacheMiss,
    ResponseCache,
    cache_key,
    cache_request,
    verify_replay,
)

MSGS = [{"role": "system", "content": "rules"}, {"role": "user", "content": "What was capex? [1]"}]


class Echo(Backend):
    """Fake backend: counts calls, echoes model, prompt and seed."""

    name = "echo"

    def __init__(self, model: str = "echo-1"):
        self.model = model
        self.seen: list[dict] = []

    def revision(self) -> str:
        return "rev-1"

    def _complete(self, messages, decoding, documents):
        self.seen.append(decoding)
        return Completion(
            text=f"{self.model}|{messages[-1]['content']}|seed={decoding['seed']} [1]",
            usage={"input_tokens": 10, "output_tokens": 3},
            cost_usd=0.002,
            model=self.model,
        )


def test_keys_never_collide_across_model_replicate_template_decoding_documents():
    ident = Echo().identity()
    base = {"replicate": 0, "template_id": "plain@1", "documents": None}
    variants = {
        "base": cache_request(ident, MSGS, {}, **base),
        "model": cache_request(Echo("echo-2").identity(), MSGS, {}, **base),
        "revision": cache_request({**ident, "model_revision_or_weights_sha256": "rev-2"}, MSGS, {}, **base),
        "replicate": cache_request(ident, MSGS, {}, **{**base, "replicate": 1}),
        "template": cache_request(ident, MSGS, {}, **{**base, "template_id": "plain@2"}),
        "decoding": cache_request(ident, MSGS, {"max_tokens": 100}, **base),
        "documents": cache_request(ident, MSGS, {}, **{**base, "documents": [{"n": 1, "text": "x"}]}),
        "prompt": cache_request(ident, [MSGS[0], {"role": "user", "content": "other"}], {}, **base),
        "settings": cache_request({**ident, "settings": {"chat_format": "chatml"}}, MSGS, {}, **base),
    }
    keys = {name: cache_key(r) for name, r in variants.items()}
    assert len(set(keys.values())) == len(keys), keys
    # Defaults are spelled out: an explicit default gives the same key as leaving it out.
    explicit = cache_request(ident, MSGS, {"temperature": 0.0, "top_p": 1.0, "stop": []}, **base)
    assert cache_key(explicit) == keys["base"]
    assert set(variants["base"]["decoding"]) >= {"temperature", "top_p", "max_tokens", "seed", "stop"}
    # no setting, no "settings" field: keys recorded before settings existed stay valid
    assert "settings" not in variants["base"]
    assert cache_key(cache_request({**ident, "settings": {}}, MSGS, {}, **base)) == keys["base"]


def test_auto_calls_once_then_hits_and_entries_carry_everything(tmp_path):
    backend = Echo()
    llm = CachedLLM(backend, tmp_path, mode="auto", stage="generate")
    c1, k1, hit1 = llm.complete(MSGS, {"seed": 5}, template_id="plain@1", item_id="q1")
    c2, k2, hit2 = llm.complete(MSGS, {"seed": 5}, template_id="plain@1", item_id="q1")
    assert (hit1, hit2, k1 == k2, c1 == c2) == (False, True, True, True)
    assert (llm.calls, llm.hits, len(backend.seen)) == (1, 1, 1)
    (shard,) = list(tmp_path.rglob("*.jsonl"))
    assert shard.parent.name == "generate" and shard.name == f"{k1[0]}.jsonl"
    (entry,) = read_jsonl(shard)
    assert entry["key"] == k1 and entry["item_id"] == "q1" and entry["stage"] == "generate"
    assert entry["request"]["template_id"] == "plain@1" and entry["request"]["decoding"]["seed"] == 5
    assert entry["response"]["text"] == c1.text and entry["usage"] == {"input_tokens": 10, "output_tokens": 3}
    assert entry["cost_usd"] == 0.002 and "latency_s" in entry and entry["created"].endswith("+00:00")
    # A new process (new CachedLLM) replays it without a backend at all.
    replay = CachedLLM(backend.identity(), tmp_path, mode="replay")
    c3, k3, hit3 = replay.complete(MSGS, {"seed": 5}, template_id="plain@1", item_id="q1")
    assert (c3.text, k3, hit3, replay.calls) == (c1.text, k1, True, 0)


def test_replicates_get_distinct_seeds_and_keys(tmp_path):
    backend = Echo()
    llm = CachedLLM(backend, tmp_path, mode="record")
    texts = {llm.complete(MSGS, {"seed": 10}, replicate=r, item_id="q")[0].text for r in range(3)}
    assert [d["seed"] for d in backend.seen] == [10, 11, 12] and len(texts) == 3


def test_replay_miss_is_a_loud_one_line_error(tmp_path):
    backend = Echo()
    llm = CachedLLM(backend, tmp_path, mode="replay", stage="judge")
    with pytest.raises(CacheMiss) as err:
        llm.complete(MSGS, {}, template_id="cot@1", item_id="fb_042")
    msg = str(err.value)
    _, key = llm.request_and_key(MSGS, {}, template_id="cot@1")
    assert "stage=judge" in msg and "item=fb_042" in msg and f"key={key}" in msg and "\n" not in msg
    assert backend.seen == [] and llm.calls == 0


def test_torn_last_line_is_skipped_then_cut_and_earlier_lines_survive(tmp_path):
    llm = CachedLLM(Echo(), tmp_path, mode="auto", stage="s")
    keys = [llm.complete(MSGS, {"seed": i}, item_id=f"q{i}")[1] for i in range(40)]
    shard = max(tmp_path.rglob("*.jsonl"), key=lambda p: len(p.read_bytes().splitlines()))
    before = shard.read_bytes()
    with open(shard, "ab") as fh:  # a crash in the middle of a write
        fh.write(b'{"v":1,"key":"abc","request":{"backend":"ec')
    with pytest.warns(RuntimeWarning, match="torn last line"):
        reopened = CachedLLM(Echo(), tmp_path, mode="auto", stage="s")
    assert all(k in reopened.cache for k in keys)
    # The next append to that shard cuts the torn tail first; every earlier byte is unchanged.
    k0 = shard.name[0]
    seed = next(s for s in range(1000, 5000) if reopened.request_and_key(MSGS, {"seed": s})[1][0] == k0)
    with pytest.warns(RuntimeWarning, match="cut a torn last line"):
        reopened.complete(MSGS, {"seed": seed}, item_id="new")
    after = shard.read_bytes()
    assert after.startswith(before) and len(read_jsonl(shard)) == len(before.splitlines()) + 1


def test_corrupt_middle_line_and_edited_entry_are_errors(tmp_path):
    llm = CachedLLM(Echo(), tmp_path, mode="auto")
    for i in range(3):
        llm.complete(MSGS, {"seed": 0}, replicate=i, item_id="q")
    for shard in tmp_path.rglob("*.jsonl"):
        lines = shard.read_text().splitlines()
        entry = json.loads(lines[0])
        entry["response"]["text"] = "edited"
        entry["request"]["model"] = "other"
        shard.write_text("\n".join([json.dumps(entry), *lines[1:]]) + "\n")
        with pytest.raises(CacheCorrupt, match=rf"{shard.name}:1: key does not match"):
            ResponseCache(tmp_path)
        shard.write_text("\n".join(["<<<<<<< HEAD", *lines]) + "\n")
        with pytest.raises(CacheCorrupt, match=rf"{shard.name}:1: malformed"):
            ResponseCache(tmp_path)
        break


WORKER = textwrap.dedent(
    """
    import os, sys, time
    from finrag.llm.backends.base import Backend, Completion
    from finrag.llm.cache import CachedLLM

    cache_dir, log_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

    class Slow(Backend):
        name = "slow"
        model = "slow-1"

        def _complete(self, messages, decoding, documents):
            fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.write(fd, (messages[-1]["content"] + "\\n").encode())
            os.fsync(fd)
            os.close(fd)
            time.sleep(0.04)
            return Completion(text="answer to " + messages[-1]["content"] + " " + "x" * 3000)

    llm = CachedLLM(Slow(), cache_dir, mode="record", stage="gen")
    for i in range(n):
        llm.complete([{"role": "user", "content": f"item-{i}"}], {}, template_id="plain@1", item_id=f"item-{i}")
    print("done", llm.calls, llm.hits, flush=True)
    """
)


def _cached_items(cache_dir) -> set[str]:
    cache = ResponseCache(cache_dir)
    return {e["item_id"] for e in cache.entries.values()}


def test_sigkill_mid_run_then_resume_calls_no_item_twice(tmp_path):
    n = 30
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    cache_dir, log1, log2 = tmp_path / "cache", tmp_path / "calls1.log", tmp_path / "calls2.log"
    proc = subprocess.Popen([sys.executable, str(script), str(cache_dir), str(log1), str(n)])
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        lines = (
            sum(len(p.read_bytes().splitlines()) for p in cache_dir.rglob("*.jsonl"))
            if cache_dir.exists()
            else 0
        )
        if lines >= 8 or proc.poll() is not None:
            break
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "the worker finished before it could be killed"
    with _maybe_torn():
        done_before = _cached_items(cache_dir)
    called_before = log1.read_text().split()
    assert 8 <= len(done_before) < n

    out = subprocess.run(
        [sys.executable, str(script), str(cache_dir), str(log2), str(n)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    called_after = log2.read_text().split()
    assert not set(called_after) & done_before, "an item already stored was called again"
    assert f"done {n - len(done_before)} {len(done_before)}" in out.stdout
    lost = set(called_before) - done_before  # in flight when killed: called, never stored
    assert len(lost) <= 1 and set(called_after) == {f"item-{i}" for i in range(n)} - done_before
    for shard in cache_dir.rglob("*.jsonl"):  # every shard parses strictly after the resume
        read_jsonl(shard)
    assert _cached_items(cache_dir) == {f"item-{i}" for i in range(n)}


class _maybe_torn:
    """The kill may land inside a write: a torn last line then warns; nothing else may."""

    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings(record=True)
        self.caught = self._cm.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        self._cm.__exit__(*exc)
        assert all("torn last line" in str(w.message) for w in self.caught)
        return False


def test_verify_replay_checks_every_saved_answer(tmp_path):
    llm = CachedLLM(Echo(), tmp_path / "cache", mode="auto")
    answers = []
    for i in range(3):
        comp, key, _ = llm.complete(MSGS, {}, replicate=i, template_id="plain@1", item_id=f"q{i}")
        answers.append(
            {
                "qid": f"q{i}",
                "cache_key": key,
                "text": comp.text,
                "prompt": MSGS,
                "backend": "echo",
                "model": "echo-1",
                "template_id": "plain@1",
                "replicate": i,
            }
        )
    write_jsonl(tmp_path / "answers.jsonl", answers)
    report = verify_replay(tmp_path / "cache", [tmp_path / "answers.jsonl"])
    assert report == {"n_answers": 3, "n_ok": 3, "missing": [], "mismatched": [], "ok": True}
    answers[1]["text"] = "something else"
    answers[2]["cache_key"] = "0" * 64
    write_jsonl(tmp_path / "answers.jsonl", answers)
    report = verify_replay(tmp_path / "cache", [tmp_path / "answers.jsonl"])
    assert report["ok"] is False and report["n_ok"] == 1
    assert "qid=q1" in report["mismatched"][0] and "text" in report["mismatched"][0]
    assert "qid=q2" in report["missing"][0]
