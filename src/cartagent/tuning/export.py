"""A trained PEFT LoRA adapter as a GGUF LoRA that llama.cpp loads beside the base GGUF.

llama.cpp names a model's tensors ``blk.N.attn_q`` (not ``model.layers.N.self_attn.q_proj``).
For a Llama (SmolLM2) it stores the query and key projections with their rows permuted for its
rotary embedding, so the adapter's ``lora_b`` of those two is permuted the same way; ``lora_a``
acts on the input and is unchanged. Qwen2 keeps Hugging Face's row order. llama.cpp
scales the adapter by ``adapter.lora.alpha / rank`` itself, and loads an adapter only on a model
of the architecture the adapter names.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError

if TYPE_CHECKING:
    from ..llm.llama_cpp import LlamaCppModel

__all__ = ["ARCHITECTURES", "export_gguf_lora", "gguf_tensor_name", "served_model"]

ARCHITECTURES: dict[str, tuple[str, bool]] = {
    "llama": ("llama", True),
    "qwen2": ("qwen2", False),
}
"""Hugging Face ``model_type`` -> (llama.cpp architecture, query/key rows permuted): the
architectures checked against PEFT (tests/tuning/test_export.py)."""

_MODULES = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}
_PEFT_KEY = re.compile(
    r"^base_model\.model\.model\.layers\.(\d+)\.(\w+\.\w+)\.lora_([AB])\.weight$"
)


def gguf_tensor_name(peft_key: str) -> tuple[str, str]:
    """``(llama.cpp base tensor name, "a" or "b")`` for a PEFT adapter key."""
    match = _PEFT_KEY.match(peft_key)
    if match is None or match.group(2) not in _MODULES:
        raise ConfigurationError(f"adapter tensor {peft_key!r} has no llama.cpp counterpart")
    layer, module, which = match.groups()
    return f"blk.{layer}.{_MODULES[module]}.weight", which.lower()


def _permute_rows(weight: Any, heads: int) -> Any:
    """llama.cpp's row order for a rotary projection with ``heads`` heads."""
    rows = weight.shape[0]
    return (
        weight.reshape(heads, 2, rows // heads // 2, *weight.shape[1:])
        .swapaxes(1, 2)
        .reshape(weight.shape)
    )


def _read(adapter: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    config_file = adapter / "adapter_config.json"
    weights_file = adapter / "adapter_model.safetensors"
    if not config_file.is_file() or not weights_file.is_file():
        raise ConfigurationError(f"{adapter}: not a PEFT LoRA adapter folder")
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
        tensors = load_file(str(weights_file))
    except (ValueError, OSError, SafetensorError) as error:
        raise ConfigurationError(f"{adapter}: unreadable adapter: {error}") from None
    if config.get("use_rslora") or config.get("use_dora"):
        raise ConfigurationError(f"{adapter}: rsLoRA and DoRA adapters are not exported")
    return config, tensors


def export_gguf_lora(adapter: str | Path, base_config: dict[str, Any], out: str | Path) -> Path:
    """Write ``adapter`` (a PEFT folder) as a GGUF LoRA file at ``out``, in float16.

    ``base_config`` is the base model's Hugging Face config (``model_type``,
    ``num_attention_heads``, ``num_key_value_heads``): the architecture and rotary row order.
    Raises :class:`~cartagent.errors.ConfigurationError` for an architecture not in
    :data:`ARCHITECTURES`.
    """
    import gguf
    import numpy as np

    folder = Path(adapter)
    config, tensors = _read(folder)
    model_type = base_config.get("model_type")
    if model_type not in ARCHITECTURES:
        known = ", ".join(sorted(ARCHITECTURES))
        raise ConfigurationError(
            f"{folder}: a base of model type {model_type!r} is not exported (known: {known})"
        )
    architecture, permuted = ARCHITECTURES[model_type]
    heads = int(base_config["num_attention_heads"])
    kv_heads = int(base_config.get("num_key_value_heads") or heads)
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(target), architecture)
    writer.add_string(gguf.Keys.General.TYPE, gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(config["lora_alpha"]))
    for key in sorted(tensors):
        name, which = gguf_tensor_name(key)
        weight = tensors[key].astype(np.float32)
        if permuted and which == "b" and name.endswith(".attn_q.weight"):
            weight = _permute_rows(weight, heads)
        elif permuted and which == "b" and name.endswith(".attn_k.weight"):
            weight = _permute_rows(weight, kv_heads)
        writer.add_tensor(f"{name}.lora_{which}", weight.astype(np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return target


def served_model(adapter: Path, base: str, style: str) -> LlamaCppModel:
    """``adapter`` (a PEFT folder trained on ``base``, a packaged model or a GGUF file) as
    ``--model tuned`` serves it: exported to ``adapter.gguf``, folded into the base's weights
    and bounded to an answer in ``style``. The merged GGUF goes in ``merged/`` beside the
    folder, not in it: adapter folders are logged to MLflow and copied into the registry, and it
    weighs as much as the base."""
    from ..llm.llama_cpp import LlamaCppModel
    from ..llm.packaged import gguf_base
    from ..retrieval import answer_tokens
    from .base_model import load_base_config

    gguf = export_gguf_lora(adapter, load_base_config(base), adapter / "adapter.gguf")
    return LlamaCppModel(
        gguf_base(base),
        chat=True,
        lora_path=gguf,
        merge_cache=adapter.parent / "merged",
        max_tokens=answer_tokens(style),
    )
