"""``cartagent tune``: tuning the query-understanding model; ``tune data`` writes its data set.

``cartagent tune data --out tune-data`` writes ``train.jsonl``, ``dev.jsonl``, ``test.jsonl``,
``card.json`` and ``card.md`` from the tau-bench store plus synthetic products, holding out
the labelled sets and WebShop's shopper queries (both shipped with cartagent), and prints the
card's summary.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from ..data import webshop_dev
from .search import locate_catalog
from .settings import run_settings

if TYPE_CHECKING:
    from ..tuning.training_config import TrainingConfig
    from ..tuning.training_data import Split

__all__ = ["tune"]

DEV_LOSS_ROWS = 100


CATALOG = click.option(
    "--catalog",
    default="tau",
    show_default=True,
    help="'tau' (the tau-bench store shipped with cartagent), 'none', or a products file or "
    "folder.",
)
"""Where training products come from (``tune data``, ``tune teacher``)."""


def out_option(default: str, help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option(
        "--out",
        type=click.Path(file_okay=False, path_type=Path),
        default=Path(default),
        show_default=True,
        help=help,
    )


@click.group("tune")
def tune() -> None:
    """Tune the query-understanding small model."""


@tune.command("data")
@CATALOG
@click.option(
    "--synthetic", type=int, default=500, show_default=True, help="Also N synthetic products."
)
@click.option("--size", type=int, default=5000, show_default=True, help="Examples to write.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--teacher",
    "teacher_files",
    type=click.Path(dir_okay=False, path_type=Path),
    multiple=True,
    help="Teacher-written rows (cartagent tune teacher's teacher.jsonl) to add, each in its "
    "product's split; repeatable.",
)
@out_option("tune-data", "Folder for the split files and the data card.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def data(
    catalog: str,
    synthetic: int,
    size: int,
    seed: int,
    teacher_files: tuple[Path, ...],
    out: Path,
    quiet: bool,
) -> None:
    """Write the query-understanding training set (train/dev/test JSON Lines and a card)."""
    from tqdm import tqdm

    from ..catalog import RowProblem
    from ..errors import ConfigurationError
    from ..tuning import build_dataset, held_out_requests, training_catalog, write_dataset
    from ..tuning.dataset import load_teacher_rows

    path = None if catalog == "none" else locate_catalog(None if catalog == "tau" else catalog)

    def report(problem: RowProblem) -> None:
        click.echo(f"{path}:{problem.line}: skipped: {problem.message}", err=True)

    webshop = webshop_dev()
    try:
        source = training_catalog(path, synthetic, seed, on_problem=report)
        teacher = [load_teacher_rows(file) for file in teacher_files]
        for rows in teacher:
            for line in rows.skipped:
                click.echo(line, err=True)
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
                teacher=teacher,
            )
        card = write_dataset(dataset, out)
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from error
    click.echo(card.summary())
    click.echo(f"wrote {out}: train.jsonl, dev.jsonl, test.jsonl, card.json, card.md")


TEACHERS = ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "openai")


@tune.command("teacher")
@CATALOG
@click.option(
    "--synthetic", type=int, default=0, show_default=True, help="Also N synthetic products."
)
@click.option("--count", type=int, default=200, show_default=True, help="Messages to keep.")
@click.option(
    "--model",
    "teacher",
    type=click.Choice(TEACHERS),
    default="qwen2.5-coder-1.5b",
    show_default=True,
    help="The teacher: a Qwen2.5-Coder instruct model in-process (the qwen extra), or the "
    "OpenAI-compatible server in CARTAGENT_LLM_BASE_URL (a larger model on a GPU).",
)
@click.option(
    "--styles",
    default="all",
    show_default=True,
    help="Comma-separated styles to write in, taken in turn: chatty, vague, typos, slang, "
    "terse, spanish, german, french; 'all' for every one.",
)
@click.option("--temperature", type=float, default=0.8, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@out_option("tune-data", "Folder for teacher.jsonl and teacher-card.json.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def teacher(
    catalog: str,
    synthetic: int,
    count: int,
    teacher: str,
    styles: str,
    temperature: float,
    seed: int,
    out: Path,
    quiet: bool,
) -> None:
    """Write training messages with a teacher model, labels first: each gold query is drawn
    from the catalog, the teacher writes what a shopper would type for it in a style (chatty,
    vague, typos, slang, terse, Spanish, German, French), and only messages that say their label
    back are kept (``teacher.jsonl``, in the shape of ``tune data``'s splits, and a card)."""
    import asyncio
    import json

    from tqdm import tqdm

    from ..assistant.language import detect
    from ..errors import ConfigurationError
    from ..tuning import held_out_requests, training_catalog
    from ..tuning.listing import listing_for
    from ..tuning.teacher import STYLES, TeacherCard, TeacherExample, write_teacher_data

    if count <= 0:
        raise click.BadParameter("must be at least 1", param_hint="--count")
    by_name = {style.name: style for style in STYLES}
    chosen = [name.strip() for name in styles.split(",") if name.strip()]
    if chosen == ["all"]:
        chosen = list(by_name)
    unknown = [name for name in chosen if name not in by_name]
    if unknown or not chosen:
        raise click.BadParameter(
            f"unknown style {', '.join(unknown) or '(none given)'}; choose from "
            f"{', '.join(by_name)}",
            param_hint="--styles",
        )
    path = None if catalog == "none" else locate_catalog(None if catalog == "tau" else catalog)
    try:
        source = training_catalog(path, synthetic, seed)
        listings = [found for p in source.products if (found := listing_for(p)) is not None]
        model = _teacher_model(teacher, temperature, seed)
        held_out = held_out_requests(webshop_dev())
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from error
    out.mkdir(parents=True, exist_ok=True)
    card = TeacherCard(teacher, seed)
    # Each kept message is written at once: a run stopped halfway keeps what it wrote.
    with (
        (out / "teacher.jsonl").open("w", encoding="utf-8") as written,
        tqdm(total=count, desc="kept", unit="msg", disable=quiet, file=sys.stderr) as bar,
    ):

        def keep(example: TeacherExample) -> None:
            written.write(json.dumps(example.record(), ensure_ascii=False) + "\n")
            written.flush()
            bar.update(1)

        try:
            asyncio.run(
                write_teacher_data(
                    model,
                    listings,
                    count=count,
                    seed=seed,
                    styles=[by_name[name] for name in chosen],
                    held_out=held_out,
                    language_of=detect,
                    card=card,
                    on_kept=keep,
                )
            )
        except KeyboardInterrupt:
            click.echo("stopped: what was kept so far is written", err=True)
        finally:
            (out / "teacher-card.json").write_text(json.dumps(card.to_json(), indent=2) + "\n")
    click.echo(card.summary())
    click.echo(f"wrote {out}: teacher.jsonl, teacher-card.json")


def _base_cache() -> Path:
    """Where a GGUF base is kept once dequantized for training: the data folder's cache."""
    return run_settings().data_dir / "cache" / "base-models"


def _teacher_model(name: str, temperature: float, seed: int) -> Any:
    settings = run_settings()
    if name == "openai":
        from ..llm.openai_compat import OpenAICompatibleModel

        endpoint = settings.llm
        if endpoint.base_url is None:
            raise click.UsageError(
                "--model openai needs CARTAGENT_LLM_BASE_URL, e.g. http://127.0.0.1:8080/v1"
            )
        return OpenAICompatibleModel(endpoint.base_url, endpoint.model, api_key=endpoint.api_key)
    from ..llm.llama_cpp import LlamaCppModel
    from ..llm.qwen import qwen_model_path

    path = qwen_model_path(name, cache_dir=settings.data_dir / "models")
    return LlamaCppModel(path, chat=True, temperature=temperature, seed=seed, max_tokens=400)


def _asked(config: TrainingConfig, train: Split, dev: Split) -> tuple[Split, Split]:
    """The train and dev splits as the configured model is asked them (rules-first: only the
    requests the rule parser leaves words of), with a line saying what was kept."""
    from ..tuning.training_data import asked

    rules_first = config.model.rules_first
    kept = asked(train, rules_first=rules_first), asked(dev, rules_first=rules_first)
    if rules_first:
        click.echo(
            f"rules first: training on the {len(kept[0].examples)} of {len(train.examples)} "
            f"train and {len(kept[1].examples)} of {len(dev.examples)} dev requests the rule "
            "parser leaves words of",
            err=True,
        )
    return kept


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


def _training_config(config_file: Path | None, overrides: dict[str, object]) -> TrainingConfig:
    """The --config file's settings with ``overrides``; a usage error naming the option at
    fault."""
    from ..errors import ConfigurationError
    from ..tuning.training_config import load_training_config

    try:
        config = load_training_config(config_file)
    except ConfigurationError as error:
        raise click.BadParameter(str(error), param_hint="--config") from None
    try:
        return config.with_overrides(overrides)
    except ConfigurationError as error:
        raise click.BadParameter(str(error), param_hint="--set") from None


def _split(data: Path, name: str) -> Split:
    """``<data>/<name>.jsonl``; a usage error on --data when it is missing or unusable."""
    from ..errors import ConfigurationError
    from ..tuning.training_data import load_split

    try:
        return load_split(data / f"{name}.jsonl")
    except ConfigurationError as error:
        raise click.BadParameter(str(error), param_hint="--data") from None


config_option = click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A TOML training config; defaults for anything it leaves out.",
)
data_option = click.option(
    "--data",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("tune-data"),
    show_default=True,
    help="The folder `tune data` wrote.",
)
sets_option = click.option(
    "--set", "sets", multiple=True, metavar="KEY=VALUE", help="e.g. sft.max_steps=50"
)


