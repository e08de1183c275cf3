"""The ONNX graph of a BERT sentence encoder, assembled from its safetensors weights without torch.

:func:`build_bert_graph` reads ``model.safetensors`` with numpy (its format is an 8-byte
little-endian header length, a JSON header giving each tensor's dtype, shape and byte range,
then the raw little-endian data) and writes the graph sentence-transformers computes for a
BERT encoder with mean pooling and normalisation: embeddings (word + position + token type,
LayerNorm), each layer's self-attention and feed-forward blocks (GELU through ``Erf``, as
``hidden_act="gelu"`` is in transformers), the mean of the token vectors over the attention
mask, and L2 normalisation. Its inputs and output are those of the ``torch.onnx.export`` it
replaces: ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64, ``[batch, tokens]``) and
``sentence_embedding`` (float32, ``[batch, hidden]``). The weight matrices are initializers of
``MatMul`` nodes, so ONNX Runtime's dynamic quantization finds them.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..errors import ConfigurationError

if TYPE_CHECKING:
    from onnx import ModelProto

__all__ = ["BertShape", "build_bert_graph", "read_safetensors"]

_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4"}
# What transformers adds to the scores of padding tokens (the dtype's lowest value): exp()
# of it is exactly zero, so padding changes no token's attention.
_MASKED = float(np.finfo(np.float32).min)


def read_safetensors(path: Path) -> dict[str, npt.NDArray[Any]]:
    """The tensors of a safetensors file as numpy arrays (float tensors as float32)."""
    data = path.read_bytes()
    if len(data) < 8:
        raise ConfigurationError(f"{path} is not a safetensors file")
    (size,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(data[8 : 8 + size])
    except ValueError as error:
        raise ConfigurationError(f"{path}: unreadable safetensors header: {error}") from None
    body = memoryview(data)[8 + size :]
    tensors: dict[str, npt.NDArray[Any]] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(entry["dtype"])
        if dtype is None:
            raise ConfigurationError(f"{path}: {name} has unsupported dtype {entry['dtype']}")
        start, end = entry["data_offsets"]
        array = np.frombuffer(body[start:end], dtype=dtype).reshape(entry["shape"])
        tensors[name] = array.astype(np.float32) if array.dtype.kind == "f" else array.copy()
    return tensors


@dataclass(frozen=True)
class BertShape:
    """The parts of a BERT ``config.json`` the graph depends on."""

    layers: int
    hidden: int
    heads: int
    eps: float

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> BertShape:
        """The shape of a supported config; :class:`ConfigurationError` for anything else."""
        expected = {"hidden_act": "gelu", "position_embedding_type": "absolute"}
        for key, value in expected.items():
            if config.get(key, value) != value:
                raise ConfigurationError(f"only BERT with {key}={value!r} is supported")
        if config.get("model_type", "bert") != "bert":
            raise ConfigurationError(f"only BERT models are supported, not {config['model_type']}")
        shape = cls(
            layers=int(config["num_hidden_layers"]),
            hidden=int(config["hidden_size"]),
            heads=int(config["num_attention_heads"]),
            eps=float(config.get("layer_norm_eps", 1e-12)),
        )
        if shape.hidden % shape.heads:
            raise ConfigurationError("hidden_size is not a multiple of num_attention_heads")
        return shape


def _check_pooling(model_dir: Path) -> None:
    path = model_dir / "1_Pooling" / "config.json"
    if not path.is_file():
        return  # sentence-transformers' default for a plain transformer folder: mean pooling
    pooling = json.loads(path.read_text())
    modes = {key for key, on in pooling.items() if key.startswith("pooling_mode") and on}
    if modes != {"pooling_mode_mean_tokens"}:
        raise ConfigurationError(f"{path}: only mean pooling is supported, not {sorted(modes)}")


class _Graph:
    """Nodes and initializers, with fresh names for intermediate values."""

    def __init__(self, weights: dict[str, npt.NDArray[Any]]) -> None:
        from onnx import helper, numpy_helper

        self._helper = helper
        self._numpy_helper = numpy_helper
        self.weights = weights
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0
        self._named: set[str] = set()

    def constant(self, name: str, value: npt.NDArray[Any]) -> str:
        """An initializer ``name`` holding ``value`` (made once: later calls share it)."""
        if name not in self._named:
            self._named.add(name)
            array = np.ascontiguousarray(value)
            self.initializers.append(self._numpy_helper.from_array(array, name))
        return name

    def weight(self, name: str, *, transpose: bool = False) -> str:
        """The initializer of checkpoint tensor ``name`` (a Linear's weight transposed, so that
        ``x @ W`` is a plain MatMul)."""
        try:
            value = self.weights[name]
        except KeyError:
            raise ConfigurationError(f"the checkpoint has no tensor {name!r}") from None
        return self.constant(name, value.T if transpose else value)

    def op(self, op_type: str, *inputs: str, out: str | None = None, **attributes: Any) -> str:
        self._count += 1
        output = out or f"{op_type.lower()}_{self._count}"
        self.nodes.append(self._helper.make_node(op_type, list(inputs), [output], **attributes))
        return output

    def linear(self, x: str, prefix: str) -> str:
        product = self.op("MatMul", x, self.weight(f"{prefix}.weight", transpose=True))
        return self.op("Add", self.weight(f"{prefix}.bias"), product)

    def layer_norm(self, x: str, prefix: str, eps: float) -> str:
        return self.op(
            "LayerNormalization",
            x,
            self.weight(f"{prefix}.weight"),
            self.weight(f"{prefix}.bias"),
            axis=-1,
            epsilon=eps,
        )


def _scalar(value: float) -> npt.NDArray[np.float32]:
    return np.array(value, dtype=np.float32)


def _embeddings(g: _Graph, shape: BertShape) -> str:
    words = g.op("Gather", g.weight("embeddings.word_embeddings.weight"), "input_ids", axis=0)
    # Positions 0..tokens-1: the first rows of the position table.
    tokens = g.op("Shape", "input_ids", start=1, end=2)
    zero = g.constant("zero_1d", np.array([0], dtype=np.int64))
    positions = g.op("Slice", g.weight("embeddings.position_embeddings.weight"), zero, tokens, zero)
    types = g.op(
        "Gather", g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids", axis=0
    )
    summed = g.op("Add", g.op("Add", words, positions), types)
    return g.layer_norm(summed, "embeddings.LayerNorm", shape.eps)


def _attention(g: _Graph, x: str, prefix: str, bias: str, shape: BertShape) -> str:
    """Multi-head self-attention over ``x`` ``[batch, tokens, hidden]``, with ``bias`` added
    to the scores of padding tokens."""
    head = shape.hidden // shape.heads
    split = g.constant(f"{prefix}.split_heads", np.array([0, 0, shape.heads, head], np.int64))
    merge = g.constant(f"{prefix}.merge_heads", np.array([0, 0, shape.hidden], np.int64))

    def heads(name: str, perm: list[int]) -> str:
        projected = g.linear(x, f"{prefix}.self.{name}")
        return g.op("Transpose", g.op("Reshape", projected, split), perm=perm)

    query = heads("query", [0, 2, 1, 3])  # [batch, heads, tokens, head]
    key = heads("key", [0, 2, 3, 1])  # [batch, heads, head, tokens]
    value = heads("value", [0, 2, 1, 3])
    scale = g.constant(f"{prefix}.scale", _scalar(1.0 / math.sqrt(head)))
    scores = g.op("Add", g.op("Mul", g.op("MatMul", query, key), scale), bias)
    context = g.op("MatMul", g.op("Softmax", scores, axis=-1), value)
    merged = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merge)
    return g.linear(merged, f"{prefix}.output.dense")


def _gelu(g: _Graph, x: str) -> str:
    """x * 0.5 * (1 + erf(x / sqrt(2))): transformers' exact ``gelu``."""
    root2 = g.constant("gelu.sqrt2", _scalar(math.sqrt(2.0)))
    one = g.constant("gelu.one", _scalar(1.0))
    half = g.constant("gelu.half", _scalar(0.5))
    erf = g.op("Erf", g.op("Div", x, root2))
    return g.op("Mul", g.op("Mul", x, half), g.op("Add", erf, one))


