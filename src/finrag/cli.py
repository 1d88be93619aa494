"""`finrag` command line: thin wrappers over the library, JSON on stdout, one clear line on stderr on error.

Every command prints JSON (one object, or one object per line for lists) on stdout. A user error (a missing
file, a bad option, a backend that cannot run here) exits with code 2 and ONE line on stderr, never a traceback;
`FINRAG_DEBUG=1` re-raises instead, for debugging. `replay` exits 1 when the cache does not replay every answer,
`report --check` exits 1 when the documents disagree with results/.

Paths read from params.yaml are relative to the repository root; paths given as options are used as given.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup

try:  # typer >= 0.2x vendors click as typer._click; its exceptions are not click's
    from typer._click import exceptions as _cx
except ImportError:  # pragma: no cover - older typer on top of click
    from click import exceptions as _cx  # type: ignore[no-redef]

JUDGE_CHOICES = ("numeric", "overlap", "llm", "llm_logprob", "combined", "ragas", "verifier", "study")
JUDGE_HELP = (
    f"one of {', '.join(JUDGE_CHOICES)}, or a calibrated run of params.yaml by name (llm_logprob_qwen1.5b)"
)
LABEL_FORMATS = ("findver", "attributionbench", "expertqa", "finrag")
DEFAULT_LLM_CACHE = "llm_cache"


class _OneLineErrors(TyperGroup):
    """Usage errors (a missing option, a bad value) as one line on stderr with exit code 2, not a help box."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        _quiet_logging()
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _cx.NoArgsIsHelpError as exc:
            exc.show()  # `finrag` alone: the help text, as before
            sys.exit(exc.exit_code)
        except _cx.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            typer.echo(f"finrag: {_one_line(exc.format_message())}{hint}", err=True)
            sys.exit(2)
        except _cx.ClickException as exc:
            typer.echo(f"finrag: {_one_line(exc.format_message())}", err=True)
            sys.exit(exc.exit_code)
        except typer.Abort:
            typer.echo("finrag: aborted", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


def _quiet_logging() -> None:
    """Library log lines (e.g. the anthropic backend's note on sampling) stay off stderr unless asked for with
    FINRAG_LOG_LEVEL=INFO (or WARNING, DEBUG), so an error stays one line; warnings.warn (torn cache lines) still
    shows. Only the level is touched when logging is unconfigured: no handler is installed behind the caller's back.
    """
    root = logging.getLogger()
    if root.handlers:
        return
    name = os.environ.get("FINRAG_LOG_LEVEL", "").upper()
    if name in logging.getLevelNamesMapping():
        logging.basicConfig(level=name, format="finrag: %(levelname)s %(name)s: %(message)s")
    else:
        root.setLevel(logging.ERROR)


app = typer.Typer(
    cls=_OneLineErrors,
    add_completion=False,
    no_args_is_help=True,
    help="finrag: right answers for the right reasons?",
)


# ------------------------------------------------------------------------------------------------ plumbing


def _one_line(text: str) -> str:
    lines = [" ".join(line.split()) for line in str(text).splitlines() if line.strip()]
    return lines[0] if lines else ""


def _fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"finrag: {_one_line(message)}", err=True)
    raise typer.Exit(code)


def _describe(exc: BaseException) -> str:
    """One line for an exception: KeyError without its quotes, OSError with its file, else str()."""
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return _one_line(str(exc)) or type(exc).__name__


def _user_errors() -> tuple[type[BaseException], ...]:
    from finrag.core.config import DataUnavailable
    from finrag.llm.errors import LLMError

    # LookupError covers KeyError (unknown registry name) and CacheMiss; ValueError covers pydantic's
    # ValidationError, read_jsonl's "file:line: malformed line", IngestError and CacheCorrupt.
    # RuntimeError: what libraries raise for their environment (a model absent from the local cache).
    return (DataUnavailable, LLMError, OSError, ValueError, LookupError, ImportError, RuntimeError)


@contextmanager
def _errors(what: str) -> Iterator[None]:
    """Turn a user error raised inside a command into one line on stderr and exit code 2."""
    try:
        yield
    except (typer.Exit, typer.Abort):  # both are RuntimeErrors: let them through
        raise
    except _user_errors() as exc:
        if os.environ.get("FINRAG_DEBUG"):
            raise
        _fail(f"{what}: {_describe(exc)}")


