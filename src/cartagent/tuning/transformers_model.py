"""A causal LM run by transformers (PyTorch), with a LoRA adapter folded in.

For where llama.cpp is not installed, above all a GPU machine scoring a sweep's adapters: the
adapter answers greedily from the same chat template it was trained on, so its dev metrics
are those of the served model, less llama.cpp's rounding (Q4_0 by default). It has no grammar
and no tool calling; serving stays with :class:`~cartagent.llm.llama_cpp.LlamaCppModel`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import anyio

from ..errors import ConfigurationError
from ..llm.model import Completion, Message, ToolSpec, Usage, refuse_tools

__all__ = ["TransformersModel"]


class TransformersModel:
    """Greedy answers of ``model`` (a transformers causal LM), at most ``max_tokens`` each."""

    def __init__(self, model: Any, tokenizer: Any, *, max_tokens: int = 64) -> None:
        if max_tokens < 1:
            raise ConfigurationError(f"max_tokens must be at least 1, not {max_tokens}")
        self.model: Any = model
        self.tokenizer = tokenizer
        self.max_tokens = max_tokens
        self._lock = threading.Lock()
        self._prefetched: dict[tuple[tuple[str, str], ...], Completion] = {}

    @classmethod
    def with_adapter(
        cls,
        adapter: str | Path,
        base: str,
        *,
        max_tokens: int = 64,
        base_cache: Path | None = None,
    ) -> Self:
        """The base model (see :func:`~cartagent.tuning.base_model.load_base_model`) with the
        PEFT adapter folder ``adapter`` merged into it, on the GPU when there is one."""
        import torch
        from peft import PeftModel

        from .base_model import load_base_model

        folder = Path(adapter)
        if not (folder / "adapter_config.json").is_file():
            raise ConfigurationError(f"{folder}: not a PEFT LoRA adapter folder")
        loaded = load_base_model(base, cache_dir=base_cache)
        try:
            merged = PeftModel.from_pretrained(loaded.model, str(folder)).merge_and_unload()
        except (ValueError, OSError, RuntimeError) as error:
            raise ConfigurationError(f"{folder}: unreadable adapter: {error}") from None
        device = "cuda" if torch.cuda.is_available() else "cpu"
        return cls(merged.to(device).eval(), loaded.tokenizer, max_tokens=max_tokens)

    async def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> Completion:
        refuse_tools("TransformersModel", messages, tools)
        if response_format:
            raise ConfigurationError(
                "TransformersModel decodes freely, with no JSON grammar: serve through llama.cpp"
            )
        return await anyio.to_thread.run_sync(self._generate, messages)

    def prefetch(self, conversations: Sequence[list[Message]], *, batch_size: int = 32) -> None:
        """Answer ``conversations`` now, ``batch_size`` at a time; :meth:`complete` then
        returns those answers for the same messages instead of decoding one by one.

        One request at a time leaves a GPU nearly idle (a sweep's dev scoring took longer than
        its training); a batch is left-padded and masked, so each answer is the one decoded
        alone, up to floating-point rounding.
        """
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be at least 1, not {batch_size}")
        unique = list({_key(c): c for c in conversations}.items())
        for start in range(0, len(unique), batch_size):
            chunk = unique[start : start + batch_size]
            answers = self._generate_batch([c for _, c in chunk])
            with self._lock:
                self._prefetched.update(zip((k for k, _ in chunk), answers, strict=True))

    def _generate_batch(self, conversations: list[list[Message]]) -> list[Completion]:
        import torch

        encoded = [self._encode(c) for c in conversations]
        pad = self.tokenizer.pad_token_id
        width = max(len(ids) for ids in encoded)
        ids = torch.tensor([[pad] * (width - len(row)) + row for row in encoded])
        mask = torch.tensor([[0] * (width - len(row)) + [1] * len(row) for row in encoded])
        with self._lock, torch.inference_mode():
            if self.model is None:
                raise RuntimeError("this TransformersModel is closed")
            output = self.model.generate(
                ids.to(self.model.device),
                attention_mask=mask.to(self.model.device),
                max_new_tokens=self.max_tokens,
                do_sample=False,
                pad_token_id=pad,
            )
        completions = []
        for row, prompt in zip(output[:, width:].tolist(), encoded, strict=True):
            answer = _until_eos(row, self.tokenizer.eos_token_id)
            text = self.tokenizer.decode(answer, skip_special_tokens=True)
            completions.append(
                Completion(Message("assistant", text.strip()), Usage(len(prompt), len(answer)))
            )
        return completions

    def _encode(self, messages: list[Message]) -> list[int]:
        chat = [{"role": m.role, "content": m.content or ""} for m in messages]
        encoded = self.tokenizer.apply_chat_template(
            chat, add_generation_prompt=True, return_dict=True
        )
        return list(encoded["input_ids"])

    def _generate(self, messages: list[Message]) -> Completion:
        with self._lock:
            ready = self._prefetched.get(_key(messages))
        return ready if ready is not None else self._generate_batch([messages])[0]

    def close(self) -> None:
        """Free the model's memory (the GPU's too); later calls fail."""
        with self._lock:
            if self.model is None:
                return
            self.model = None
            self._prefetched.clear()
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _key(messages: Sequence[Message]) -> tuple[tuple[str, str], ...]:
    return tuple((m.role, m.content or "") for m in messages)


def _until_eos(tokens: list[int], eos: int | None) -> list[int]:
    """A batch row's answer: up to its end-of-sequence token, as a lone decode stops there
    (the rest of the row is padding)."""
    if eos is not None and eos in tokens:
        return tokens[: tokens.index(eos) + 1]
    return tokens