def _layer(g: _Graph, x: str, index: int, bias: str, shape: BertShape) -> str:
    prefix = f"encoder.layer.{index}"
    attended = _attention(g, x, f"{prefix}.attention", bias, shape)
    x = g.layer_norm(g.op("Add", attended, x), f"{prefix}.attention.output.LayerNorm", shape.eps)
    inner = _gelu(g, g.linear(x, f"{prefix}.intermediate.dense"))
    out = g.linear(inner, f"{prefix}.output.dense")
    return g.layer_norm(g.op("Add", out, x), f"{prefix}.output.LayerNorm", shape.eps)


def _pooled(g: _Graph, tokens: str, mask: str) -> str:
    """The mean of the token vectors where ``mask`` is 1, L2-normalised (sentence-transformers'
    ``Pooling`` and ``Normalize``, with their 1e-9 and 1e-12 floors)."""
    mask3 = g.op("Unsqueeze", mask, g.constant("axis_2", np.array([2], np.int64)))
    axis1 = g.constant("axis_1", np.array([1], np.int64))
    summed = g.op("ReduceSum", g.op("Mul", tokens, mask3), axis1, keepdims=0)
    counted = g.op("ReduceSum", mask3, axis1, keepdims=0)
    floor = g.constant("count_floor", _scalar(1e-9))
    mean = g.op("Div", summed, g.op("Max", counted, floor))
    norm = g.op("ReduceL2", mean, axes=[1], keepdims=1)
    eps = g.constant("norm_floor", _scalar(1e-12))
    return g.op("Div", mean, g.op("Max", norm, eps), out="sentence_embedding")