@tune.command("train")
@config_option
@data_option
@out_option("tune-runs/run", "The run folder; running again into it resumes from its checkpoint.")
@sets_option
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

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    config = _training_config(config_file, _overrides(sets))
    train_split, dev_split = _split(data, "train"), _split(data, "dev")
    try:
        for problem in (*train_split.skipped, *dev_split.skipped):
            click.echo(problem, err=True)
        train_split, dev_split = _asked(config, train_split, dev_split)
        sft = train_sft(
            config,
            train_split,
            out / "sft",
            dev=dev_split,
            progress=not quiet,
            base_cache=_base_cache(),
        )
        click.echo(
            f"SFT{' (already trained: reused)' if sft.reused else ''}: "
            f"{sft.steps} steps in {sft.seconds:.0f} s, final loss "
            f"{sft.losses[-1][1] if sft.losses else float('nan'):.4f}, dev loss "
            f"{sft.eval_loss if sft.eval_loss is not None else float('nan'):.4f} -> {sft.adapter}"
        )
        if dpo:
            from ..llm.packaged import PACKAGED_MODELS
            from ..tuning.dpo import gguf_answerer

            requests = train_split.examples[: config.dpo.requests]
            base = config.model.base
            style = config.model.prompt_style
            answerer = gguf_answerer(sft.adapter, base, style) if base in PACKAGED_MODELS else None
            result = train_dpo(
                config,
                sft.adapter,
                requests,
                out / "dpo",
                answerer=answerer,
                progress=not quiet,
                base_cache=_base_cache(),
            )
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
@click.option(
    "--card",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the adapter's card (its training record, file hash, git commit); "
    "default: beside the GGUF file, named like it with .json, where `--model tuned` looks for "
    "how to ask the adapter.",
)
def export(adapter: Path, out: Path | None, card: Path | None) -> None:
    """Write a trained adapter as a GGUF LoRA for llama.cpp (PEFT's folder serves vLLM as is),
    and its card."""
    import hashlib
    import json

    from ..errors import ConfigurationError
    from ..llm.registry import git_commit
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
    # Without its card, `--model tuned` would ask an adapter of one's own with the JSON prompt,
    # whatever prompt it was trained on.
    card = card or written.with_suffix(".json")
    digest = hashlib.sha256(written.read_bytes()).hexdigest()
    content = {**record, "gguf": written.name, "gguf_sha256": digest, "git_commit": git_commit()}
    card.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
    click.echo(f"wrote {card}")


