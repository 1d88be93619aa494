"""Content-addressed LLM response cache: the study's data release, committed to git.

Key = sha256 of the canonical JSON of everything that can change a response: backend, model, revision or
weights sha256, the messages, the documents, ALL decoding parameters with defaults spelled out, the replicate
index and the template id@version. Never the prompt alone: two models, two replicates or two templates can not
collide.

Storage: append-only JSON-lines shards `<cache_dir>/<stage>/<key[0]>.jsonl`, one entry per line, written with one
write + flush + fsync under an exclusive lock, so a crash can at worst leave a torn LAST line: it is skipped with a
warning when read, and cut off before the next append; earlier lines are never touched. Any other malformed line,
or an entry whose key does not match its request (a hand edit, a bad merge), is an error naming file:line.

Integrity (format v2): every entry carries `response_sha256`, the sha256 of canonical_json(entry["response"]). On
load a missing or mismatching checksum (a hand-edited response) is `CacheCorrupt` naming file:line, and so is the
same key stored twice with different responses (naming both places); the same key twice with an identical response
is harmless and the first is kept. (Every committed entry carries its checksum since 2026-12-04; the v1 format
and its one-off migration are gone.)
`verify_cache` (`finrag replay --verify`) checks every shard and lists every problem instead of stopping at one.

Modes:
  replay  a miss is a hard error (`CacheMiss`, naming stage, item and key); the model is never called.
  auto    replay when present, else call the model and store.
  record  the same as auto: call on a miss and store, return a hit as it is, so an interrupted recording
          resumes without calling the model twice for one item (the name says the intent: a recording run).
Replicate r is sent with seed = decoding.seed + r, so replicates are distinct samples where the backend honours
seeds; the key holds both the replicate and the seed actually sent.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from finrag.core.io import append_locked, canonical_json, read_jsonl, sha256_text
from finrag.llm.backends.base import Backend, Completion, check_messages, normalize_decoding

FORMAT_VERSION = 2  # 2: entries carry response_sha256
MODES = ("replay", "auto", "record")


class CacheMiss(LookupError):
    """Replay mode found no stored response; the message is one line naming stage, item and key."""


class CacheCorrupt(ValueError):
    """A cache line is malformed (not the torn last line), its key does not match its request, its response does
    not match its checksum (or has none), or it repeats a stored key with a different response."""


def cache_request(
    identity: dict,
    messages: list[dict],
    decoding: dict,
    *,
    replicate: int = 0,
    template_id: str = "",
    documents: list[dict] | None = None,
) -> dict:
    """The keyed request: everything that can change the response, defaults spelled out."""
    dec = normalize_decoding(decoding)
    dec["seed"] = dec["seed"] + int(replicate)
    request = {
        "backend": identity["backend"],
        "model": identity["model"],
        "model_revision_or_weights_sha256": identity.get("model_revision_or_weights_sha256", ""),
        "messages": check_messages(messages),
        "documents": list(documents) if documents else None,
        "decoding": dec,
        "replicate": int(replicate),
        "template_id": template_id,
    }
    if identity.get("settings"):  # output-changing backend settings (Backend.settings), only when set
        request["settings"] = dict(identity["settings"])
    return request


def cache_key(request: dict) -> str:
    return sha256_text(canonical_json(request))


def response_checksum(response) -> str:
    """The entry's `response_sha256`: sha256 of the canonical JSON of its response."""
    return sha256_text(canonical_json(response))


