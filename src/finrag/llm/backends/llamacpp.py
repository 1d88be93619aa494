"""The in-process llama.cpp backend (llama-cpp-python) for the packaged GGUF models."""

from __future__ import annotations

import logging
from pathlib import Path

from finrag.llm.backends.base import (
    Backend,
    Completion,
)
from finrag.llm.errors import BackendUnavailable, LLMError

log = logging.getLogger(__name__)


def ram_cache(llama_cpp, capacity_bytes: int):
    """llama-cpp-python's LlamaRAMCache, with its capacity counting every byte a saved state holds.

    Why: LlamaRAMCache counts only the llama.cpp state (KV cells, ~12 KB a token for the 0.5B), but each saved
    LlamaState also carries a copy of the scores array (n_batch x n_vocab floats: ~311 MB for Qwen at
    n_batch 512), so a 2 GB "capacity" kept ~70 states and grew the process past 23 GB here before it evicted.
    """

    class CountingRAMCache(llama_cpp.LlamaRAMCache):
        @property
        def cache_size(self) -> int:
            return sum(
                state.llama_state_size + state.scores.nbytes + state.input_ids.nbytes
                for state in self.cache_state.values()
            )

    return CountingRAMCache(capacity_bytes=capacity_bytes)


def json_safe(obj):
    """`obj` with numpy scalars as Python numbers, so the response cache can store it."""
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, str | bytes):
        return obj.item()
    return obj


