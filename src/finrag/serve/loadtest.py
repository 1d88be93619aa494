"""Load test of `finrag serve` on this machine, and the setup time from a fresh clone to the first answer.

`run_load_test` starts the real command (`finrag serve`, uvicorn, one process) on 127.0.0.1, then:
1. asks every evaluated question once (the cached-answer path's first visit: the frozen passages, the response
   cache, the judge; its per-stage time from each response's `timing_ms`);
2. runs locust headless (a separate process, no think time) at each user count for a fixed time: requests/s,
   p50/p95/p99 and every failure, from locust's own CSV; the server's /metrics before and after say how many
   answers came from the in-memory memo;
3. restarts the service with an empty response cache in `auto` mode and asks `live_questions` questions not as
   evaluated (company + period filter on): the live path, search + a model call + judging, per stage.
Figures depend on the machine and on what else runs on it: the result records CPU count and load average.

`run_setup_time` clones the repository into a temporary folder, installs it (`uv sync --frozen`), rebuilds what
the service reads (`dvc repro ingest questions chunk verifier_data verifier_train` from the data mirror: the service judges with the trained verifier) and times `finrag serve` to its first
answer, each step timed.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx
import numpy as np
from tqdm import tqdm

from finrag.core.machine import machine
from finrag.core.proc import timed_command

HOST = "127.0.0.1"  # the load test never leaves this machine
# run by locust as a file; named as a module so that tools/stage_deps.py counts its code as serve_load's
LOCUSTFILE = "finrag.serve.locustfile"


def _locustfile() -> str:
    """The locustfile's path, found without importing it (importing locust patches this process with gevent)."""
    spec = importlib.util.find_spec(LOCUSTFILE)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"{LOCUSTFILE} not found")
    return spec.origin


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _percentiles(values: Sequence[float]) -> dict:
    if not values:
        return {"n": 0}
    a = np.asarray(values, dtype=float)
    return {
        "n": int(a.size),
        "p50": round(float(np.percentile(a, 50)), 2),
        "p95": round(float(np.percentile(a, 95)), 2),
        "p99": round(float(np.percentile(a, 99)), 2),
        "mean": round(float(a.mean()), 2),
        "max": round(float(a.max()), 2),
    }


@contextmanager
def running_service(
    root: Path, *, cache_mode: str, cache_dir: Path | None = None, ready_timeout_s: float = 300
):
    """`finrag serve` in a child process on a free loopback port; yields (base URL, seconds to ready)."""
    port = free_port()
    cmd = [sys.executable, "-m", "finrag.serve", "--host", HOST, "--port", str(port)]
    cmd += ["--cache-mode", cache_mode] + (["--cache-dir", str(cache_dir)] if cache_dir else [])
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://{HOST}:{port}"
    try:
        ready = wait_ready(url, proc, ready_timeout_s)
        yield url, round(ready - t0, 2), proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


def wait_ready(url: str, proc: subprocess.Popen, timeout_s: float) -> float:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr else ""
            raise RuntimeError(f"finrag serve exited with {proc.returncode}: {err[-2000:]}")
        try:
            r = httpx.get(f"{url}/readyz", timeout=2)
            if r.status_code == 200:
                return time.perf_counter()
            if r.json().get("status") == "failed":
                raise RuntimeError(f"the service failed to load: {r.json().get('error')}")
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{url}/readyz not ready within {timeout_s:g} s")


def _memory_mb(pid: int) -> dict:
    """Resident and peak resident memory of the server process (Linux /proc), in MB."""
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out["rss" if key == "VmRSS" else "peak_rss"] = round(int(value.split()[0]) / 1024, 1)
    except OSError:
        pass
    return out


def _memo_counts(url: str) -> dict[str, float]:
    out = {"hit": 0.0, "miss": 0.0}
    for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines():
        for result in out:
            if line.startswith(f'finrag_answer_memo_total{{result="{result}"}}'):
                out[result] = float(line.split()[-1])
    return out


