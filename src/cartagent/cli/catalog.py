"""``cartagent catalog build``: a catalog into a persistent index folder, incrementally.

``cartagent catalog build products.jsonl --out index/ --dense`` reads the source (default: the
tau-bench retail store, as for ``cartagent search``), reports each bad row on stderr as
``path:line: skipped: reason``, shows progress bars (``--quiet`` hides them) and ends with a
summary. Run again, it updates the folder: only what changed is indexed and embedded.
``cartagent search --index index/ 'request'`` searches the folder (hybrid when it is dense).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import ConfigurationError
from .embedders import embedder_name, embedder_option, make_embedder
from .search import locate_catalog

if TYPE_CHECKING:
    from ..catalog import RowProblem
    from ..indexing import BuildReport, Engine
    from ..retrieval import Embedder

__all__ = ["catalog"]


@click.group("catalog")
def catalog() -> None:
    """Build search indexes from a product catalog."""


@catalog.command("build")
@click.argument("source", required=False, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The index folder: created, or updated when it holds a build.",
)
@click.option(
    "--dense/--no-dense",
    default=False,
    show_default=True,
    help="Also build a dense (embedding) index for hybrid search; needs cartagent[dense].",
)
@embedder_option
@click.option(
    "--engine",
    type=click.Choice(["local", "spark"]),
    default="local",
    show_default=True,
    help="Read and embed in this process, or with Apache Spark.",
)
@click.option("--master", default=None, help="Spark master URL  [default: local[*]].")
@click.option("--conf", multiple=True, metavar="KEY=VALUE", help="A Spark setting (repeatable).")
@click.option("--batch-size", type=click.IntRange(min=1), default=1024, show_default=True)
@click.option("--full", is_flag=True, help="Rebuild everything, even what did not change.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
def build(
    source: Path | None,
    out: Path,
    dense: bool,
    embedder: str | None,
    engine: str,
    master: str | None,
    conf: Sequence[str],
    batch_size: int,
    full: bool,
    quiet: bool,
) -> None:
    """Index SOURCE (a products file or a tau-bench retail folder) into the folder --out.

    SOURCE is any file that `cartagent search --catalog` reads (.json, .jsonl, .csv, .parquet);
    by default the tau-bench store shipped with cartagent.
    """
    from ..catalog.source import rows_file
    from ..indexing import build_index

    path = source if source is not None else locate_catalog(None, option="SOURCE")
    shown = rows_file(path)
    chosen_engine = _engine(engine, master, conf)
    name = embedder_name(embedder)
    chosen_embedder = _embedder(name) if dense else None
    stderr = sys.stderr

    def report(problem: RowProblem) -> None:
        click.echo(f"{shown}:{problem.line}: skipped: {problem.message}", err=True)

    try:
        result = build_index(
            path,
            out,
            engine=chosen_engine,
            embedder=chosen_embedder,
            embedder_name=name if dense else None,
            batch_size=batch_size,
            full=full,
            progress=None if quiet else stderr,
            on_problem=report,
        )
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from error
    except ImportError as error:
        raise _missing(error) from error
    finally:
        chosen_engine.close()
    for line in summary(result):
        click.echo(line)


_SPARK_MODULES = frozenset(("pyspark", "pandas", "pyarrow", "py4j"))
_DENSE_MODULES = frozenset(("numpy", "faiss", "torch", "sentence_transformers", "transformers"))


def _missing(error: ImportError) -> click.ClickException:
    """What to install, when a missing module belongs to an extra."""
    module = (error.name or "").split(".")[0]
    if module in _SPARK_MODULES or error.name == "cartagent.indexing.spark":
        return click.ClickException(
            f"--engine spark needs PySpark: pip install 'cartagent[spark]' ({error})"
        )
    if module in _DENSE_MODULES:
        return click.ClickException(
            f"--dense needs the dense extra: pip install 'cartagent[dense]' ({error})"
        )
    return click.ClickException(str(error))


def summary(report: BuildReport) -> list[str]:
    """The lines ``catalog build`` ends with: products, what changed, bad rows, speed."""
    manifest, counts = report.manifest, report.manifest.counts
    dense = f", dense ({manifest.embedder.name})" if manifest.embedder else ""
    rows = "row" if counts.skipped_rows == 1 else "rows"
    return [
        f"indexed {manifest.products} products in {report.folder} ({report.mode}{dense})",
        f"added {counts.added}, updated {counts.updated}, removed {counts.removed}, "
        f"unchanged {counts.unchanged}; embedded {counts.embedded}; "
        f"skipped {counts.skipped_rows} bad {rows}",
        f"{manifest.seconds:.2f} s, {_rate(report.products_per_second)} products/s",
    ]


def _rate(per_second: float) -> str:
    """Whole numbers from 10 up; two significant digits below, where a few products over a
    Spark session's start-up make well under one a second, not 0."""
    return f"{per_second:.0f}" if per_second >= 10 else f"{per_second:.2g}"


def _engine(name: str, master: str | None, conf: Sequence[str]) -> Engine:
    from ..indexing import get_engine

    if name == "local" and (master is not None or conf):
        raise click.UsageError("--master and --conf apply to --engine spark only")
    settings: dict[str, str] = {}
    for item in conf:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--conf")
        settings[key.strip()] = value
    try:
        return get_engine(name, master=master, conf=settings)
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from error


def _embedder(name: str) -> Embedder:
    try:
        return make_embedder(name)
    except ImportError as error:
        raise _missing(error) from error
