"""Locust users for the service's load test (finrag.serve.loadtest runs it headless against 127.0.0.1 only).

Each user asks the benchmark questions in `FINRAG_LOAD_QUESTIONS` (a JSON list of request bodies), drawn with a
seeded generator, one after another with no think time (a closed loop: the figures are the server's capacity).
Every non-200 response is a failure, with its status and the server's message.

`MixedUser` (the mixed row) sends, half the time, a malformed request instead: a 4xx is its right answer, a 5xx
or a 200 a failure; its good half must still get 200 for every answer the service already holds.
"""

from __future__ import annotations

import itertools
import json
import os
import random
from pathlib import Path

from locust import FastHttpUser, constant, task

from finrag.serve.malformed import MALFORMED

BODIES = json.loads(Path(os.environ["FINRAG_LOAD_QUESTIONS"]).read_text(encoding="utf-8"))
SEED = int(os.environ.get("FINRAG_LOAD_SEED", "0"))
_user_ids = itertools.count()


class AskingUser(FastHttpUser):
    wait_time = constant(0)

    def on_start(self) -> None:
        self.rng = random.Random(SEED * 1000 + next(_user_ids))

    @task
    def answer(self) -> None:
        body = self.rng.choice(BODIES)
        with self.client.post("/v1/answer", json=body, name="/v1/answer", catch_response=True) as r:
            if r.status_code != 200:
                r.failure(f"{r.status_code}: {(r.text or '')[:200]}")


_MALFORMED = sorted(MALFORMED.items())


class MixedUser(FastHttpUser):
    wait_time = constant(0)

    def on_start(self) -> None:
        self.rng = random.Random(SEED * 1000 + 500 + next(_user_ids))

    @task
    def answer_or_refuse(self) -> None:
        if self.rng.random() < 0.5:
            body = self.rng.choice(BODIES)
            with self.client.post("/v1/answer", json=body, name="good", catch_response=True) as r:
                if r.status_code != 200:
                    r.failure(f"{r.status_code}: {(r.text or '')[:200]}")
            return
        kind, raw = self.rng.choice(_MALFORMED)
        headers = {"Content-Type": "application/json"}
        with self.client.post(
            "/v1/answer", data=raw.decode("ascii"), headers=headers, name="malformed", catch_response=True
        ) as r:
            if 400 <= r.status_code < 500:
                r.success()
            else:
                r.failure(f"{kind}: {r.status_code}: {(r.text or '')[:120]}")
