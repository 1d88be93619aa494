"""Benchmark the local model: a default llama-cpp-python loop vs finrag's optimised path.

Six calls (3 questions x 2 prompt styles, 5 passages each) with the packaged Qwen2.5-Coder-0.5B Q4_K_M GGUF:

  default    Llama(model_path, n_ctx) with every other setting left at its default (but use_extra_bufts off, which
             this machine needs to run at all), calls in the order a plain
             script nests them (for style: for question), so consecutive prompts share only the system prompt.
  optimised  finrag's LlamaCppBackend (n_threads = n_threads_batch = --threads, n_batch 512), calls ordered question ->
             style so the 2nd style of a question reuses system + passages from the KV cache (prompts.py).

Prints prompt tokens/s (tokens actually evaluated, and 'effective': all prompt tokens / prompt time), generated
tokens/s and calls/hour, from llama.cpp's own perf counters. Passages come from FinanceBench evidence pages when
the data mirror is present (FINRAG_MIRROR), else from built-in filing-like text.

    .venv/bin/python benchmarks/bench_llm.py [--questions 3] [--max-tokens 48]
"""

from __future__ import annotations

import argparse
import ast
import json
import platform
import time

from finrag.core.config import mirror_dir
from finrag.llm.backends.llamacpp import LlamaCppBackend
from finrag.llm.local_model import import_llama_cpp, model_params_override, packaged_gguf
from finrag.llm.prompts.render import render

STYLES = ("plain", "decline")

FALLBACK = [
    (
        "What was the FY2018 capital expenditure (in USD millions) of the company?",
        "Cash Flows from Investing Activities: Purchases of property, plant and equipment (PP&E) (1,577) (1,373) "
        "(1,420). Proceeds from sale of PP&E and other assets 262 49 58. Acquisitions, net of cash acquired 13 "
        "(2,023) (16). Purchases of marketable securities and investments (1,828) (2,152) (1,410). Proceeds from "
        "maturities and sale of marketable securities and investments 2,497 1,354 1,247. " * 3,
    ),
    (
        "What was the gross margin percentage for fiscal 2022?",
        "Net sales were $32,765 million, up 3.5 percent. Cost of sales was $17,102 million. Gross margin was "
        "47.8 percent of net sales compared with 48.0 percent in the prior year, reflecting higher raw material "
        "and logistics costs partially offset by selling price increases and productivity. " * 4,
    ),
    (
        "How much cash did the company return to shareholders through dividends in 2019?",
        "In 2019 the Company paid dividends of $3.3 billion and repurchased $1.2 billion of its common stock. "
        "Cash and cash equivalents were $2.4 billion at year end. Total debt was $20.3 billion. Operating cash "
        "flow was $7.1 billion, and free cash flow conversion was 105 percent. " * 4,
    ),
]