def _plain(obj: Any) -> Any:
    """JSON-able copy: pydantic models and dataclasses as dicts, numpy values as Python ones, NaN/inf as null."""
    from pydantic import BaseModel

    if isinstance(obj, BaseModel):
        return _plain(obj.model_dump(mode="json"))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _plain(dataclasses.asdict(obj))
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [_plain(v) for v in obj]
    if type(obj).__module__ == "numpy" and hasattr(obj, "tolist"):
        return _plain(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, Path):
        return str(obj)
    return obj


def _emit(obj) -> None:
    sys.stdout.write(json.dumps(_plain(obj), ensure_ascii=False, allow_nan=False) + "\n")


def _params(section: str, path: Path | None, required: bool = True) -> dict:
    from finrag.core.config import params

    try:
        return params(section, path=path)
    except KeyError:
        if required:
            raise
        return {}


def _from_params(value: str | Path) -> Path:
    """A path read from params.yaml: relative to the repository root."""
    from finrag.core.config import repo_root

    p = Path(value)
    return p if p.is_absolute() else repo_root() / p


def _need_file(path: Path, what: str, hint: str = "") -> Path:
    if not path.is_file():
        _fail(f"{what} not found: {path}" + (f" ({hint})" if hint else ""))
    return path


@contextmanager
def _no_hub_progress_bars() -> Iterator[None]:
    """HF_HUB_DISABLE_PROGRESS_BARS=1 while models load (unless the caller set it), restored afterwards."""
    key = "HF_HUB_DISABLE_PROGRESS_BARS"
    before = os.environ.get(key)
    os.environ.setdefault(key, "1")
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(key, None)


ParamsOpt = Annotated[
    Path | None, typer.Option("--params", help="params.yaml to read instead of the repository's")
]


# ------------------------------------------------------------------------------------------------ commands


@app.command()
def parse(path: Annotated[Path, typer.Argument(help="a PDF or an EDGAR HTML filing")]) -> None:
    """Print one JSON object per page: {"doc", "page", "text", "section"}.

    A partly damaged file (pages that lost text) is still printed, page by page, with one `warning:` line on
    stderr naming the damaged pages and why; exit code 0. An unreadable one: exit code 2 and one line.
    """
    from finrag.ingest.parse import parse_filing

    with _errors("parse"):
        pages = parse_filing(path)
    warning = pages.warning()
    if warning:
        typer.echo(f"warning: {path}: {warning}", err=True)
    for p in pages:
        _emit({"doc": p.doc_id, "page": p.page, "text": p.text, "section": p.section})


def _search_context(
    chunker: str, embedder: str, method: str, p: dict, chunks: Path, vectors: Path | None, own_files: bool
):
    """The setup's chunks and vectors: the pipeline's own files through the retrieve stages' loader
    (`load_search_context`), or the files --chunks / --embeddings name."""
    import numpy as np

    from finrag.core.contracts import Chunk
    from finrag.core.io import read_jsonl
    from finrag.retrieve.methods import base_method, build_search_context, load_search_context, load_vectors

    if own_files:
        return load_search_context(chunker, embedder, p, methods=[method])
    chunk_list = read_jsonl(chunks, Chunk)
    matrix = None
    if base_method(method) != "bm25":
        matrix = np.load(vectors, allow_pickle=False) if vectors else load_vectors(chunker, embedder, p)
    return build_search_context(chunk_list, matrix, embedder, p, methods=[method])