def build_bert_graph(model_dir: Path, opset: int = 17) -> ModelProto:
    """The ONNX graph (opset ``opset``, at least 17 for ``LayerNormalization``) of the
    sentence-transformers BERT model in ``model_dir``: ``config.json``, ``model.safetensors``
    and, if present, ``1_Pooling/config.json`` (which must ask for mean pooling).

    Raises :class:`ConfigurationError` when onnx is not installed or the model is not a BERT
    encoder with mean pooling.
    """
    try:
        from onnx import TensorProto, checker, helper
    except ImportError as error:
        raise ConfigurationError(f"building the MiniLM graph needs onnx: {error}") from None
    try:
        config = json.loads((model_dir / "config.json").read_text())
    except (OSError, ValueError) as error:
        raise ConfigurationError(f"{model_dir}: no readable config.json: {error}") from None
    shape = BertShape.from_config(config)
    _check_pooling(model_dir)
    g = _Graph(read_safetensors(model_dir / "model.safetensors"))
    # Padding tokens get the lowest score, real ones 0: (1 - mask) * lowest, [batch, 1, 1, tokens]
    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    one = g.constant("mask.one", _scalar(1.0))
    lowest = g.constant("mask.lowest", _scalar(_MASKED))
    padding = g.op("Mul", g.op("Sub", one, mask), lowest)
    bias = g.op("Unsqueeze", padding, g.constant("axes_1_2", np.array([1, 2], np.int64)))
    x = _embeddings(g, shape)
    for index in range(shape.layers):
        x = _layer(g, x, index, bias, shape)
    _pooled(g, x, mask)
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info(
        "sentence_embedding", TensorProto.FLOAT, ["batch", shape.hidden]
    )
    graph = helper.make_graph(g.nodes, "sentence_embedding", inputs, [output], g.initializers)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="cartagent",
    )
    model.ir_version = min(model.ir_version, 8)  # readable by every onnxruntime 1.x we allow
    checker.check_model(model)
    return model