def _registry(folder: Path | None) -> Any:
    from ..llm.registry import Registry

    return Registry(folder or run_settings().adapter.registry)


registry_option = click.option(
    "--registry",
    type=click.Path(file_okay=False, path_type=Path),
    help="The registry folder (default: CARTAGENT_REGISTRY, or 'registry' in the data folder).",
)


@tune.command("register")
@click.argument("adapter", type=click.Path(file_okay=False, path_type=Path))
@click.option("--name", default="search", show_default=True, help="The registered model's name.")
@click.option(
    "--metrics",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A JSON file of metrics to record with it (e.g. from `eval retrieval --json`).",
)
@click.option("--promote", is_flag=True, help="Point the 'production' alias at the new version.")
@registry_option
def register(
    adapter: Path, name: str, metrics: Path | None, promote: bool, registry: Path | None
) -> None:
    """Register a trained adapter as a new version, with its GGUF LoRA and its lineage."""
    import json

    from ..errors import ConfigurationError
    from ..tuning.base_model import load_base_config
    from ..tuning.export import export_gguf_lora

    store = _registry(registry)
    try:
        measured = json.loads(metrics.read_text(encoding="utf-8")) if metrics else None
        record = json.loads((adapter / "training.json").read_text(encoding="utf-8"))
        base_config = load_base_config(record["base_model"])

        def export(peft: Path, gguf: Path) -> Path:
            return export_gguf_lora(peft, base_config, gguf)

        version = store.register(adapter, name, export=export, metrics=measured)
        if promote:
            store.set_alias(name, "production", version.number)
    except FileNotFoundError as error:
        raise click.ClickException(f"{error.filename}: no such file") from None
    except (ConfigurationError, ValueError) as error:
        raise click.ClickException(str(error)) from error
    click.echo(f"registered {name} v{version.number} in {store.root}")
    click.echo(
        f"use it: CARTAGENT_SEARCH_ADAPTER={version.gguf} cartagent search --model tuned ..."
    )


