"""A :class:`~cartagent.llm.Model` running a GGUF model in-process through llama-cpp-python.

Replies can be constrained to a JSON Schema: the schema becomes a llama.cpp grammar, so even a
135M-parameter model emits JSON of the requested shape. There is no tool calling.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, cast

import anyio.to_thread
import numpy as np

from cartagent.errors import ConfigurationError

from .merged import STORED_TYPES
from .model import Completion, Message, ToolSpec, Usage, refuse_tools

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp.llama_grammar import LlamaGrammar

__all__ = ["DEFAULT_MAX_THREADS", "LlamaCppModel", "default_threads"]

DEFAULT_MAX_THREADS = 4
"""Beyond a few threads a small model's decoding waits on their synchronisation, not on work."""


def default_threads() -> int:
    """The decoding threads a model gets unless told: the usable cores, at most four."""
    return max(1, min(len(os.sched_getaffinity(0)), DEFAULT_MAX_THREADS))


class LlamaCppModel:
    """One GGUF model, loaded on first use and shared by all calls (one at a time).

    ``chat=True`` formats the conversation with the chat template inside the GGUF; use
    ``chat=False`` for base models without one: the conversation is then written as a plain
    ``Request: ...`` / ``JSON: ...`` transcript that the model continues.

    ``lora_path`` applies a GGUF LoRA at run time; with ``merge_cache`` as well, the adapter is
    folded into the base's weights instead (:mod:`cartagent.llm.merged`, cached in that folder
    and built on first use), which decodes at the base model's speed; ``merged_type`` says how
    the adapted weights are stored (:data:`~cartagent.llm.merged.STORED_TYPES`).

    ``n_threads`` decodes on that many threads; by default on every core this process may use,
    at most :data:`DEFAULT_MAX_THREADS`. llama-cpp-python's own default is half the cores, one
    thread on a 2-core machine, where two decode a guided answer about a fifth faster.

    At temperature 0 each reply carries its ``confidence``: the probability of the least likely
    token chosen (greedy decoding chooses the likeliest, so it is the top probability of each
    step), read from the logits as they are sampled.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        chat: bool = True,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        seed: int = 0,
        temperature: float = 0.0,
        max_tokens: int = 256,
        lora_path: str | Path | None = None,
        merge_cache: str | Path | None = None,
        merged_type: str = "Q4_0",
        verbose: bool = False,
    ) -> None:
        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise ConfigurationError(f"no model file at {self.model_path}")
        if lora_path is not None and not Path(lora_path).is_file():
            raise ConfigurationError(f"no LoRA adapter file at {lora_path}")
        if merge_cache is not None and lora_path is None:
            raise ConfigurationError("merge_cache needs a lora_path to merge")
        if merged_type not in STORED_TYPES:
            raise ConfigurationError(
                f"merged_type is one of {', '.join(STORED_TYPES)}, not {merged_type!r}"
            )
        if n_ctx <= 0 or max_tokens <= 0:
            raise ConfigurationError(f"n_ctx ({n_ctx}) and max_tokens ({max_tokens}) must be > 0")
        if n_threads is not None and n_threads <= 0:
            raise ConfigurationError(f"n_threads must be > 0, not {n_threads}")
        if temperature < 0:
            raise ConfigurationError(f"temperature must be >= 0, not {temperature}")
        self.chat = chat
        self.lora_path = None if lora_path is None else Path(lora_path)
        self.merge_cache = None if merge_cache is None else Path(merge_cache)
        self.merged_type = merged_type
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._seed = seed
        self._load_options: dict[str, Any] = {
            "n_ctx": n_ctx,
            "seed": seed,
            "verbose": verbose,
            "n_threads": n_threads if n_threads is not None else default_threads(),
            **({"lora_path": str(lora_path)} if lora_path and not merge_cache else {}),
        }
        self._llama: Llama | None = None
        # llama.cpp contexts are not thread-safe: one generation (or load, or close) at a time.
        self._lock = threading.Lock()

    async def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> Completion:
        refuse_tools(
            "LlamaCppModel",
            messages,
            tools,
            hint="; serve the model with an OpenAI-compatible server that supports tools and "
            "use OpenAICompatibleModel instead",
        )
        schema_text = _schema_text(response_format)
        return await anyio.to_thread.run_sync(self._generate, messages, schema_text)

    def load(self) -> None:
        """Load the model now rather than on the first call (no-op when loaded)."""
        with self._lock:
            self._loaded()

    def close(self) -> None:
        """Free the model's memory; a later call loads it again."""
        with self._lock:
            if self._llama is not None:
                self._llama.close()
                self._llama = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _loaded(self) -> Llama:
        if self._llama is None:
            llama_cpp = _import_llama_cpp()
            path = self.model_path
            if self.merge_cache is not None and self.lora_path is not None:
                from .merged import merged_model_path

                path = merged_model_path(
                    self.model_path, self.lora_path, self.merge_cache, stored_as=self.merged_type
                )
            try:
                self._llama = llama_cpp.Llama(str(path), **self._load_options)
            except ValueError as exc:
                raise ConfigurationError(f"llama.cpp could not load {path}: {exc}") from exc
        return self._llama

    def _generate(self, messages: list[Message], schema_text: str | None) -> Completion:
        grammar = None if schema_text is None else _grammar(schema_text)
        sampling: dict[str, Any] = {
            "grammar": grammar,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self._seed,
            # The default penalty (1.1 for chat) fights the repeated quotes and braces of JSON.
            "repeat_penalty": 1.0,
        }
        steps = _StepConfidence()
        if self.temperature == 0:
            sampling["logits_processor"] = _import_llama_cpp().LogitsProcessorList([steps])
        with self._lock:
            llama = self._loaded()
            if self.chat:
                chat: list[Any] = [{"role": m.role, "content": m.content or ""} for m in messages]
                reply: Any = llama.create_chat_completion(messages=chat, **sampling)
                text = reply["choices"][0]["message"]["content"] or ""
            else:
                answer_label = "Response:" if schema_text is None else "JSON:"
                reply = llama.create_completion(
                    _transcript(messages, answer_label),
                    # A grammar ends the reply itself (JSON strings hold no raw newline); free
                    # text ends with its line, before the model invents the next "Request:".
                    stop=None if grammar is not None else ["\n"],
                    **sampling,
                )
                text = reply["choices"][0]["text"]
        usage = reply["usage"]
        return Completion(
            Message("assistant", text.strip()),
            Usage(int(usage["prompt_tokens"]), int(usage["completion_tokens"])),
            steps.least,
            reply["choices"][0].get("finish_reason") == "length",
        )


