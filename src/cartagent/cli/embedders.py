"""The ``--embedder`` option: which text embedding model dense and hybrid search use.

The name comes from the option, else ``CARTAGENT_EMBEDDER``, else
:data:`~cartagent.retrieval.embeddings.DEFAULT_EMBEDDER`; converted models (the ONNX graphs)
are kept in ``<data folder>/cache/models``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..errors import ConfigurationError
from ..weight_loading import hide_weight_loading_bars
from .settings import run_settings

if TYPE_CHECKING:
    from ..retrieval import Embedder

F = TypeVar("F", bound=Callable[..., Any])

EMBEDDER_HELP = (
    "The text embedding model for dense and hybrid search: minilm (torch, fp32), minilm-onnx "
    "(ONNX Runtime, fp32) or minilm-int8 (ONNX Runtime, int8 weights)  "
    "[default: CARTAGENT_EMBEDDER, else the built-in default]."
)


ROUTER_EMBEDDER = "minilm-onnx"
"""What the assistant's router, its store-policy answers and the semantic cache embed with:
MiniLM on ONNX Runtime in fp32, whose vectors are torch's (within 1e-7), so the thresholds
chosen on those hold, and no torch is loaded (``make run`` installs none)."""


def embedder_option(function: F) -> F:
    """Add ``--embedder NAME`` (None when not given) to a command."""
    return click.option("--embedder", default=None, metavar="NAME", help=EMBEDDER_HELP)(function)


def embedder_name(option: str | None) -> str:
    """The embedder chosen by ``option``, the environment or the default."""
    from ..retrieval import DEFAULT_EMBEDDER

    return option or run_settings().embedder or DEFAULT_EMBEDDER


def model_cache() -> Path:
    """Where converted embedding models are kept: ``<data folder>/cache/models``."""
    return run_settings().data_dir / "cache" / "models"


def make_embedder(name: str, *, threads: int | None = None) -> Embedder:
    """The embedder ``name`` with the data folder's model cache (``click.BadParameter`` for an
    unknown name)."""
    from ..retrieval import EmbedderOptions, get_embedder

    try:
        made = get_embedder(name, EmbedderOptions(threads=threads, model_cache=model_cache()))
    except ConfigurationError as error:
        raise click.BadParameter(str(error), param_hint="--embedder") from None
    if name == "minilm":  # torch's: transformers loads it (lazily), with a bar unless told
        hide_weight_loading_bars()
    return made