@tune.command("models")
@registry_option
def models(registry: Path | None) -> None:
    """List the registered models: versions, aliases, base model, data hash, metrics."""
    store = _registry(registry)
    names = store.names()
    if not names:
        click.echo(f"no models registered in {store.root}")
    for name in names:
        aliases = store.aliases(name)
        for version in store.versions(name):
            tags = [a for a, n in aliases.items() if n == version.number]
            lineage = version.lineage
            data = str(((lineage.get("data") or {}).get("train") or {}).get("sha256"))[:12]
            commit = str(lineage.get("git_commit"))[:12]
            click.echo(
                f"{name} v{version.number}{' [' + ', '.join(tags) + ']' if tags else ''}  "
                f"{lineage.get('method')} on {lineage.get('base_model')}  "
                f"data {data}  commit {commit}  "
                f"{version.gguf}"
            )


@tune.command("promote")
@click.argument("name")
@click.argument("version", type=int)
@click.option("--alias", default="production", show_default=True)
@registry_option
def promote(name: str, version: int, alias: str, registry: Path | None) -> None:
    """Point an alias (default: production) at a registered version."""
    from ..errors import ConfigurationError

    try:
        _registry(registry).set_alias(name, alias, version)
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from error
    click.echo(f"{name}: {alias} -> v{version}")


