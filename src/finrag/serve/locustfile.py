"""Locust users for the service's load test (finrag.serve.loadtest runs it headless against 127.0.0.1 only).

Each user asks the benchmark questions in `FINRAG_LOAD_QUESTIONS` (a JSON list of request bodies), drawn with a
seeded generator, one after another with no think time (a closed loop: the figures are the server's capacity).
Every non-200 response is a failure, with its status and the server's message.
"""

from __future__ import annotations

import itertools
import json
import os
import random
from pathlib import Path

from locust import FastHttpUser, constant, task

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
