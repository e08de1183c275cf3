"""A GGUF LoRA adapter folded into its base model's weights: one file llama.cpp runs at base speed.

llama.cpp applies a LoRA at run time as two extra small matrix products per adapted weight and
token; on SmolLM2-135M (2 threads) that slows decoding about fourfold. Folding
``W + alpha / rank * B @ A`` into the weights once takes seconds and gives the base's speed
back. An adapted weight is dequantized, changed and stored as Q4_0 (:data:`STORED_AS`), and so
are the token embeddings (SmolLM2's output head): on 2 cores the search adapter then answers a
request about a third faster than with Q8_0 weights, and as often right on the tuning set's dev
and test splits (docs/tuning/results.md, 2026-12-07, evening). Every other tensor and all
metadata are copied unchanged.

:func:`merged_model_path` keeps the merge in a cache folder under a name made of the SHA-256
of the base and of the adapter, so it is built once per pair, a changed adapter never meets a
stale merge, and a half-written file is never used (it is renamed into place when complete).
The merged file's own SHA-256 is kept beside it (``X.gguf.sha256``) and checked on every load:
a merge changed or damaged since is refused with both hashes, not run.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..files import file_sha256, write_atomically

__all__ = ["STORED_AS", "STORED_TYPES", "merge_lora", "merged_model_path"]

STORED_TYPES = ("Q4_0", "Q8_0")
"""The GGUF types an adapted weight may be stored as: Q4_0 is faster (and the token embeddings
are stored so too), Q8_0 closer to the adapter as trained (on the prompt it was trained on, its
logits are 0.01-0.06 of the adapter's change away from the runtime LoRA's, Q4_0's 0.16-0.57;
both pick the same next token)."""
STORED_AS = "Q4_0"
"""The type an adapted weight is stored as by default (named in the merged file's name)."""


_EMBEDDING = "token_embd.weight"
"""The token embeddings: SmolLM2's output head too (tied), a third of the bytes a decoded token
reads once the layers are Q4_0; at Q4_0 a token decodes ~8% faster (10.0 -> 9.2 ms, 2 cores) and
the dev and test splits are answered as often right (418 against 415 of 489)."""


def _finer(tensor: Any, than: Any) -> bool:
    """Whether ``tensor`` is stored finer than the type ``than`` (4-bit): float or Q8_0."""
    import gguf

    kinds = gguf.GGMLQuantizationType
    return tensor.tensor_type != than and tensor.tensor_type in (kinds.F32, kinds.F16, kinds.Q8_0)


def _stored_type(stored_as: str) -> Any:
    import gguf

    if stored_as not in STORED_TYPES:
        raise ConfigurationError(
            f"a merged weight is stored as one of {', '.join(STORED_TYPES)}, not {stored_as!r}"
        )
    return gguf.GGMLQuantizationType[stored_as]


def merged_model_path(
    base: str | Path, adapter: str | Path, cache_dir: str | Path, *, stored_as: str = STORED_AS
) -> Path:
    """The merged GGUF of ``adapter`` on ``base`` in ``cache_dir``, its adapted weights stored
    as ``stored_as``, built on first use."""
    _stored_type(stored_as)
    base_file, adapter_file = Path(base), Path(adapter)
    for file in (base_file, adapter_file):
        if not file.is_file():
            raise ConfigurationError(f"{file}: no such model file")
    key = hashlib.sha256(
        f"{file_sha256(base_file)}:{file_sha256(adapter_file)}".encode()
    ).hexdigest()
    name = f"{base_file.stem}+{adapter_file.stem}-{key[:16]}.{stored_as}.gguf"
    target = Path(cache_dir) / name
    recorded = target.with_name(target.name + ".sha256")
    if not target.is_file():
        merge_lora(base_file, adapter_file, target, stored_as=stored_as)
        write_atomically(recorded, (file_sha256(target) + "\n").encode())
        return target
    found = file_sha256(target)
    if not recorded.is_file():  # merged before hashes were kept: trusted once, then checked
        write_atomically(recorded, (found + "\n").encode())
    elif (expected := recorded.read_text().strip()) != found:
        raise ConfigurationError(
            f"{target}: the merged model's SHA-256 is {found}, not {expected} as when it was "
            "merged: it was changed or damaged; delete it (and its .sha256) to merge again"
        )
    return target


def _reader(path: Path) -> Any:
    import gguf

    try:
        return gguf.GGUFReader(str(path))
    except (ValueError, OSError, KeyError, IndexError) as error:
        raise ConfigurationError(f"{path}: not a readable GGUF file: {error}") from None


def _adapter_pairs(adapter: Any, path: Path) -> tuple[float, dict[str, tuple[Any, Any]]]:
    """``(alpha, {base tensor name: (lora_a, lora_b)})`` of a GGUF LoRA."""
    import gguf

    kind = adapter.get_field(gguf.Keys.Adapter.TYPE)
    alpha = adapter.get_field(gguf.Keys.Adapter.LORA_ALPHA)
    if kind is None or kind.contents() != "lora" or alpha is None:
        raise ConfigurationError(f"{path}: not a GGUF LoRA adapter")
    halves: dict[str, dict[str, Any]] = {}
    for tensor in adapter.tensors:
        name, dot, which = tensor.name.rpartition(".")
        if not dot or which not in ("lora_a", "lora_b"):
            raise ConfigurationError(f"{path}: unexpected adapter tensor {tensor.name!r}")
        halves.setdefault(name, {})[which] = tensor
    pairs = {}
    for name, half in halves.items():
        if set(half) != {"lora_a", "lora_b"}:
            raise ConfigurationError(f"{path}: {name} has only one of lora_a and lora_b")
        pairs[name] = (half["lora_a"], half["lora_b"])
    return float(alpha.contents()), pairs


def _folded(weight: Any, lora_a: Any, lora_b: Any, alpha: float, name: str, stored: Any) -> Any:
    """``weight`` (dequantized, float32) plus the adapter's change, quantized to ``stored``."""
    import gguf
    import numpy as np

    dense = gguf.quants.dequantize(weight.data, weight.tensor_type).astype(np.float32)
    a = np.asarray(lora_a.data, dtype=np.float32)
    b = np.asarray(lora_b.data, dtype=np.float32)
    rank = a.shape[0]
    if b.shape != (dense.shape[0], rank) or a.shape != (rank, dense.shape[1]):
        raise ConfigurationError(
            f"the adapter's {name} ({b.shape[0]}x{rank} @ {rank}x{a.shape[1]}) does not fit "
            f"the base weight ({dense.shape[0]}x{dense.shape[1]}): trained on another model?"
        )
    dense += (alpha / rank) * (b @ a)
    return gguf.quants.quantize(dense, stored)


def merge_lora(
    base: str | Path, adapter: str | Path, out: str | Path, *, stored_as: str = STORED_AS
) -> Path:
    """Write ``base`` with ``adapter`` folded in to ``out`` (atomically), its adapted weights
    stored as ``stored_as``; return ``out``."""
    import gguf

    stored = _stored_type(stored_as)
    base_file, adapter_file, target = Path(base), Path(adapter), Path(out)
    model = _reader(base_file)
    alpha, pairs = _adapter_pairs(_reader(adapter_file), adapter_file)
    tensors = {t.name: t for t in model.tensors}
    unknown = sorted(set(pairs) - set(tensors))
    if unknown:
        raise ConfigurationError(
            f"{adapter_file}: adapts {unknown[0]}, which {base_file.name} does not have"
        )
    arch_field = model.get_field(gguf.Keys.General.ARCHITECTURE)
    if arch_field is None:
        raise ConfigurationError(f"{base_file}: no general.architecture")
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    os.close(handle)
    try:
        writer = gguf.GGUFWriter(partial, arch=arch_field.contents(), endianess=model.endianess)
        for field in model.fields.values():
            if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
                continue
            kind = field.types[0]
            sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
            writer.add_key_value(field.name, field.contents(), kind, sub_type=sub)
        for tensor in model.tensors:
            if tensor.name in pairs:
                folded = _folded(tensor, *pairs[tensor.name], alpha, tensor.name, stored)
                writer.add_tensor(tensor.name, folded, raw_dtype=stored)
            elif tensor.name == _EMBEDDING and stored_as == "Q4_0" and _finer(tensor, stored):
                dense = gguf.quants.dequantize(tensor.data, tensor.tensor_type)
                writer.add_tensor(
                    tensor.name, gguf.quants.quantize(dense, stored), raw_dtype=stored
                )
            else:
                writer.add_tensor(tensor.name, tensor.data, raw_dtype=tensor.tensor_type)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        os.chmod(partial, 0o644)  # mkstemp makes it private; a model file is not a secret
        os.replace(partial, target)
    finally:
        Path(partial).unlink(missing_ok=True)
    return target