class _StepConfidence:
    """A logits processor that only watches: the lowest top probability over the steps seen."""

    def __init__(self) -> None:
        self.least: float | None = None

    def __call__(self, _tokens: Any, logits: Any) -> Any:
        values = np.asarray(logits, dtype=np.float64)
        if values.size:
            top = float(1.0 / np.exp(values - values.max()).sum())
            self.least = top if self.least is None else min(self.least, top)
        return logits


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise ConfigurationError(
            "LlamaCppModel needs llama-cpp-python: pip install 'cartagent[llm]'"
        ) from exc
    return llama_cpp


def _schema_text(response_format: dict[str, Any] | None) -> str | None:
    """The JSON Schema (as text) a reply must follow, or None for free text.

    llama-cpp-python only constrains ``{"type": "json_object", "schema": ...}`` and silently
    ignores OpenAI's ``{"type": "json_schema", ...}``, so both are accepted and turned into a
    grammar here.
    """
    if response_format is None:
        return None
    kind = response_format.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        schema = response_format.get("schema")
    elif kind == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
    else:
        raise ConfigurationError(f"unsupported response_format type {kind!r}")
    # Not sort_keys: llama.cpp's grammar writes properties in the schema's order, and models
    # are shown (and tuned on) SearchQuery's own order; alphabetical would force another one.
    return json.dumps(schema if schema is not None else {"type": "object"})


@functools.lru_cache(maxsize=32)
def _grammar(schema_text: str) -> LlamaGrammar:
    # llama-cpp-python falls back to "any JSON" when a schema does not convert; a constraint
    # that silently disappears is worse than an error, so the conversion is done here.
    llama_cpp = _import_llama_cpp()
    try:
        return cast("LlamaGrammar", llama_cpp.LlamaGrammar.from_json_schema(schema_text))
    except Exception as exc:
        raise ConfigurationError(
            f"llama.cpp cannot turn this JSON Schema into a grammar: {exc}"
        ) from exc


def _transcript(messages: list[Message], answer_label: str) -> str:
    """The conversation as a plain-text transcript ending where the model's answer starts."""
    system = "\n".join(m.content or "" for m in messages if m.role == "system")
    lines = [system.strip(), ""] if system.strip() else []
    for message in messages:
        if message.role == "user":
            lines.append(f"Request: {message.content or ''}")
        elif message.role == "assistant":
            lines.append(f"{answer_label} {message.content or ''}")
    return "\n".join(lines) + f"\n{answer_label}"