@app.command()
def search(
    question: Annotated[str, typer.Argument(help="the question to search for")],
    setup: Annotated[
        str,
        typer.Option("--setup", help="CHUNKER/EMBEDDER/METHOD, e.g. page/minilm/hybrid (bm25: any EMBEDDER)"),
    ],
    k: Annotated[int, typer.Option("-k", "--top-k", min=1, help="hits to print")] = 5,
    filter_: Annotated[
        bool, typer.Option("--filter", help="only the filings of the company (and year) the question names")
    ] = False,
    chunks: Annotated[
        Path | None, typer.Option(help="chunks JSONL (default: <retrieve.chunks_dir>/CHUNKER.jsonl)")
    ] = None,
    embeddings: Annotated[
        Path | None,
        typer.Option(help="chunk vectors .npy (default: <retrieve.embeddings_dir>/CHUNKER/EMBEDDER.npy)"),
    ] = None,
    documents: Annotated[
        Path | None, typer.Option(help="documents JSONL for --filter (default: retrieve_filtered.documents)")
    ] = None,
    params_file: ParamsOpt = None,
) -> None:
    """Print the top-k chunks, one JSON object per hit: {"rank", "doc", "pages", "score", "chunk_id", "text"}."""
    from finrag.core.contracts import Document, Question
    from finrag.core.io import read_jsonl
    from finrag.retrieve.search import SEARCH_METHODS, Tokenizer
    from finrag.retrieve.search import search as run_search

    parts = setup.split("/")
    if len(parts) != 3 or not all(parts):
        _fail(f"search: --setup must be CHUNKER/EMBEDDER/METHOD (e.g. page/minilm/bm25), not '{setup}'")
    chunker, embedder, method = parts
    if method not in SEARCH_METHODS:
        _fail(f"search: unknown search method '{method}' (known: {', '.join(SEARCH_METHODS.names())})")
    with _errors("search"):
        p = _params("retrieve", params_file)
        if not Tokenizer(p.get("bm25", {}).get("language", "en"))(question):  # what BM25 can match
            _fail("search: the query has no searchable words (empty, punctuation or only stop words)")
        # the retrieve stages' paths, from the repository root wherever the command runs
        p = {
            **p,
            "chunks_dir": str(_from_params(p["chunks_dir"])),
            "embeddings_dir": str(_from_params(p["embeddings_dir"])),
        }
        chunks_path = _need_file(
            chunks or Path(p["chunks_dir"]) / f"{chunker}.jsonl", "chunks file", "run `dvc repro chunk`"
        )
        if filter_:
            if documents is None:
                doc_rel = _params("retrieve_filtered", params_file, required=False).get(
                    "documents", "data/corpus/documents.jsonl"
                )
                documents = _from_params(doc_rel)
            _need_file(documents, "documents file", "run `dvc repro ingest`")
            docs = read_jsonl(documents, Document)
        if method == "hybrid_rerank" and _from_params(p["reranker"]).exists():
            p = {**p, "reranker": str(_from_params(p["reranker"]))}  # a params path, from the repository root
        try:
            with _no_hub_progress_bars():  # model loading bars would break the one-line error promise
                ctx = _search_context(
                    chunker,
                    embedder,
                    method,
                    p,
                    chunks_path,
                    embeddings,
                    own_files=chunks is None and embeddings is None,
                )
        except ImportError as exc:
            _fail(f"search: method '{method}' needs a module that is not available here ({_describe(exc)})")
        except (OSError, ValueError, RuntimeError) as exc:
            if method == "hybrid_rerank" and not Path(p["reranker"]).exists():
                _fail(
                    f"search: re-ranker '{p['reranker']}' not available ({_describe(exc)}): run `dvc repro reranker`"
                )
            raise
        allowed = None
        if filter_:
            allowed = ctx.filtered_indices(Question(qid="cli", question=question), docs)
        hits = run_search(ctx, method, question, k, allowed)
    for rank, (i, score) in enumerate(hits, 1):
        c = ctx.chunks[i]
        _emit(
            {"rank": rank, "doc": c.doc_id, "pages": c.pages, "score": score, "chunk_id": c.chunk_id,
             "text": c.text}
        )  # fmt: skip


def _figures(figs) -> list[dict]:
    return [
        {"raw": f.raw, "value": f.value, "percent": f.is_ratio_unit, "currency": f.currency} for f in figs
    ]


@app.command()
def grade(
    gold: Annotated[str, typer.Option(help="the gold answer")],
    answer: Annotated[str, typer.Option(help="the model's answer")],
    question: Annotated[str, typer.Option(help="the question (gives the default scale)")] = "",
) -> None:
    """Grade one answer against its gold: {"verdict", "method", "unit_mismatch", "gold_figures", ...}."""
    from finrag.score.grader import grade as run_grade

    with _errors("grade"):
        res = run_grade(gold, answer, question)
    out = res.to_dict()
    out["gold_figures"] = _figures(res.gold_figures)
    out["answer_figures"] = _figures(res.answer_figures)
    _emit(out)


BackendOpt = Annotated[str, typer.Option("--backend", help="LLM backend for the llm / combined judges")]
CacheModeOpt = Annotated[
    str, typer.Option("--cache-mode", help="replay | auto | record (see finrag.llm.cache)")
]
CacheDirOpt = Annotated[
    Path | None,
    typer.Option("--cache-dir", help="response cache (default: params llm.cache_dir or llm_cache)"),
]


