"""No progress bar for reading a model's weights from disk.

transformers 5 draws a "Loading weights 103/103" bar each time it loads a model (MiniLM,
a tuning base): a fixed second of start-up, not work a user asked to watch. Downloads and
training keep their bars.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["hide_weight_loading_bars"]

LOADING_BARS = frozenset({"Loading weights", "Loading checkpoint shards"})

TqdmHook = Callable[[Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any]


def hide_weight_loading_bars() -> None:
    """From now on, transformers' weight-loading bars draw nothing (others are untouched).

    Idempotent; nothing to do without transformers, or with one older than 5 (no such bar).
    """
    try:
        from transformers.utils import logging
    except ImportError:
        return
    set_hook: Callable[[TqdmHook | None], TqdmHook | None] | None = getattr(
        logging, "set_tqdm_hook", None
    )
    if set_hook is None:
        return
    previous = set_hook(None)
    set_hook(previous if isinstance(previous, _Quiet) else _Quiet(previous))


class _Quiet:
    """A tqdm hook that disables the weight-loading bars and hands every bar on to ``inner``
    (the hook it replaced), if any."""

    def __init__(self, inner: TqdmHook | None) -> None:
        self.inner = inner

    def __call__(
        self, factory: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        if kwargs.get("desc") in LOADING_BARS:
            kwargs = {**kwargs, "disable": True}
        if self.inner is not None:
            return self.inner(factory, args, kwargs)
        return factory(*args, **kwargs)