def _ask_each(client: httpx.Client, url: str, bodies: list[dict], desc: str) -> dict:
    """Ask each body once, in order: client latency and the server's per-stage times, every failure counted."""
    stages: dict[str, list[float]]
    total, stages, failures = [], {"retrieval": [], "generation": [], "judging": []}, []
    for body in tqdm(bodies, desc=desc, unit="question"):
        t0 = time.perf_counter()
        r = client.post(f"{url}/v1/answer", json=body)
        total.append((time.perf_counter() - t0) * 1000)
        if r.status_code != 200:
            failures.append({"status": r.status_code, "error": r.text[:300], "qid": body.get("qid")})
            continue
        for stage, ms in r.json()["timing_ms"].items():
            stages.setdefault(stage, []).append(ms)
    return {
        "requests": len(bodies),
        "failures": len(failures),
        "failure_examples": failures[:5],
        "latency_ms": _percentiles(total),
        "stage_ms": {k: _percentiles(v) for k, v in stages.items()},
    }


def _locust(
    url: str,
    users: int,
    duration_s: int,
    bodies_file: Path,
    seed: int,
    workdir: Path,
    user_class: str = "AskingUser",
) -> dict:
    """One headless locust run of one user class; its CSV's aggregated row, and per request name."""
    prefix = workdir / f"{user_class}-u{users}"
    cmd = [
        sys.executable, "-m", "locust", "-f", _locustfile(), user_class, "--headless",
        "--host", url, "-u", str(users), "-r", str(users), "-t", f"{duration_s}s", "--csv", str(prefix),
        "--only-summary", "--loglevel", "WARNING", "--exit-code-on-error", "0", "--stop-timeout", "5",
    ]  # fmt: skip
    env = {**os.environ, "FINRAG_LOAD_QUESTIONS": str(bodies_file), "FINRAG_LOAD_SEED": str(seed)}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=duration_s + 120)
    if done.returncode != 0:
        raise RuntimeError(f"locust failed ({done.returncode}): {done.stderr[-2000:]}")
    with open(f"{prefix}_stats.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    row = next(r for r in rows if r["Name"] == "Aggregated")
    by_name = {
        r["Name"]: {"requests": int(r["Request Count"]), "failures": int(r["Failure Count"])}
        for r in rows
        if r["Name"] != "Aggregated"
    }
    failures = []
    fail_file = Path(f"{prefix}_failures.csv")
    if fail_file.exists():
        with open(fail_file, newline="") as fh:
            failures = [
                {"error": r["Error"], "occurrences": int(r["Occurrences"])} for r in csv.DictReader(fh)
            ]
    n, nf = int(row["Request Count"]), int(row["Failure Count"])
    return {
        "users": users,
        "duration_s": duration_s,
        "requests": n,
        "failures": nf,
        "error_rate": round(nf / n, 6) if n else None,
        "requests_per_s": round(float(row["Requests/s"]), 1),
        "p50_ms": float(row["50%"]),
        "p95_ms": float(row["95%"]),
        "p99_ms": float(row["99%"]),
        "max_ms": round(float(row["Max Response Time"]), 1),
        "mean_ms": round(float(row["Average Response Time"]), 2),
        "mean_response_bytes": round(float(row["Average Content Size"])),
        "failure_kinds": failures,
        "by_name": by_name,
    }


def server_errors(run: dict) -> int:
    """Responses with a 5xx status in a locust run: its failures read "[kind: ]STATUS: message", wrapped by locust
    (e.g. "CatchResponseError('not JSON: 500: internal error')")."""
    return sum(
        f["occurrences"] for f in run["failure_kinds"] if re.search(r"\('(?:[^':]+: )?5\d\d: ", f["error"])
    )


def run_load_test(
    root: Path,
    *,
    users: Sequence[int] = (1, 8, 32),
    duration_s: int = 20,
    live_questions: int = 20,
    seed: int = 0,
    goal_rps: float = 260.0,
    goal_p99_ms: float = 100.0,
) -> dict:
    """See the module docstring. Returns the result (written by the serve_load stage)."""
    root = Path(root)
    out: dict = {
        "machine": {
            **machine(),
            "python": platform.python_version(),
            "load_average_before": [round(x, 2) for x in os.getloadavg()],
        },
        "server": "finrag serve: uvicorn, 1 process, 127.0.0.1; locust in a separate process on the same machine",
        "goal": {"requests_per_s": goal_rps, "p99_ms": goal_p99_ms, "users": max(users)},
    }
    with tempfile.TemporaryDirectory(prefix="finrag-load-") as tmp, httpx.Client(timeout=120) as client:
        work = Path(tmp)
        with running_service(root, cache_mode="replay") as (url, ready_s, pid):
            out["startup_s"] = ready_s
            system = client.get(f"{url}/v1/system").json()
            out["system"] = {k: system[k] for k in ("system", "setup", "retrieval", "backend", "frozen_k")}
            questions = client.get(f"{url}/v1/questions").json()["questions"]
            bodies = [{"question": q["question"], "qid": q["qid"]} for q in questions]
            out["first_visit"] = _ask_each(client, url, bodies, "first visit (cached answers)")
            bodies_file = work / "bodies.json"
            bodies_file.write_text(json.dumps(bodies))
            runs = []
            for u in users:
                before = _memo_counts(url)
                run = _locust(url, u, duration_s, bodies_file, seed, work)
                after = _memo_counts(url)
                hits, misses = after["hit"] - before["hit"], after["miss"] - before["miss"]
                run["memo_hit_share"] = round(hits / (hits + misses), 4) if hits + misses else None
                run["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
                runs.append(run)
                print(
                    f"cached answers, {u:>2} users: {run['requests_per_s']:.1f} req/s, p50 {run['p50_ms']:g} ms, "
                    f"p95 {run['p95_ms']:g} ms, p99 {run['p99_ms']:g} ms, {run['failures']} failures"
                )
            out["cached"] = runs
            # the mixed row: half good (cached) requests, half malformed, at the most users
            mixed = _locust(url, max(users), duration_s, bodies_file, seed, work, user_class="MixedUser")
            mixed["server_errors"] = server_errors(mixed)
            out["mixed"] = mixed
            print(
                f"mixed (half malformed), {mixed['users']} users: {mixed['requests_per_s']:.1f} req/s, "
                f"{mixed['server_errors']} 5xx, good {mixed['by_name'].get('good')}, "
                f"malformed {mixed['by_name'].get('malformed')}"
            )
            out["server_memory_mb"] = _memory_mb(pid)
        rng = np.random.default_rng(seed)
        fb = [q for q in questions if q["kind"] == "financebench"]
        pick = sorted(rng.choice(len(fb), size=min(live_questions, len(fb)), replace=False).tolist())
        live_bodies = [{"question": fb[i]["question"], "filter": True} for i in pick]
        with running_service(root, cache_mode="auto", cache_dir=work / "live_cache") as (url, _, _pid):
            live_system = client.get(f"{url}/v1/system").json()
            out["live"] = {
                "what": "questions not asked as evaluated (company + period filter on), empty response cache: "
                "search + one model call + judging each",
                "backend": live_system["backend"],
                "search": live_system["retrieval"],
                **_ask_each(client, url, live_bodies, "live answers"),
            }
    top = max(out["cached"], key=lambda r: r["users"])
    best = max(out["cached"], key=lambda r: r["requests_per_s"])
    out["summary"] = {
        "best_requests_per_s": best["requests_per_s"],
        "best_at_users": best["users"],
        "p99_ms_at_most_users": top["p99_ms"],
        "failures": sum(r["failures"] for r in out["cached"])
        + out["first_visit"]["failures"]
        + out["live"]["failures"],
        "meets_rps_goal": best["requests_per_s"] >= goal_rps,
        "meets_p99_goal": all(r["p99_ms"] < goal_p99_ms for r in out["cached"]),
        # the mixed row's goal (issue 56): no 5xx at all, and every good (already held) answer a 200
        "mixed_server_errors": out["mixed"]["server_errors"],
        "mixed_good_failures": (out["mixed"]["by_name"].get("good") or {}).get("failures", 0),
        "meets_mixed_goal": out["mixed"]["server_errors"] == 0
        and (out["mixed"]["by_name"].get("good") or {}).get("failures", 0) == 0,
    }
    out["machine"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def run_setup_time(root: Path, mirror: Path, *, question: str, cold_package_cache: bool = True) -> dict:
    """See the module docstring: seconds per step from `git clone` to the first answer of `finrag serve`.
    `cold_package_cache`: uv starts from an empty package cache (every wheel downloaded from the registry, torch
    copied from the local wheel folder), as on a machine that never installed the project."""
    root = Path(root)
    uv = shutil.which("uv") or "uv"
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    steps: dict[str, float] = {}  # in the order run (written as a list: the JSON writer sorts keys)
    with tempfile.TemporaryDirectory(prefix="finrag-setup-") as tmp:
        clone = Path(tmp) / "finrag"
        log = Path(tmp) / "setup.log"
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "FINRAG_LLM_MODE")}
        env.update(FINRAG_MIRROR=str(mirror), FINRAG_NO_MLFLOW="1")
        if cold_package_cache:
            env["UV_CACHE_DIR"] = str(Path(tmp) / "uv-cache")
        t0 = time.perf_counter()
        steps["git clone"] = timed_command(["git", "clone", "-q", str(root), str(clone)], Path(tmp), env, log)
        steps["uv sync --frozen"] = timed_command([uv, "sync", "--frozen", "-q"], clone, env, log)
        # the service judges with the study's judge: the trained verifier, trained here from the mirror
        stages = ["ingest", "questions", "chunk", "verifier_data", "verifier_train"]
        dvc = [str(clone / ".venv/bin/dvc"), "repro", "--single-item", *stages]
        steps[f"dvc repro {' '.join(stages)}"] = timed_command(dvc, clone, env, log)
        port = free_port()
        serve = [
            str(clone / ".venv/bin/python"),
            "-m",
            "finrag.serve",  # `finrag serve` without the command line's other commands
            "--host",
            HOST,
            "--port",
            str(port),
            "--cache-mode",
            "replay",
        ]
        t_serve = time.perf_counter()
        proc = subprocess.Popen(
            serve, cwd=clone, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        try:
            url = f"http://{HOST}:{port}"
            steps["finrag serve until ready"] = round(wait_ready(url, proc, 300) - t_serve, 1)
            t_ask = time.perf_counter()
            r = httpx.post(f"{url}/v1/answer", json={"question": question}, timeout=120)
            r.raise_for_status()
            steps["first answer"] = round(time.perf_counter() - t_ask, 2)
            first = r.json()
        finally:
            proc.terminate()
            proc.wait(20)
        total = round(time.perf_counter() - t0, 1)
    return {
        "commit": commit,
        "steps": [{"step": k, "seconds": v} for k, v in steps.items()],
        "total_s": total,
        "first_answer": {
            "qid": first["qid"],
            "source": first["source"],
            "groundedness": first["groundedness"],
        },
        "machine": machine(),
        "cold_package_cache": cold_package_cache,
        "notes": (
            "uv started from an empty package cache (wheels downloaded from the registry); "
            if cold_package_cache
            else "uv's package cache was warm (a machine that never installed these wheels also downloads them); "
        )
        + "the data mirror is local; no DVC release is restored (the service needs none: the frozen contexts, "
        "the selected system and the response cache are in git, the chunks are rebuilt from the mirror).",
    }