def make_cli_llm(
    backend: str, cache_mode: str, cache_dir: Path | None, params_file: Path | None, stage: str = "judge"
):
    """A CachedLLM over `llm.backends.<backend>` settings of params.yaml (all optional)."""
    from finrag.llm.backends.base import make_backend
    from finrag.llm.cache import MODES, CachedLLM

    if cache_mode not in MODES:
        _fail(f"--cache-mode must be one of {', '.join(MODES)}, not '{cache_mode}'")
    cfg = _params("llm", params_file, required=False)
    kwargs = dict((cfg.get("backends") or {}).get(backend) or {})
    where = cache_dir if cache_dir is not None else _from_params(cfg.get("cache_dir", DEFAULT_LLM_CACHE))
    try:
        bk = make_backend(backend, **kwargs)
    except TypeError as exc:  # a params key the backend does not take
        _fail(f"llm backend '{backend}': bad settings in params llm.backends.{backend}: {_describe(exc)}")
    return CachedLLM(bk, where, mode=cache_mode, stage=stage)


def make_cli_judge(
    name: str, backend: str, cache_mode: str, cache_dir: Path | None, params_file: Path | None
):
    """A judge by name with the agreement stage's judge_params; llm, combined and ragas get a CachedLLM."""
    from finrag.score.judges.base import JUDGES, make_judge

    agreement = _params("agreement", params_file, required=False)
    calibrated = _calibrated_runs(agreement)
    if name == "llm_logprob" or name in calibrated:
        return _calibrated_llm_judge(agreement, name, cache_mode, cache_dir)
    if name not in JUDGES:
        _fail(f"unknown judge '{name}' (known: {', '.join(dict.fromkeys([*JUDGES.names(), *calibrated]))})")
    jp = dict((agreement.get("judge_params") or {}).get(name) or {})
    needs_llm = name in ("llm", "combined", "ragas")
    llm = make_cli_llm(backend, cache_mode, cache_dir, params_file) if needs_llm else None
    return make_judge(name, llm=llm, **jp)


def _calibrated_runs(agreement: dict) -> dict[str, dict]:
    """The agreement stage's calibrated LLM judges (runs of judge llm_logprob), by run name, in params order."""
    runs = ((agreement.get("model_judges") or {}).get("runs") or {}).items()
    return {n: r for n, r in runs if r.get("judge") == "llm_logprob"}


def _calibrated_llm_judge(agreement: dict, name: str, cache_mode: str, cache_dir: Path | None):
    """A calibrated LLM judge exactly as the agreement stage ran it (its model block, with log-probabilities on,
    and its prompt), cut at the threshold that stage fitted on all its dev claims. `name`: a run's name, or
    llm_logprob for the first such run."""
    from finrag.core.io import read_json
    from finrag.llm.backends.base import backend_from_spec
    from finrag.llm.cache import MODES, CachedLLM
    from finrag.trust.judge_agreement import model_judge

    if cache_mode not in MODES:
        _fail(f"--cache-mode must be one of {', '.join(MODES)}, not '{cache_mode}'")
    mj = agreement.get("model_judges") or {}
    runs = _calibrated_runs(agreement)
    if not runs:
        _fail("llm_logprob: params.yaml agreement.model_judges.runs has no llm_logprob run to take it from")
    name = name if name in runs else next(iter(runs))
    run = runs[name]
    results = _from_params(agreement.get("metrics_out", "results/metrics/judge_agreement.json"))
    fitted = (read_json(_need_file(results, "agreement results", "run `dvc repro agreement`")).get(
        "model_judges", {}).get("runs", {}).get(name, {}).get("calibration") or {}).get("threshold_all")  # fmt: skip
    if fitted is None:
        _fail(f"llm_logprob: {results} holds no fitted threshold for '{name}': run `dvc repro agreement`")
    backend = backend_from_spec((mj.get("backends") or {}).get(run["backend"]), default=run["backend"])
    where = cache_dir if cache_dir is not None else _from_params(mj.get("cache_dir", DEFAULT_LLM_CACHE))
    llm = CachedLLM(backend, where, mode=cache_mode, stage="judge")
    return model_judge(run, llm, threshold=fitted)


@app.command()
def judge(
    claim: Annotated[str, typer.Option(help="the claim to check")],
    passage: Annotated[list[str], typer.Option(help="a passage the claim may rest on (repeat for more)")],
    judge_name: Annotated[str, typer.Option("--judge", help=JUDGE_HELP)] = "numeric",
    backend: BackendOpt = "llamacpp",
    cache_mode: CacheModeOpt = "auto",
    cache_dir: CacheDirOpt = None,
    params_file: ParamsOpt = None,
) -> None:
    """Is the claim supported by the passages? {"verdict", "evidence", "judge", "detail"}."""
    with _errors("judge"):
        j = make_cli_judge(judge_name, backend, cache_mode, cache_dir, params_file)
        v = j.judge(claim, list(passage), claim_id="cli")
    _emit({"verdict": v.verdict, "evidence": v.evidence, "judge": v.judge, "detail": v.detail})


