"""Content-addressed LLM response cache: the study's data release, committed to git.

Key = sha256 of the canonical JSON of everything that can change a response: backend, model, revision or
weights sha256, the messages, the documents, ALL decoding parameters with defaults spelled out, the replicate
index and the template id@version. Never the prompt alone: two models, two replicates or two templates can not
collide.

Storage: append-only JSON-lines shards `<cache_dir>/<stage>/<key[0]>.jsonl`, one entry per line, written with one
write + flush + fsync under an exclusive lock, so a crash can at worst leave a torn LAST line: it is skipped with a
warning when read, and cut off before the next append; earlier lines are never touched. Any other malformed line,
or an entry whose key does not match its request (a hand edit, a bad merge), is an error naming file:line.

Modes:
  replay  a miss is a hard error (`CacheMiss`, naming stage, item and key); the model is never called.
  auto    replay when present, else call the model and store.
  record  the same as auto: call on a miss and store, return a hit as it is, so an interrupted recording
          resumes without calling the model twice for one item (the name says the intent: a recording run).
Replicate r is sent with seed = decoding.seed + r, so replicates are distinct samples where the backend honours
seeds; the key holds both the replicate and the seed actually sent.
"""

from __future__ import annotations

import fcntl
import json
import os
import warnings
from datetime import UTC, datetime
from pathlib import Path

from finrag.io import canonical_json, read_jsonl, sha256_text
from finrag.llm.backends import Backend, Completion, check_messages, normalize_decoding

FORMAT_VERSION = 1
MODES = ("replay", "auto", "record")


class CacheMiss(LookupError):
    """Replay mode found no stored response; the message is one line naming stage, item and key."""


class CacheCorrupt(ValueError):
    """A cache line is malformed (not the torn last line) or its key does not match its request."""


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


class ResponseCache:
    """All entries under cache_dir (every stage's shards), indexed by key; appends to one stage's shards."""

    def __init__(self, cache_dir: str | Path):
        self.dir = Path(cache_dir)
        self.entries: dict[str, dict] = {}
        self.torn: list[str] = []
        if self.dir.is_dir():
            for path in sorted(self.dir.rglob("*.jsonl")):
                self._load(path)

    def _load(self, path: Path) -> None:
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
                    msg = f"{path}:{lineno}: torn last line skipped ({len(line)} bytes, an interrupted write)"
                    warnings.warn(msg, RuntimeWarning, stacklevel=3)
                    self.torn.append(msg)
                    continue
                raise CacheCorrupt(f"{path}:{lineno}: malformed cache line") from None
            key = entry.get("key")
            if not key or "request" not in entry or cache_key(entry["request"]) != key:
                raise CacheCorrupt(f"{path}:{lineno}: key does not match the stored request (edited entry?)")
            self.entries[key] = entry  # a later line for the same key wins

    def __contains__(self, key: str) -> bool:
        return key in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, key: str) -> dict | None:
        return self.entries.get(key)

    def shard(self, stage: str, key: str) -> Path:
        return self.dir / stage / f"{key[0]}.jsonl"

    def append(self, stage: str, entry: dict) -> Path:
        """Append one entry as one line: single write, fsync; a torn tail left by a crash is cut off first."""
        path = self.shard(stage, entry["key"])
        path.parent.mkdir(parents=True, exist_ok=True)
        line = (json.dumps(entry, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode()
        created = not path.exists()
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            _repair_tail(fd, path)
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)  # closing releases the lock
        if created:
            dfd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        self.entries[entry["key"]] = entry
        return path

    def total_cost(self, identity: dict | None = None) -> float:
        """USD recorded, for one backend identity or for all."""
        keys = ("backend", "model", "model_revision_or_weights_sha256")
        return sum(
            float(e.get("cost_usd", 0.0))
            for e in self.entries.values()
            if identity is None or all(e["request"].get(k) == identity.get(k) for k in keys)
        )


def _repair_tail(fd: int, path: Path) -> None:
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    start = max(0, size - (1 << 20))
    while True:  # find the last newline
        tail = os.pread(fd, size - start, start)
        cut = tail.rfind(b"\n")
        if cut >= 0 or start == 0:
            break
        start = max(0, start - (1 << 20))
    last_start = start + cut + 1 if cut >= 0 else 0
    last = os.pread(fd, size - last_start, last_start)
    try:
        json.loads(last)
        os.write(fd, b"\n")  # complete entry missing only its newline: keep it
    except ValueError:
        os.ftruncate(fd, last_start)
        warnings.warn(
            f"{path}: cut a torn last line ({size - last_start} bytes) before appending",
            RuntimeWarning,
            stacklevel=4,
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
        return comp, key, False

    def stats(self) -> dict:
        return {
            "calls": self.calls,
            "hits": self.hits,
            "new_cost_usd": round(self.new_cost_usd, 6),
            "mode": self.mode,
        }


def verify_replay(cache_dir: str | Path, answers_files: list[str | Path]) -> dict:
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
