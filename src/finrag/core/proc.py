"""One timed external command, its output appended to a log: what the setup-time and replay-time stages measure."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path


class CommandFailed(RuntimeError):
    """A timed command exited non-zero. The message names it and ends with the log's last lines."""


def timed_command(cmd: list[str], cwd: Path, env: dict, log: Path) -> float:
    """Run `cmd` in `cwd` with `env`, stdout and stderr appended to `log`; its wall seconds (0.1 s)."""
    t0 = time.perf_counter()
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"$ {' '.join(cmd)}\n")
        fh.flush()
        done = subprocess.run(cmd, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
        raise CommandFailed(f"{' '.join(cmd)} failed (exit {done.returncode}); see {log}: {' | '.join(tail)}")
    return round(time.perf_counter() - t0, 1)