# The very loader code the agreement stage runs reads the one file given (its `file=`), so every error and
# warning names the user's path.
def load_labels_file(path: Path, fmt: str):
    """One benchmark's labelled claims from one file in that benchmark's format -> humanlabels.Loaded."""
    from finrag.ingest import human_claims as hl

    try:
        return hl.LOADERS[fmt](file=path)
    except (KeyError, TypeError, AttributeError) as exc:  # a record of another shape
        raise ValueError(f"{path}: not in the {fmt} format (a record lacks {_describe(exc)!r})") from None


@app.command()
def agreement(
    labels: Annotated[Path, typer.Option(help="a JSONL file of human-labelled claims")],
    fmt: Annotated[str, typer.Option("--format", help=f"one of {', '.join(LABEL_FORMATS)}")],
    judge_name: Annotated[str, typer.Option("--judge", help=JUDGE_HELP)] = "numeric",
    sample: Annotated[
        int | None, typer.Option(min=1, help="judge a stratified sample of this many items (default: all)")
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="sampling and bootstrap seed (default: agreement.seed)")
    ] = None,
    backend: BackendOpt = "llamacpp",
    cache_mode: CacheModeOpt = "auto",
    cache_dir: CacheDirOpt = None,
    params_file: ParamsOpt = None,
) -> None:
    """Judge every labelled claim; print agreement with the humans (binary supported vs not): n, kappa, kappa_ci,
    balanced_accuracy, raw_agreement, confusion_matrix, plus three_class / answer_level where they apply."""
    from finrag.core.stats import DEFAULT_SEED
    from finrag.ingest.human_claims import sample_stratified
    from finrag.trust.judge_agreement import (
        GROUP_SAMPLED,
        evaluate_judge_on,
        replayable_items,
        sample_groups,
    )

    if fmt not in LABEL_FORMATS:
        _fail(f"agreement: --format must be one of {', '.join(LABEL_FORMATS)}, not '{fmt}'")
    with _errors("agreement"):
        _need_file(labels, "labels file")
        if seed is None:
            seed = int(_params("agreement", params_file, required=False).get("seed", DEFAULT_SEED))
        loaded = load_labels_file(labels, fmt)
        items = loaded.items
        if not items:
            _fail(
                f"agreement: no usable {fmt} items in {labels} (read {loaded.n_source} records, "
                f"excluded {loaded.excluded or 'none'})"
            )
        if sample is not None and sample < len(items):
            pick = sample_groups if fmt in GROUP_SAMPLED else sample_stratified
            items = pick(items, sample, seed)
        j = make_cli_judge(judge_name, backend, cache_mode, cache_dir, params_file)
        needs_call: list[str] = []
        one_call_per_claim = getattr(j, "batch_size", 1) == 1 and getattr(j, "llm", None) is not None
        if cache_mode == "replay" and one_call_per_claim:
            items, needs_call = replayable_items(items, j)  # judge what the cache holds; name the rest
            if not items:
                _fail(
                    f"agreement: none of the {len(needs_call)} claims is in the response cache; each needs a "
                    f"model call (first: {needs_call[0]}): run with --cache-mode auto"
                )
        with (
            warnings.catch_warnings()
        ):  # sklearn's notes on undefined kappa / absent classes: reported as null
            warnings.filterwarnings("ignore", category=UserWarning, module=r"sklearn\.")
            res = evaluate_judge_on(items, j, seed=seed, progress=False)
    bench = res["benchmarks"][fmt]
    out = {"benchmark": fmt, "judge": res["judge"], **bench["binary"]}
    out["human_labels"], out["judge_labels"] = bench["human_labels"], bench["judge_labels"]
    for extra in ("three_class", "answer_level"):
        if extra in bench:
            out[extra] = bench[extra]
    out["loaded"] = loaded.summary()
    if needs_call:  # replay mode: the figures above are of the replayed claims only
        out["needs_model_call"] = {"n": len(needs_call), "item_ids": needs_call}
    _emit(out)