def _chunks(text: str, n: int = 5, words: int = 110) -> list[str]:
    """n consecutive passages of up to `words` words (a page cut like a fixed-size chunker would)."""
    toks = text.split()
    size = max(20, min(words, len(toks) // n))
    return [" ".join(toks[i * size : (i + 1) * size]) for i in range(n) if toks[i * size : (i + 1) * size]]


def load_questions(k: int, words: int = 110) -> list[tuple[str, list[str]]]:
    """(question, 5 passage texts) from FinanceBench evidence pages, or the built-in fallback."""
    mirror = mirror_dir()
    out: list[tuple[str, list[str]]] = []
    if mirror is not None:
        path = mirror / "financebench" / "financebench_open_source.jsonl"
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                rec = json.loads(line)
                ev = rec.get("evidence") or []
                ev = ast.literal_eval(ev) if isinstance(ev, str) else ev
                page = " ".join(
                    e.get("evidence_text_full_page", "") or e.get("evidence_text", "") for e in ev
                )
                if len(page.split()) >= 300:
                    out.append((rec["question"], _chunks(page, words=words)))
                if len(out) == k:
                    return out
    return [(q, _chunks(t, words=words)) for q, t in FALLBACK][:k]


def build_calls(k: int, words: int = 110) -> list[tuple[int, str, list[dict]]]:
    calls = []
    for qi, (question, texts) in enumerate(load_questions(k, words)):
        passages = [{"n": i + 1, "text": t, "doc_id": f"doc{qi}", "pages": [i]} for i, t in enumerate(texts)]
        for style in STYLES:
            calls.append((qi, style, render(style, question, passages)[0]))
    return calls


def _perf(llama_cpp, llm) -> tuple[float, int, float, int]:
    d = llama_cpp.llama_perf_context(llm._ctx.ctx)
    return d.t_p_eval_ms, d.n_p_eval, d.t_eval_ms, d.n_eval


def run(llama_cpp, llm, calls, max_tokens: int) -> dict:
    p0 = _perf(llama_cpp, llm)
    prompt_tokens = gen_tokens = 0
    t0 = time.perf_counter()
    for qi, style, messages in calls:
        c0, t1 = _perf(llama_cpp, llm), time.perf_counter()
        resp = llm.create_chat_completion(
            messages=messages,
            temperature=0.0,
            top_k=0,
            min_p=0.0,
            top_p=1.0,
            repeat_penalty=1.0,
            max_tokens=max_tokens,
            seed=0,
        )
        c1 = _perf(llama_cpp, llm)
        usage = resp["usage"]
        prompt_tokens += usage["prompt_tokens"]
        gen_tokens += usage["completion_tokens"]
        print(
            f"  q{qi} {style:<8} prompt {usage['prompt_tokens']:>5} tok, evaluated {c1[1] - c0[1]:>5} in "
            f"{(c1[0] - c0[0]) / 1e3:6.1f}s; generated {c1[3] - c0[3]:>3} in {(c1[2] - c0[2]) / 1e3:5.1f}s; "
            f"wall {time.perf_counter() - t1:5.1f}s",
            flush=True,
        )
    wall = time.perf_counter() - t0
    p1 = _perf(llama_cpp, llm)
    t_p, n_p, t_g, n_g = (b - a for a, b in zip(p0, p1, strict=True))
    return {
        "calls": len(calls),
        "prompt_tokens": prompt_tokens,
        "prompt_tokens_evaluated": n_p,
        "prompt_tok_s_evaluated": n_p / (t_p / 1e3) if t_p else float("nan"),
        "prompt_tok_s_effective": prompt_tokens / (t_p / 1e3) if t_p else float("nan"),
        "generated_tokens": gen_tokens,
        "gen_tok_s": n_g / (t_g / 1e3) if t_g else float("nan"),
        "wall_s": wall,
        "calls_per_hour": 3600 * len(calls) / wall,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--n-ctx", type=int, default=2048)
    ap.add_argument("--words", type=int, default=110, help="words per passage (5 passages per prompt)")
    ap.add_argument("--threads", type=int, default=2, help="n_threads of the optimised path")
    args = ap.parse_args()

    llama_cpp = import_llama_cpp()
    path = packaged_gguf()
    calls = build_calls(args.questions, args.words)
    style_major = sorted(calls, key=lambda c: (STYLES.index(c[1]), c[0]))
    question_major = sorted(calls, key=lambda c: (c[0], STYLES.index(c[1])))
    results = {}

    backend = LlamaCppBackend(n_ctx=args.n_ctx, n_threads=args.threads, n_batch=512)
    t = time.perf_counter()
    optimised = backend.load()
    load_opt = time.perf_counter() - t  # includes the sha256 check of the weights
    print(f"optimised (n_threads={args.threads}, question-major order):", flush=True)
    results["optimised"] = run(llama_cpp, optimised, question_major, args.max_tokens)
    del optimised
    backend._llm = None

    # The only non-default: extra weight buffers off, without which llama.cpp dies (SIGILL) on VMs that
    # advertise AMX without enabling it (see finrag.llm.local_model.model_params_override).
    t = time.perf_counter()
    with model_params_override(llama_cpp, use_extra_bufts=False):
        default = llama_cpp.Llama(model_path=str(path), n_ctx=args.n_ctx, verbose=False)
    load_default = time.perf_counter() - t
    print(f"default (n_threads={default.n_threads}, n_threads_batch={default.n_threads_batch}, style-major):")
    results["default"] = run(llama_cpp, default, style_major, args.max_tokens)

    print(
        f"llama-cpp-python {llama_cpp.__version__}, {platform.machine()}, {len(calls)} calls, "
        f"max_tokens={args.max_tokens}; load: optimised {load_opt:.1f}s (with sha256 check), "
        f"default {load_default:.1f}s"
    )
    cols = ["prompt_tokens", "prompt_tokens_evaluated", "prompt_tok_s_evaluated", "prompt_tok_s_effective",
            "generated_tokens", "gen_tok_s", "wall_s", "calls_per_hour"]  # fmt: skip
    print(f"{'path':<10} " + " ".join(f"{c:>24}" for c in cols))
    for name, r in results.items():
        cells = [f"{r[c]:>24.1f}" if isinstance(r[c], float) else f"{r[c]:>24}" for c in cols]
        print(f"{name:<10} " + " ".join(cells))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
