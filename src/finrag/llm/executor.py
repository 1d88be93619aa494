"""Where a batch stage's missing model calls run: `local` (this process, one call after another, the default) or
`ray` (Ray actors that each load the model once and answer batches of calls; a laptop's cores, a GPU server or a
cluster, from `FINRAG_RAY_ADDRESS`: `auto`, a cluster address, or unset for a local instance started for the run).

Either way the driver alone writes the response cache, in the order the calls were planned, through the same
`CachedLLM.record` a local call uses; a batch is recorded as soon as it returns, so a killed run loses at most the
batches in flight and the next run asks only for what is still missing. The stage then writes its outputs by
replaying the cache, exactly as a local run writes them. The cache key holds the request, never where it ran:
threads per actor and batch composition are speed settings, not part of the key.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from tqdm import tqdm

from finrag.llm.backends.base import Backend, Completion
from finrag.llm.cache import CachedLLM

EXECUTORS = ("local", "ray")
ENV_EXECUTOR = "FINRAG_EXECUTOR"
ENV_ADDRESS = "FINRAG_RAY_ADDRESS"


class ExecutorError(RuntimeError):
    """An executor cannot run here (Ray not installed, no cluster at the address): one line, no traceback."""


@dataclass(frozen=True)
class ModelCall:
    """One planned request. `group`: calls that should go to one worker together (one question's prompts share
    their passages, so a local model reuses its KV cache within the group)."""

    messages: list[dict]
    decoding: dict
    replicate: int = 0
    template_id: str = ""
    item_id: str = ""
    group: str = ""
    documents: list[dict] | None = field(default=None)


def executor_name(requested: str | None = None) -> str:
    name = (requested or os.environ.get(ENV_EXECUTOR) or "local").strip().lower()
    if name not in EXECUTORS:
        raise ExecutorError(
            f"executor {name!r}: expected one of {', '.join(EXECUTORS)} (--executor or {ENV_EXECUTOR})"
        )
    return name


def missing_calls(llm: CachedLLM, calls: Sequence[ModelCall]) -> list[tuple[ModelCall, dict, str]]:
    """The calls whose request is not in the cache yet, each once, in planned order: (call, request, key)."""
    seen: set[str] = set()
    out = []
    for c in calls:
        req, key = llm.request_and_key(c.messages, c.decoding, c.replicate, c.template_id, c.documents)
        if key in seen or key in llm.cache:
            continue
        seen.add(key)
        out.append((c, req, key))
    return out


def batches_of(
    todo: Sequence[tuple[ModelCall, dict, str]], size: int
) -> Iterator[list[tuple[ModelCall, dict, str]]]:
    """Consecutive calls of one group together, at most `size` calls a batch (a group larger than that is split)."""
    batch: list[tuple[ModelCall, dict, str]] = []
    for item in todo:
        if batch and (len(batch) >= size or item[0].group != batch[-1][0].group):
            yield batch
            batch = []
        batch.append(item)
    if batch:
        yield batch


class ModelWorker:
    """What a Ray actor holds: one backend, built once by `factory` in the actor's own process."""

    def __init__(self, factory: Callable[[], Backend]):
        self.backend = factory()

    def answer(self, requests: list[dict]) -> list[dict]:
        return [
            self.backend.complete(r["messages"], decoding=r["decoding"], documents=r["documents"]).model_dump(
                mode="json"
            )
            for r in requests
        ]


def record_on_ray(
    llm: CachedLLM,
    calls: Sequence[ModelCall],
    backend_factory: Callable[[], Backend],
    *,
    workers: int = 2,
    cpus_per_worker: float = 1,
    batch_size: int = 8,
    address: str | None = None,
    progress: bool = True,
) -> dict:
    """Answer the missing calls on `workers` Ray actors and record them through `llm` (in planned order).
    Returns {missing, recorded, workers, address}. An actor that dies is restarted and its batch retried."""
    if llm.mode == "replay":
        raise ExecutorError(
            "the ray executor records calls: set FINRAG_LLM_MODE=auto (a replay needs no executor)"
        )
    try:
        import ray
        from ray.util import ActorPool
    except ImportError:
        raise ExecutorError("the ray executor needs Ray: uv sync --extra ray") from None
    todo = missing_calls(llm, calls)
    summary: dict[str, int | str] = {"missing": len(todo), "workers": workers, "address": address or "local"}
    recorded = 0
    if not todo:
        return {**summary, "recorded": 0}
    started = not ray.is_initialized()
    if started:
        try:
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(
                    num_cpus=max(1, int(workers * cpus_per_worker)),
                    include_dashboard=False,
                    log_to_driver=False,
                )
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ExecutorError(
                f"ray: cannot start or reach a cluster at {address or 'a local instance'}: {exc}"
            ) from None
    try:
        actor = ray.remote(num_cpus=cpus_per_worker, max_restarts=2, max_task_retries=2)(ModelWorker)
        pool = ActorPool([actor.remote(backend_factory) for _ in range(workers)])
        planned = list(batches_of(todo, batch_size))
        bar = tqdm(total=len(todo), desc=f"ray[{llm.identity['model']}]", disable=not progress, unit="call")
        replies = pool.map(lambda a, b: a.answer.remote([req for _, req, _ in b]), planned)
        for batch, comps in zip(planned, replies, strict=True):
            for (call, req, key), comp in zip(batch, comps, strict=True):
                llm.record(req, key, call.item_id, Completion.model_validate(comp))
                recorded += 1
            bar.update(len(batch))
        bar.close()
    finally:
        if started:
            ray.shutdown()
    return {**summary, "recorded": recorded}