@app.command()
def replay(
    answers: Annotated[
        list[Path] | None, typer.Argument(help="answer JSONL files (with cache_key); optional with --verify")
    ] = None,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="first check the WHOLE cache: every shard parses, keys match requests, responses match their "
            "checksums, no key stored twice with different responses; every problem as file:line: reason",
        ),
    ] = False,
    cache_dir: CacheDirOpt = None,
    params_file: ParamsOpt = None,
) -> None:
    """Check every answer replays from the response cache with zero model calls; exit 1 when one does not.

    With --verify, check the whole cache first (alone: just that): a summary on stdout, and exit 1 with every
    problem on stderr as `file:line: reason` when there is one."""
    from finrag.llm.cache import verify_cache, verify_replay

    answers = list(answers or [])
    summary: dict | None = None
    if not answers and not verify:
        _fail(
            "replay: Missing argument 'ANSWERS...': give answer files, or --verify to check the whole cache"
        )
    with _errors("replay"):
        if cache_dir is None:
            cache_dir = _from_params(
                _params("llm", params_file, required=False).get("cache_dir", DEFAULT_LLM_CACHE)
            )
        if not cache_dir.is_dir():
            _fail(f"replay: cache directory not found: {cache_dir}")
        for a in answers:
            _need_file(a, "answers file")
        if verify:
            check = verify_cache(cache_dir)
            summary = {
                "cache_dir": str(cache_dir),
                "entries": check["entries"],
                "shards": check["shards"],
                "lines": check["lines"],
                "duplicates": check["duplicates"],
                "torn": len(check["torn"]),
                "problems": len(check["problems"]),
                "ok": check["ok"],
            }
            for msg in check["torn"]:  # tolerated, as when loading: said, never silent
                typer.echo(f"{msg} (tolerated)", err=True)
            if not check["ok"]:
                _emit(summary)
                for msg in check["problems"]:
                    typer.echo(msg, err=True)
                typer.echo(
                    f"finrag: replay --verify: {len(check['problems'])} problems in {cache_dir} "
                    f"({check['shards']} shards)",
                    err=True,
                )
                raise typer.Exit(1)
            if not answers:
                _emit(summary)
                return
        res = verify_replay(cache_dir, answers)
    _emit(res if summary is None else {**res, "ok": res["ok"] and summary["ok"], "cache": summary})
    if not res["ok"]:
        typer.echo(
            f"finrag: replay: {len(res['missing'])} missing and {len(res['mismatched'])} mismatched of "
            f"{res['n_answers']} answers",
            err=True,
        )
        raise typer.Exit(1)


@app.command()
def progress(
    family: Annotated[
        list[str] | None, typer.Option(help="generation families (default: all in params.yaml)")
    ] = None,
    params_file: ParamsOpt = None,
) -> None:
    """How many calls of each generation run are recorded in the response cache (no model is loaded or called)."""
    from finrag.core.contracts import Question
    from finrag.core.io import read_jsonl
    from finrag.generate.run import (
        backend_settings,
        plan_runs,
        recording_progress,
        seconds_left,
        select_families,
    )
    from finrag.llm.backends.base import make_backend
    from finrag.llm.cache import ResponseCache
    from finrag.retrieve.contexts import load_frozen_contexts

    with _errors("progress"):
        p = _params("generate", params_file)
        fams = select_families(p, family or list(p["families"]))
        _, contexts = load_frozen_contexts(
            _need_file(_from_params(p["contexts"]), "contexts file", "run the contexts stage"),
            _from_params(p["chunks_dir"]),
        )
        available = [q for q in read_jsonl(_from_params(p["questions"]), Question) if q.available]
        cache = ResponseCache(_from_params(p["cache_dir"]))  # read once for every family
        out: dict = {}
        for name, fam in fams.items():
            backend = make_backend(
                fam["backend"], **backend_settings(p, fam["backend"], fam.get("backend_params"))
            )
            questions, specs = plan_runs(p, {name: fam}, available, contexts, _from_params(p["chunks_dir"]))
            runs = recording_progress(questions, contexts, backend.identity(), cache, specs, p["decoding"])
            out[name] = {
                "calls": sum(r["calls"] for r in runs.values()),
                "recorded": sum(r["recorded"] for r in runs.values()),
                "model_seconds": round(sum(r["model_seconds"] for r in runs.values()), 1),
                "estimated_model_seconds_left": seconds_left(runs),
                "runs": runs,
            }
    _emit(out)


