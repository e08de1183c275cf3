"""The base model a LoRA adapter is trained on, loaded for training with transformers.

``base`` names a packaged GGUF (``smollm2``: dequantized to float32 by transformers), a local
Hugging Face folder, a ``.gguf`` file, or a model name already in the local Hugging Face cache
(nothing is downloaded: ``HF_HUB_OFFLINE`` is set by the callers that need it).

Reading a GGUF is slow in transformers (about 25 s for SmolLM2-135M here, most of it parsing the
file's metadata and tokenizer), and a sweep reads it twice a trial, so the first read saves the
dequantized model as a Hugging Face folder in ``cache_dir``, under the GGUF's SHA-256, and later
reads load that (0.3 s).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..llm.packaged import PACKAGED_MODELS, gguf_base
from ..weight_loading import hide_weight_loading_bars

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
    candidate = Path(base).expanduser()
    if base in PACKAGED_MODELS or candidate.suffix == ".gguf":
        path = gguf_base(base)
        return str(path.parent), path.name
    if candidate.is_dir():
        if not (candidate / "config.json").is_file():
            raise ConfigurationError(f"base model {base!r}: the folder has no config.json")
        return str(candidate), None
    if "/" in base or base.startswith("."):
        raise ConfigurationError(f"base model {base!r}: no such folder")
    return base, None


def _cached(where: str, gguf: str | None, cache_dir: Path | None) -> Path | None:
    """The folder a GGUF base is (or would be) dequantized into; None for other bases."""
    if gguf is None or cache_dir is None:
        return None
    path = Path(where) / gguf
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return cache_dir / f"{path.stem}-{digest.hexdigest()[:16]}"


def _source(base: str, cache_dir: Path | None) -> tuple[str, str | None, Path | None]:
    """``(folder or name, gguf file or None, cache folder or None)`` to load ``base`` from: its
    dequantized copy when one is kept."""
    where, gguf = resolve_base(base)
    cached = _cached(where, gguf, cache_dir)
    if cached is not None and (cached / "config.json").is_file():
        return str(cached), None, cached
    return where, gguf, cached


def _keep(model: Any, tokenizer: Any, folder: Path) -> None:
    """Save the dequantized base into ``folder``, whole or not at all (several sweep workers
    may load it for the first time at once: the first to finish wins)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        model.save_pretrained(str(partial))
        tokenizer.save_pretrained(str(partial))
        os.replace(partial, folder)
    except OSError:
        pass  # another process saved it first, or the disk is full: the cache is only a saving
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def load_base_config(base: str, *, cache_dir: Path | None = None) -> dict[str, Any]:
    """The base model's Hugging Face config as a dict, without loading its weights."""
    from transformers import AutoConfig

    where, gguf, _ = _source(base, cache_dir)
    options: dict[str, Any] = {"gguf_file": gguf} if gguf else {}
    try:
        config: dict[str, Any] = AutoConfig.from_pretrained(where, **options).to_dict()
    except OSError as error:
        raise ConfigurationError(f"base model {base!r} could not be read: {error}") from None
    return config


def load_base_model(base: str, *, cache_dir: Path | None = None) -> BaseModel:
    """The causal LM and its tokenizer, in float32 on the CPU, ready for a LoRA adapter; a GGUF
    base is dequantized once into ``cache_dir`` (None: every time)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    where, gguf, cached = _source(base, cache_dir)
    options: dict[str, Any] = {"gguf_file": gguf} if gguf else {}
    hide_weight_loading_bars()
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
    if gguf and cached is not None:
        _keep(model, tokenizer, cached)
    return BaseModel(model, tokenizer, base)