class LlamaCppBackend(Backend):
    """In-process llama.cpp (llama-cpp-python) on a GGUF file: the packaged Qwen2.5-Coder-0.5B by default.

    Speed: one Llama object is kept, so consecutive calls reuse the longest common token prefix already in the
    KV cache (llama-cpp-python does this in `generate`); order calls so system prompt + passages repeat (see
    prompts.py). `ram_cache_mb` > 0 also keeps KV states of earlier prefixes (LlamaRAMCache) for interleaved
    orders. The weights are verified (sha256) before loading; the seed is set per call from decoding.
    `extra_bufts` (llama.cpp's AMX / repacked weight buffers) is off by default: a VM that advertises AMX
    without enabling it dies with SIGILL on the AMX path (see local_model.model_params_override).
    `flash_attn` cut prompt evaluation by ~13% on a 2k-token prompt here; like `n_threads` it is a speed setting,
    kept out of the cache key, so it is switched on per family before recording starts, never in the middle.
    """

    name = "llamacpp"
    supports_logprobs = True  # with logits_all (llama-cpp-python computes log-probabilities only then)

    def __init__(
        self,
        model_path: str | None = None,
        *,
        model: str | None = None,
        sha256: str | None = None,
        n_ctx: int = 4096,
        n_threads: int = 2,
        n_batch: int = 512,
        ram_cache_mb: int = 0,
        chat_format: str | None = None,
        extra_bufts: bool = False,
        flash_attn: bool = False,
        n_gpu_layers: int | None = None,
        logits_all: bool = False,
        verbose: bool = False,
    ):
        from finrag.llm import local_model

        self.model_path = model_path
        self._sha: str | None
        if model_path is None:  # a packaged model, by name (default: Qwen2.5-Coder-0.5B)
            spec = local_model.packaged_model(model or local_model.PACKAGED_MODEL_NAME)
            self.model, self._sha = spec.name, spec.sha256
        else:  # without a name: named by the weights' hash when first needed (_name_by_hash)
            self.model = model or ""
            self._sha = sha256
        self.n_ctx, self.n_threads, self.n_batch = int(n_ctx), int(n_threads), int(n_batch)
        self.ram_cache_mb = int(ram_cache_mb)
        self.chat_format = chat_format
        self.extra_bufts = bool(extra_bufts)
        self.flash_attn = bool(flash_attn)
        # layers offloaded to a GPU; None: all where the installed llama.cpp build can (finrag.core.device)
        self.n_gpu_layers = n_gpu_layers
        # keep every prompt token's logits (n_ctx x vocabulary floats: ~2.5 GB for Qwen at n_ctx 4096): needed for
        # log-probabilities, a memory setting outside the cache key like n_ctx
        self.logits_all = bool(logits_all)
        self.verbose = verbose
        self._llm = None

    def revision(self) -> str:
        if self._sha is None:
            from finrag.core.io import sha256_file

            path = Path(self.model_path)  # type: ignore[arg-type]
            if not path.is_file():
                raise BackendUnavailable(f"GGUF model file not found: {path}")
            self._sha = sha256_file(path)
        return self._sha

    def load(self):
        """The Llama object (loaded once; the weights' sha256 is checked first)."""
        if self._llm is not None:
            return self._llm
        from finrag.core.device import llama_gpu_layers
        from finrag.llm import local_model

        llama_cpp = local_model.import_llama_cpp()
        self._name_by_hash()
        if self.model_path is None:
            path = local_model.packaged_gguf(name=self.model)
        else:
            path = local_model.verify_gguf(self.model_path, self._sha)
        with local_model.model_params_override(llama_cpp, use_extra_bufts=self.extra_bufts):
            self._llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                n_batch=self.n_batch,
                n_gpu_layers=llama_gpu_layers(llama_cpp, self.n_gpu_layers),
                flash_attn=self.flash_attn,
                logits_all=self.logits_all,
                chat_format=self.chat_format,
                verbose=self.verbose,
            )
        if self.ram_cache_mb > 0:
            self._llm.set_cache(ram_cache(llama_cpp, self.ram_cache_mb << 20))
        return self._llm

    def settings(self) -> dict:
        return {"chat_format": self.chat_format} if self.chat_format else {}

    def _name_by_hash(self) -> None:
        """A GGUF given by path alone is named by its weights' hash (a file name differs between machines)."""
        if not self.model:
            self.model = f"gguf-{self.revision()[:16]}"

    def identity(self) -> dict:
        self._name_by_hash()
        return super().identity()

    def prepare(self) -> None:
        self.load()

    def _complete(self, messages: list[dict], decoding: dict, documents: list[dict] | None) -> Completion:
        llm = self.load()
        top_logprobs = int(decoding.get("top_logprobs", 0))
        if top_logprobs and not self.logits_all:
            raise LLMError("llamacpp: decoding.top_logprobs needs the backend built with logits_all: true")
        logprob_args = {"logprobs": True, "top_logprobs": top_logprobs} if top_logprobs else {}
        try:
            resp = llm.create_chat_completion(
                **logprob_args,
                messages=messages,
                temperature=decoding["temperature"],
                top_p=decoding["top_p"],
                top_k=decoding["top_k"],
                min_p=decoding["min_p"],
                repeat_penalty=decoding["repeat_penalty"],
                max_tokens=decoding["max_tokens"],
                seed=decoding["seed"],
                stop=decoding["stop"] or None,
            )
        except ValueError as exc:  # e.g. "Requested tokens (5000) exceed context window of 4096"
            raise LLMError(f"llamacpp: {' '.join(str(exc).split())} (raise n_ctx)") from None
        raw = json_safe(dict(resp))  # log-probabilities come as numpy float32
        raw["model"] = self.model  # llama-cpp-python puts the local file path here: keep machines' paths out
        choice = raw["choices"][0]
        u = raw.get("usage") or {}
        if int(u.get("prompt_tokens", 0)) + decoding["max_tokens"] > self.n_ctx:
            # llama-cpp-python would quietly lower max_tokens to fit n_ctx, so the answer would depend on n_ctx,
            # which is not in the cache key: refuse instead
            raise LLMError(
                f"llamacpp: prompt of {u.get('prompt_tokens')} tokens + max_tokens {decoding['max_tokens']} "
                f"exceeds n_ctx {self.n_ctx} (raise n_ctx)"
            )
        return Completion(
            text=choice["message"].get("content") or "",
            usage={
                "input_tokens": int(u.get("prompt_tokens", 0)),
                "output_tokens": int(u.get("completion_tokens", 0)),
            },
            model=self.model,
            finish_reason=choice.get("finish_reason") or "",
            raw=raw,
        )