@app.command()
def label(
    answers: Annotated[Path, typer.Option(help="answers JSONL to label")],
    questions: Annotated[Path | None, typer.Option(help="questions JSONL (gold answers shown)")] = None,
    labels_dir: Annotated[
        Path, typer.Option(help="where labels are written (JSONL, one file per labeller)")
    ] = Path("labels"),
    host: Annotated[
        str, typer.Option(help="address to listen on; beyond loopback needs FINRAG_LABEL_TOKEN")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="0 = any free port")] = 8765,
    labeller: Annotated[str | None, typer.Option(help="your name, stored with each label")] = None,
) -> None:
    """Serve the claim-labelling page (finrag.trust.labelling) until Ctrl-C. Bound beyond loopback, every request must
    present the token in FINRAG_LABEL_TOKEN (open the page as /?token=...)."""
    _need_file(answers, "answers file")
    if questions is not None:
        _need_file(questions, "questions file")
    try:
        from finrag.trust.labelling import serve
    except ImportError as exc:
        _fail(f"label: the labelling page is not available ({_describe(exc)})")
    kwargs: dict[str, Any] = {"labeller": labeller} if labeller else {}
    with _errors("label"):
        serve(answers, labels_dir, host=host, port=port, questions_path=questions, **kwargs)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="address (default: serve.host, 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option(min=0, max=65535, help="port (default: serve.port)")] = None,
    cache_mode: Annotated[
        str | None, typer.Option("--cache-mode", help="auto (record live calls) | replay (409 on a miss)")
    ] = None,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="response cache (default: serve.cache_dir, llm_cache)")
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn's log level")] = "warning",
) -> None:
    """Serve the selected system (finrag.serve): POST /v1/answer, the page at /, /healthz, /readyz, /metrics.
    Beyond loopback, set FINRAG_API_KEYS (comma-separated keys; there is no login otherwise)."""
    from finrag.serve.app import run_server
    from finrag.serve.system import ServeParams

    with _errors("serve"):
        sp = ServeParams.model_validate(_params("serve", None, required=False) or {})
    run_server(host, port, cache_mode, None if cache_dir is None else str(cache_dir), log_level, sp,
               say=lambda msg: typer.echo(msg, err=True))  # fmt: skip


@app.command()
def report(
    check: Annotated[bool, typer.Option("--check", help="fail if documents disagree with results/")] = False,
):
    """Render README.md / TECHNICAL_REPORT.md sections from results/ (or check them)."""
    from finrag.core.config import repo_root
    from finrag.report.render import RenderError, run

    try:
        results = run(repo_root(), check=check)
    except RenderError as exc:
        _fail(f"report: {exc}", code=1)
    bad = [r for r in results if not r.ok]
    for r in bad:
        typer.echo(r.diff or r.document, err=True)
    if bad:
        _fail(
            "report check failed: " + ", ".join(r.document for r in bad) + " disagree with results/", code=1
        )
    typer.echo("report: " + ("documents match results/" if check else "rendered"), err=True)


@app.command()
def verify(
    params_file: ParamsOpt = None,
) -> None:
    """Re-execute every stage that does not need the embedding matrices (replay_time.stages: `dvc repro --force
    --single-item`, one at a time, zero model calls), then fail if results/ or dvc.lock changed by one byte."""
    import shutil

    from finrag.core.config import mirror_dir, repo_root
    from finrag.core.proc import CommandFailed
    from finrag.release.replay import changed_files, replay_env, rerun_stages

    root = repo_root()
    stages = list(_params("replay_time", params_file)["stages"])
    dvc = shutil.which("dvc") or "dvc"
    log = root / ".dvc" / "tmp" / "verify.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("", encoding="utf-8")
    t0 = time.perf_counter()
    try:
        rerun_stages(dvc, stages, root, replay_env(mirror_dir()), log, echo=lambda m: typer.echo(m, err=True))
    except CommandFailed as exc:
        _fail(f"verify: {exc}", code=1)
    changed = changed_files(root)
    took = round(time.perf_counter() - t0, 1)
    if changed:
        _fail(f"verify: {len(stages)} stages re-executed in {took} s changed {', '.join(changed)}", code=1)
    typer.echo(
        f"verify: {len(stages)} stages re-executed in {took} s; results/ and dvc.lock unchanged", err=True
    )


# ------------------------------------------------------------------------------------------------ data

data_app = typer.Typer(
    no_args_is_help=True, help="the study's input files: manifest (data/inputs.csv), status, fetch"
)
app.add_typer(data_app, name="data")


@data_app.command("status")
def data_status(
    only: Annotated[
        list[str] | None, typer.Option("--only", help="a kind, role or path glob (repeatable)")
    ] = None,
    root: Annotated[
        Path | None, typer.Option(help="mirror to check (default: FINRAG_MIRROR, else data/mirror)")
    ] = None,
) -> None:
    """Which input files are present and verified (sha256), missing, partial or corrupt."""
    from finrag.ingest.fetch import fetch_destination, input_files, read_manifest, select, status

    with _errors("data status"):
        files = select(input_files(read_manifest()), only or ())
        where = root or fetch_destination()
        st = status(files, where)
    _emit({"root": str(where), **{k: len(v) for k, v in st.items()},
           **{f"{k}_files": v for k, v in st.items() if k != "ok" and v}})  # fmt: skip


