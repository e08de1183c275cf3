"""The base model a LoRA adapter is trained on, loaded for training with transformers.

``base`` names a packaged GGUF (``smollm2``: dequantized to float32 by transformers), a local
Hugging Face folder, a ``.gguf`` file, or a model name already in the local Hugging Face cache
(nothing is downloaded: ``HF_HUB_OFFLINE`` is set by the callers that need it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..llm.packaged import PACKAGED_MODELS, packaged_model_path

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["BaseModel", "load_base_config", "load_base_model", "resolve_base"]


@dataclass(frozen=True)
class BaseModel:
    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    source: str


def resolve_base(base: str) -> tuple[str, str | None]:
    """``(folder or name, gguf file name or None)`` for ``base``."""
    if base in PACKAGED_MODELS:
        path = packaged_model_path(base)
        return str(path.parent), path.name
    candidate = Path(base).expanduser()
    if candidate.suffix == ".gguf":
        if not candidate.is_file():
            raise ConfigurationError(f"base model {base!r}: no such GGUF file")
        return str(candidate.parent), candidate.name
    if candidate.is_dir():
        if not (candidate / "config.json").is_file():
            raise ConfigurationError(f"base model {base!r}: the folder has no config.json")
        return str(candidate), None
    if "/" in base or base.startswith("."):
        raise ConfigurationError(f"base model {base!r}: no such folder")
    return base, None


def load_base_config(base: str) -> dict[str, Any]:
    """The base model's Hugging Face config as a dict, without loading its weights."""
    from transformers import AutoConfig

    where, gguf = resolve_base(base)
    options: dict[str, Any] = {"gguf_file": gguf} if gguf else {}
    try:
        config: dict[str, Any] = AutoConfig.from_pretrained(where, **options).to_dict()
    except OSError as error:
        raise ConfigurationError(f"base model {base!r} could not be read: {error}") from None
    return config


def load_base_model(base: str) -> BaseModel:
    """The causal LM and its tokenizer, in float32 on the CPU, ready for a LoRA adapter."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    where, gguf = resolve_base(base)
    options: dict[str, Any] = {"gguf_file": gguf} if gguf else {}
    try:
        tokenizer = AutoTokenizer.from_pretrained(where, **options)
        model = AutoModelForCausalLM.from_pretrained(where, dtype="float32", **options)
    except OSError as error:
        raise ConfigurationError(f"base model {base!r} could not be loaded: {error}") from None
    quantizer = getattr(model, "hf_quantizer", None)
    if gguf and quantizer is not None:
        # A GGUF-loaded model is marked quantized though it is plain float32 now; training and
        # saving refuse a model that still says so.
        quantizer.remove_quantization_config(model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return BaseModel(model, tokenizer, base)