def entry_line(entry: dict) -> bytes:
    """One entry as its shard line, exactly as `ResponseCache.append` writes it."""
    return (json.dumps(entry, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode()


def entry_problem(entry) -> str | None:
    """Why one parsed cache line is not a valid entry, or None when it is."""
    if not isinstance(entry, dict):
        return "malformed cache line (not a JSON object)"
    key = entry.get("key")
    if not key or "request" not in entry or cache_key(entry["request"]) != key:
        return "key does not match the stored request (edited entry?)"
    if "response" not in entry:
        return "entry has no response"
    v = entry.get("v")
    if isinstance(v, int) and v > FORMAT_VERSION:
        return f"cache format v{v} is newer than this finrag reads (v{FORMAT_VERSION})"
    stored = entry.get("response_sha256")
    if not stored:
        return "entry has no response checksum (response_sha256)"
    if stored != response_checksum(entry["response"]):
        return "response does not match its checksum response_sha256 (edited response?)"
    return None


def scan_shard(path: Path):
    """Yield (lineno, entry or None, problem or None) for every non-blank line of one shard.

    A torn LAST line (no final newline, not JSON: an interrupted write) yields (lineno, None, None) with the
    entry left out: the caller warns; it is not a problem. Every other unparsable line is a problem.
    """
    data = path.read_bytes()
    lines = data.split(b"\n")
    complete = data.endswith(b"\n")
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        is_last = lineno == len(lines) or (lineno == len(lines) - 1 and complete)
        try:
            entry = json.loads(line)
        except ValueError:
            if is_last and not complete:
                yield lineno, None, None
            else:
                yield lineno, None, "malformed cache line"
            continue
        yield lineno, entry, entry_problem(entry)


def _torn_message(path: Path, lineno: int) -> str:
    size = len(path.read_bytes().rsplit(b"\n", 1)[-1])
    return f"{path}:{lineno}: torn last line skipped ({size} bytes, an interrupted write)"


def duplicate_problem(key: str, first_where: str, first: dict, entry: dict) -> str | None:
    """None when a repeated key stores the same response as before, else the reason naming the first place."""
    if canonical_json(first["response"]) == canonical_json(entry["response"]):
        return None
    return f"key {key} stored again with a different response (first at {first_where})"


class ResponseCache:
    """All entries under cache_dir (every stage's shards), indexed by key; appends to one stage's shards."""

    def __init__(self, cache_dir: str | Path):
        self.dir = Path(cache_dir)
        self.entries: dict[str, dict] = {}
        self.where: dict[str, str] = {}  # key -> "file:line" of the entry kept
        self.torn: list[str] = []
        if self.dir.is_dir():
            for path in sorted(self.dir.rglob("*.jsonl")):
                self._load(path)

    def _load(self, path: Path) -> None:
        for lineno, entry, problem in scan_shard(path):
            if problem:
                raise CacheCorrupt(f"{path}:{lineno}: {problem}")
            if entry is None:  # the torn last line of an interrupted write
                msg = _torn_message(path, lineno)
                warnings.warn(msg, RuntimeWarning, stacklevel=3)
                self.torn.append(msg)
                continue
            key = entry["key"]
            if key in self.entries:
                dup = duplicate_problem(key, self.where[key], self.entries[key], entry)
                if dup:
                    raise CacheCorrupt(f"{path}:{lineno}: {dup}")
                continue  # the same response twice: keep the first
            self.entries[key] = entry
            self.where[key] = f"{path}:{lineno}"

    def __contains__(self, key: str) -> bool:
        return key in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, key: str) -> dict | None:
        return self.entries.get(key)

    def shard(self, stage: str, key: str) -> Path:
        return self.dir / stage / f"{key[0]}.jsonl"

    def append(self, stage: str, entry: dict) -> Path:
        """Append one entry as one line: single write, fsync; a torn tail left by a crash is cut off first.

        The entry is stored with its response checksum (`response_sha256`, computed here) and a format version.
        """
        entry = {"v": FORMAT_VERSION, **entry, "response_sha256": response_checksum(entry["response"])}
        path = self.shard(stage, entry["key"])
        first = self.entries.get(entry["key"])
        if first is not None:  # never write a conflicting duplicate; an identical one would change nothing
            dup = duplicate_problem(entry["key"], self.where[entry["key"]], first, entry)
            if dup:
                raise CacheCorrupt(f"{path}: refusing to append: {dup}")
            return path
        append_locked(path, entry_line(entry), stacklevel=4)
        self.entries[entry["key"]] = entry
        self.where[entry["key"]] = f"{path} (appended by this process)"
        return path

    def total_cost(self, identity: dict | None = None) -> float:
        """USD recorded, for one backend identity or for all."""
        keys = ("backend", "model", "model_revision_or_weights_sha256")
        return sum(
            float(e.get("cost_usd", 0.0))
            for e in self.entries.values()
            if identity is None or all(e["request"].get(k) == identity.get(k) for k in keys)
        )


class CachedLLM:
    """A backend behind the response cache. `backend` may be an identity dict alone for pure replay."""

    def __init__(
        self,
        backend: Backend | dict,
        cache_dir: str | Path,
        mode: str = "auto",
        stage: str = "generate",
        count_recorded_spend: bool = True,
    ):
        if mode not in MODES:
            raise ValueError(f"cache mode must be one of {MODES}, got '{mode}'")
        self.backend = backend if isinstance(backend, Backend) else None
        self.identity = backend.identity() if isinstance(backend, Backend) else dict(backend)
        self.mode, self.stage = mode, stage
        self.cache = ResponseCache(cache_dir)
        self.calls = 0
        self.hits = 0
        self.new_cost_usd = 0.0
        # Spending caps cover the whole study: what this cache already recorded for the model counts as spent.
        # Counted once per backend object and cache directory, however many CachedLLMs share them.
        if count_recorded_spend and self.backend is not None and hasattr(self.backend, "spent_usd"):
            counted = self.backend.__dict__.setdefault("_counted_cache_dirs", set())
            where = str(self.cache.dir.resolve())
            if where not in counted:
                counted.add(where)
                self.backend.spent_usd += self.cache.total_cost(self.identity)

    def request_and_key(
        self, messages, decoding, replicate: int = 0, template_id: str = "", documents=None
    ) -> tuple[dict, str]:
        req = cache_request(
            self.identity,
            messages,
            decoding,
            replicate=replicate,
            template_id=template_id,
            documents=documents,
        )
        return req, cache_key(req)

    def complete(
        self,
        messages: list[dict],
        decoding: dict,
        replicate: int = 0,
        template_id: str = "",
        item_id: str = "",
        documents: list[dict] | None = None,
    ) -> tuple[Completion, str, bool]:
        """(completion, key, hit). A hit returns the stored completion; a miss calls the model unless replaying."""
        req, key = self.request_and_key(messages, decoding, replicate, template_id, documents)
        entry = self.cache.get(key)
        if entry is not None:
            self.hits += 1
            return Completion.model_validate(entry["response"]), key, True
        if self.mode == "replay" or self.backend is None:
            why = "replay mode" if self.mode == "replay" else "no backend given"
            raise CacheMiss(
                f"cache miss ({why}): stage={self.stage} item={item_id or '?'} key={key} "
                f"backend={req['backend']} model={req['model']} template={template_id or '?'} "
                f"replicate={replicate} in {self.cache.dir}; run with cache mode 'auto' to call the model"
            )
        comp = self.backend.complete(req["messages"], decoding=req["decoding"], documents=req["documents"])
        self.record(req, key, item_id, comp)
        return comp, key, False

    def record(self, req: dict, key: str, item_id: str, comp: Completion) -> None:
        """Append one answered request to the cache (also for a completion computed elsewhere: an executor's
        worker answers, the driver records, so the cache is written by one process exactly as a local run does)."""
        self.calls += 1
        self.new_cost_usd += comp.cost_usd
        self.cache.append(
            self.stage,
            {
                "v": FORMAT_VERSION,
                "key": key,
                "stage": self.stage,
                "item_id": item_id,
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
                "request": req,
                "response": comp.model_dump(mode="json"),
                "usage": comp.usage,
                "latency_s": comp.latency_s,
                "cost_usd": comp.cost_usd,
            },
        )

    def stats(self) -> dict:
        return {
            "calls": self.calls,
            "hits": self.hits,
            "new_cost_usd": round(self.new_cost_usd, 6),
            "mode": self.mode,
        }


def verify_replay(cache_dir: str | Path, answers_files: Sequence[str | Path]) -> dict:
    """Check that every saved answer replays from the cache with zero model calls.

    For each answer (JSON lines with cache_key, text, prompt, backend, model, template_id, replicate): its key is
    in the cache, the stored request matches the answer's prompt/backend/model/template/replicate, and the stored
    response text equals the answer text. Returns {n_answers, n_ok, missing, mismatched, ok}.
    """
    cache = ResponseCache(cache_dir)
    n, missing, mismatched = 0, [], []
    for f in answers_files:
        for a in read_jsonl(f):
            n += 1
            where = f"{f}: qid={a.get('qid', '?')} key={a.get('cache_key', '')}"
            entry = cache.get(a.get("cache_key", ""))
            if entry is None:
                missing.append(where)
                continue
            req = entry["request"]
            checks = {
                "text": entry["response"]["text"] == a.get("text"),
                "prompt": "prompt" not in a or req["messages"] == a["prompt"],
                "backend": "backend" not in a or req["backend"] == a["backend"],
                "model": "model" not in a or req["model"] == a["model"],
                "template_id": "template_id" not in a or req["template_id"] == a["template_id"],
                "replicate": "replicate" not in a or req["replicate"] == a["replicate"],
            }
            bad = [k for k, ok in checks.items() if not ok]
            if bad:
                mismatched.append(f"{where} differs in {','.join(bad)}")
    n_ok = n - len(missing) - len(mismatched)
    return {"n_answers": n, "n_ok": n_ok, "missing": missing, "mismatched": mismatched, "ok": n_ok == n}


def verify_cache(cache_dir: str | Path) -> dict:
    """Check every shard under cache_dir and list EVERY problem, not just the first (`finrag replay --verify`).

    Each line must parse (a torn last line is tolerated, as when loading, and listed under `torn`), its key must
    match its request, its response must match its `response_sha256`, and a key stored twice must store the same
    response. Returns {entries (distinct keys), lines, duplicates (identical repeats), shards, torn, problems
    ("file:line: reason"), ok}.
    """
    root = Path(cache_dir)
    seen: dict[str, tuple[str, dict]] = {}
    problems: list[str] = []
    torn: list[str] = []
    shards = lines = duplicates = 0
    for path in sorted(root.rglob("*.jsonl")) if root.is_dir() else []:
        shards += 1
        for lineno, entry, problem in scan_shard(path):
            where = f"{path}:{lineno}"
            if problem:
                problems.append(f"{where}: {problem}")
                lines += 1
                continue
            if entry is None:
                torn.append(_torn_message(path, lineno))
                continue
            lines += 1
            key = entry["key"]
            if key in seen:
                dup = duplicate_problem(key, seen[key][0], seen[key][1], entry)
                if dup:
                    problems.append(f"{where}: {dup}")
                else:
                    duplicates += 1
                continue
            seen[key] = (where, entry)
    return {
        "entries": len(seen),
        "lines": lines,
        "duplicates": duplicates,
        "shards": shards,
        "torn": torn,
        "problems": problems,
        "ok": not problems,
    }
