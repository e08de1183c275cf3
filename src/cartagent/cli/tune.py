"""``cartagent tune``: tuning the query-understanding model; ``tune data`` writes its data set.

``cartagent tune data --out tune-data`` writes ``train.jsonl``, ``dev.jsonl``, ``test.jsonl``,
``card.json`` and ``card.md`` from the tau-bench store plus synthetic products, holding out
the labelled sets (and WebShop's file when it is found beside the repository), and prints the
card's summary.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .evaluate import _locate_webshop
from .search import locate_catalog

__all__ = ["tune"]


@click.group("tune")
def tune() -> None:
    """Tune the query-understanding small model."""


@tune.command("data")
@click.option(
    "--catalog",
    default="tau",
    show_default=True,
    help="'tau' (the tau-bench store in shared/data), 'none', or a products file or folder.",
)
@click.option(
    "--synthetic", type=int, default=500, show_default=True, help="Also N synthetic products."
)
@click.option("--size", type=int, default=5000, show_default=True, help="Examples to write.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("tune-data"),
    show_default=True,
    help="Folder for the split files and the data card.",
)
@click.option("--quiet", is_flag=True, help="No progress bar.")
def data(catalog: str, synthetic: int, size: int, seed: int, out: Path, quiet: bool) -> None:
    """Write the query-understanding training set (train/dev/test JSON Lines and a card)."""
    from tqdm import tqdm

    from ..catalog.loaders import RowProblem
    from ..errors import ConfigurationError
    from ..tuning import build_dataset, held_out_requests, training_catalog, write_dataset

    path: Path | None = None
    if catalog == "tau":
        path = locate_catalog(None)
    elif catalog != "none":
        path = Path(catalog).expanduser()

    def report(problem: RowProblem) -> None:
        click.echo(f"{path}:{problem.line}: skipped: {problem.message}", err=True)

    webshop = _locate_webshop(None)
    try:
        source = training_catalog(path, synthetic, seed, on_problem=report)
        held_out = held_out_requests(webshop)
        with tqdm(total=size, desc="examples", unit="ex", disable=quiet, file=sys.stderr) as bar:

            def advance(count: int) -> None:
                bar.update(count)

            dataset = build_dataset(
                source.products,
                size=size,
                seed=seed,
                held_out=held_out,
                origins=source.origins,
                progress=advance,
            )
        card = write_dataset(dataset, out)
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from error
    if webshop is None:
        click.echo(
            "note: no WebShop file found; only the packaged labelled sets are held out", err=True
        )
    click.echo(card.summary())
    click.echo(f"wrote {out}: train.jsonl, dev.jsonl, test.jsonl, card.json, card.md")


def _overrides(pairs: tuple[str, ...]) -> dict[str, object]:
    import tomllib

    values: dict[str, object] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r}: expected KEY=VALUE", param_hint="--set")
        try:
            values[key.strip()] = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            values[key.strip()] = raw
    return values


@tune.command("train")
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A TOML training config; defaults for anything it leaves out.",
)
@click.option(
    "--data",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("tune-data"),
    show_default=True,
    help="The folder `tune data` wrote.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("tune-runs/run"),
    show_default=True,
    help="The run folder; running again into it resumes from its last checkpoint.",
)
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="e.g. sft.max_steps=50")
@click.option("--dpo/--no-dpo", default=True, show_default=True, help="DPO after SFT.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
def train(
    config_file: Path | None, data: Path, out: Path, sets: tuple[str, ...], dpo: bool, quiet: bool
) -> None:
    """LoRA SFT on the train split, then DPO on the SFT model's own mistakes."""
    import os

    from ..errors import ConfigurationError
    from ..tuning.dpo import train_dpo
    from ..tuning.sft import train_sft
    from ..tuning.training_config import load_training_config
    from ..tuning.training_data import load_split

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        config = load_training_config(config_file).with_overrides(_overrides(sets))
        train_split = load_split(data / "train.jsonl")
        dev_split = load_split(data / "dev.jsonl")
        for problem in (*train_split.skipped, *dev_split.skipped):
            click.echo(problem, err=True)
        sft = train_sft(config, train_split, out / "sft", dev=dev_split, progress=not quiet)
        click.echo(
            f"SFT: {sft.steps} steps in {sft.seconds:.0f} s, final loss "
            f"{sft.losses[-1][1] if sft.losses else float('nan'):.4f}, dev loss "
            f"{sft.eval_loss if sft.eval_loss is not None else float('nan'):.4f} -> {sft.adapter}"
        )
        if dpo:
            requests = train_split.examples[: config.dpo.requests]
            result = train_dpo(config, sft.adapter, requests, out / "dpo", progress=not quiet)
            click.echo(
                f"DPO: {result.pairs} pairs from {len(requests)} requests, {result.steps} steps "
                f"in {result.seconds:.0f} s -> {result.adapter}"
            )
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from error


@tune.command("export")
@click.argument("adapter", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The GGUF LoRA file to write (default: ADAPTER/adapter.gguf).",
)
def export(adapter: Path, out: Path | None) -> None:
    """Write a trained adapter as a GGUF LoRA for llama.cpp (PEFT's folder serves vLLM as is)."""
    import json

    from ..errors import ConfigurationError
    from ..tuning.base_model import load_base_config
    from ..tuning.export import export_gguf_lora

    target = out or adapter / "adapter.gguf"
    try:
        record = json.loads((adapter / "training.json").read_text(encoding="utf-8"))
        written = export_gguf_lora(adapter, load_base_config(record["base_model"]), target)
    except FileNotFoundError:
        raise click.ClickException(f"{adapter}: no training.json (not a cartagent run)") from None
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from error
    click.echo(f"wrote {written} ({written.stat().st_size / 1e6:.1f} MB)")
