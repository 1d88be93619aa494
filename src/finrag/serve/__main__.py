"""`python -m finrag.serve [--host H] [--port P] [--cache-mode M] [--cache-dir D] [--log-level L]`: the same
server as `finrag serve`, started without the command line's other commands (the load and setup timings use it,
so their code deps are the service's own)."""

from __future__ import annotations

import argparse
import sys

from finrag.core.config import params
from finrag.serve.app import run_server
from finrag.serve.params import ServeParams


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m finrag.serve", description=__doc__.splitlines()[0])
    ap.add_argument("--host")
    ap.add_argument("--port", type=int)
    ap.add_argument("--cache-mode", choices=["auto", "replay", "record"])
    ap.add_argument("--cache-dir")
    ap.add_argument("--log-level", default="warning")
    a = ap.parse_args()
    sp = ServeParams.model_validate(params("serve") if "serve" in params() else {})
    run_server(
        a.host, a.port, a.cache_mode, a.cache_dir, a.log_level, sp, say=lambda m: print(m, file=sys.stderr)
    )


if __name__ == "__main__":
    main()
