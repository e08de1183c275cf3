"""The ``--model`` option: the query-understanding model a command builds, by name."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import click

from ..errors import ConfigurationError
from ..retrieval import UNDERSTANDERS, get_understander
from .settings import run_settings

if TYPE_CHECKING:
    from ..retrieval import Understander

__all__ = ["model_factory", "model_option", "understander_for", "untuned_warning"]

UNTUNED = frozenset({"smollm2", "gemma3-270m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"})
"""The general base models, asked with a few-shot prompt: nothing tuned them for this task."""


def untuned_warning(name: str) -> str | None:
    """The line to warn a shopper who picked ``--model name`` with, if it is untuned."""
    if name not in UNTUNED:
        return None
    return (
        f"warning: --model {name} is a general small model, not tuned for understanding "
        "shopping requests, and slow on CPU (seconds per request); --model rules (the default) "
        "or --model tuned is recommended"
    )


def understander_for(name: str) -> Understander:
    """The ``--model`` named ``name``, built; a setting it lacks is a usage error. An untuned
    model is built with a warning on stderr (:func:`untuned_warning`)."""
    warning = untuned_warning(name)
    if warning is not None:
        click.echo(warning, err=True)
    try:
        return get_understander(name, run_settings())
    except ConfigurationError as error:
        raise click.UsageError(f"--model {name}: {error}") from None


def model_factory(name: str) -> Callable[[], Understander]:
    """What builds the model ``name`` (one of ``UNDERSTANDERS``) with the run's settings."""
    return partial(UNDERSTANDERS[name], run_settings())


model_option = click.option(
    "--model",
    type=click.Choice(sorted(UNDERSTANDERS)),
    default="rules",
    show_default=True,
    help="How requests are understood: rules, or a small language model (smollm2, "
    "gemma3-270m in-process; qwen2.5-coder-0.5b, qwen2.5-coder-1.5b in-process from the qwen "
    "extra; tuned: SmolLM2 with cartagent's LoRA adapter; openai: the server in "
    "CARTAGENT_LLM_BASE_URL).",
)
"""The ``--model`` option every command that understands requests takes."""