def _floats(text: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected numbers separated by commas") from None


def _words(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


@tune.command("sweep")
@config_option
@data_option
@out_option("tune-runs/sweep", "The sweep folder; running again into it continues the sweep.")
@sets_option
@click.option("--method", type=click.Choice(["grid", "optuna"]), default="grid", show_default=True)
@click.option("--trials", type=int, help="Trials to run (default: the whole grid).")
@click.option("--lr", "learning_rates", default="1e-4,3e-4", show_default=True)
@click.option("--optimizers", default="adam,adamw", show_default=True)
@click.option("--schedules", default="cosine", show_default=True)
@click.option("--ranks", default="8,16", show_default=True)
@click.option("--steps", type=int, default=40, show_default=True, help="Training steps per trial.")
@click.option(
    "--dev-requests",
    type=int,
    default=60,
    show_default=True,
    help="Dev requests each finished trial is scored on (0: dev loss only).",
)
@click.option(
    "--dev-backend",
    type=click.Choice(["auto", "llama-cpp", "transformers"]),
    default="auto",
    show_default=True,
    help="What asks the trials' adapters: llama.cpp as served, or transformers (on a GPU "
    "when there is one); auto takes llama.cpp where it is installed.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Trials trained at once, each in its own process (a GPU has room for several); "
    "with more than one, no trial is stopped early.",
)
@click.option("--no-prune", is_flag=True, help="Never stop a bad trial early.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
def sweep(
    config_file: Path | None,
    data: Path,
    out: Path,
    sets: tuple[str, ...],
    method: str,
    trials: int | None,
    learning_rates: str,
    optimizers: str,
    schedules: str,
    ranks: str,
    steps: int,
    dev_requests: int,
    dev_backend: str,
    workers: int,
    no_prune: bool,
    quiet: bool,
) -> None:
    """Sweep learning rate x optimizer x schedule x rank; track in MLflow; write a report."""
    import os

    from ..errors import ConfigurationError
    from ..tuning.dev_eval import Backend, DevEvaluator, cases_from, default_backend, scores
    from ..tuning.sweep import SweepSpace, TrialResult, run_sweep
    from ..tuning.sweep_report import write_report

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    config = _training_config(config_file, {"sft.max_steps": steps, **_overrides(sets)})

    def report(trial: TrialResult) -> None:
        shown = ", ".join(f"{k} {v:.3f}" for k, v in trial.metrics.items())
        click.echo(f"trial {trial.number} {trial.params} {trial.state}: {shown}")

    try:
        space = SweepSpace(
            _floats(learning_rates),
            _words(optimizers),
            _words(schedules),
            [int(r) for r in _floats(ranks)],
        )
        train_split, dev_split = _asked(config, _split(data, "train"), _split(data, "dev"))
        # Dev loss on a slice: on a CPU, scoring all of dev would cost as much as training.
        loss_split = replace(dev_split, examples=dev_split.examples[:DEV_LOSS_ROWS])
        evaluate = None
        style = config.model.prompt_style
        backend = (
            default_backend(config.model.base)
            if dev_backend == "auto"
            else cast("Backend", dev_backend)
        )
        if dev_requests > 0 and dev_backend == "auto" and not scores(backend, style):
            click.echo(
                f"dev requests not scored: the {style!r} style needs llama.cpp's grammar and a "
                "packaged base; the trials are compared on dev loss",
                err=True,
            )
        elif dev_requests > 0:
            evaluate = DevEvaluator(
                tuple(cases_from(dev_split.examples[:dev_requests])),
                config.model.base,
                style,
                rules_first=config.model.rules_first,
                backend=backend,
                base_cache=_base_cache(),
            )
        result = run_sweep(
            config,
            space,
            train_split,
            loss_split,
            out,
            method=method,
            trials=trials,
            evaluate=evaluate,
            prune=not no_prune,
            progress=not quiet,
            on_trial=report,
            workers=workers,
            base_cache=_base_cache(),
        )
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from error
    written = write_report(result)
    if result.best is not None:
        click.echo(
            f"best: trial {result.best.number} {result.best.params} -> {result.best.adapter}"
        )
    click.echo(f"report: {written}")
    click.echo(f"tracking: mlflow ui --backend-store-uri {result.tracking_uri}")