@data_app.command("fetch")
def data_fetch(
    only: Annotated[
        list[str] | None, typer.Option("--only", help="a kind, role or path glob (repeatable)")
    ] = None,
    dest: Annotated[
        Path | None, typer.Option(help="mirror folder (default: FINRAG_MIRROR, else data/mirror)")
    ] = None,
    allow_unverified: Annotated[
        bool,
        typer.Option(
            "--allow-unverified", help="also fetch files the manifest has no sha256 for (role absent)"
        ),
    ] = False,
) -> None:
    """Download the input files `dest` lacks: resumable, retried, rate-limited, each checked against its sha256.
    sec.gov URLs need FINRAG_SEC_USER_AGENT. Exit 1 when a file could not be fetched or did not verify."""
    from finrag.ingest.fetch import (
        Fetcher,
        fetch_destination,
        input_files,
        read_manifest,
        select,
        write_mirror_manifest,
    )

    with _errors("data fetch"):
        rows = read_manifest()
        files = select(input_files(rows), only or ())
        where = dest or fetch_destination()
        with Fetcher(where) as fetcher:
            report = fetcher.fetch(files, allow_unverified=allow_unverified)
        if not report.failed:
            write_mirror_manifest(rows, where)
    _emit({"dest": str(where), **report.summary()})
    if report.failed:
        _fail(f"data fetch: {len(report.failed)} file(s) not fetched; first: {next(iter(report.failed.values()))}",
              code=1)  # fmt: skip


@data_app.command("manifest")
def data_manifest(
    mirror: Annotated[
        Path | None, typer.Option(help="mirror whose MANIFEST.csv to read (default: FINRAG_MIRROR)")
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="fail if data/inputs.csv differs from the rebuilt one")
    ] = False,
) -> None:
    """Rebuild data/inputs.csv from a mirror's MANIFEST.csv and the FinanceBench questions (or check it)."""
    from finrag.core.config import mirror_dir
    from finrag.ingest.fetch import build_manifest, manifest_path, manifest_text, write_manifest

    with _errors("data manifest"):
        rows = build_manifest(mirror or mirror_dir(required=True))
        if check:
            if manifest_path().read_text(encoding="utf-8") != manifest_text(rows):
                _fail(
                    "data manifest: data/inputs.csv differs from the mirror's (run `finrag data manifest`)",
                    code=1,
                )
        else:
            write_manifest(rows, manifest_path())
    _emit({"rows": len(rows), "study": sum(r["role"] == "study" for r in rows),
           "absent": sum(r["role"] == "absent" for r in rows), "checked": check})  # fmt: skip


# ------------------------------------------------------------------------------------------------ release

release_app = typer.Typer(no_args_is_help=True, help="the study's DVC outputs as one archive: pack, restore")
app.add_typer(release_app, name="release")


@release_app.command("pack")
def release_pack(
    out: Annotated[Path, typer.Argument(help="the archive to write (a .tar)")],
    require_all: Annotated[
        bool, typer.Option("--require-all", help="refuse when an output is not in this machine's DVC cache")
    ] = False,
) -> None:
    """Write the DVC cache objects of every output dvc.lock records (and git does not track) + release.json."""
    from finrag.core.config import repo_root
    from finrag.release.bundle import ReleaseError, pack

    try:
        m = pack(repo_root(), out, require_all=require_all)
    except ReleaseError as exc:
        _fail(f"release pack: {exc}")
    _emit({"archive": str(out), "outputs": len(m["outputs"]), "objects": len(m["objects"]), "bytes": m["bytes"],
           "missing": m["missing"]})  # fmt: skip
    if m["missing"]:
        typer.echo(f"release pack: {len(m['missing'])} output(s) not in this machine's DVC cache, not in the "
                   f"archive (first: {m['missing'][0]})", err=True)  # fmt: skip


@release_app.command("restore")
def release_restore(
    archive: Annotated[Path, typer.Argument(help="a release archive written by `finrag release pack`")],
    no_checkout: Annotated[bool, typer.Option("--no-checkout", help="fill the DVC cache only")] = False,
) -> None:
    """Check every object of the archive against its md5, put it in the DVC cache, and `dvc checkout` the outputs."""
    from finrag.core.config import repo_root
    from finrag.release.bundle import ReleaseError, restore

    try:
        r = restore(repo_root(), archive, checkout=not no_checkout)
    except (ReleaseError, OSError) as exc:
        _fail(f"release restore: {_describe(exc)}")
    _emit(r)


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
