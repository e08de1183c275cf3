"""``build_index(source, out)``: a catalog source into a persistent, searchable index folder.

The folder's layout is :mod:`cartagent.retrieval.index_folder`'s. When ``out`` already holds a build
the new one is incremental: each product's :func:`~cartagent.indexing.fingerprints.content_hash`
is compared with the previous build's, so unchanged products are neither re-indexed nor
re-embedded, changed ones are replaced, new ones added and ids the source no longer has removed.
``full=True`` (or a previous build of another format or embedder) rebuilds what it must.

Crash safety: the build is written into a new folder beside ``out`` (the previous lexical
index's immutable segment files are hard-linked into it, its other files copied), its manifest
last; only then is it renamed into place. Until that rename the previous build stays whole and
searchable; a build that stops early leaves it untouched, and the next build clears what an
interrupted one left. One build of a folder runs at a time (a lock file beside it).

Progress (tqdm bars: products read, embedded, indexed, each with its rate) goes to ``progress``
when given; each bad row goes to ``on_problem`` and is counted in the manifest.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..catalog import RowProblem
from ..errors import ConfigurationError
from ..retrieval import (
    DENSE_FOLDER,
    FINGERPRINTS_FILE,
    FORMAT_VERSION,
    LEXICAL_FOLDER,
    MANIFEST_FILE,
    BuildCounts,
    EmbedderInfo,
    LexicalIndex,
    LexicalWriter,
    Manifest,
    read_manifest,
)
from .fingerprints import FingerprintStore
from .local_engine import LocalEngine
from .prepared import Engine, PreparedBatch, ProblemSink

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..retrieval import DenseIndex, Embedder

__all__ = ["BuildReport", "build_index"]

_SEGMENT_FILE = re.compile(r"[0-9a-f]{32}\.")  # tantivy never rewrites these: safe to hard-link
_TANTIVY_LOCKS = frozenset((".tantivy-writer.lock", ".tantivy-meta.lock"))


@dataclass(frozen=True)
class BuildReport:
    """What a build wrote (its manifest), where, why it was full or incremental, and bad rows."""

    folder: Path
    manifest: Manifest
    problems: tuple[RowProblem, ...]
    mode: str
    """``incremental``, or why the build was full (``no previous build``, ``--full``...)."""

    @property
    def products_per_second(self) -> float:
        """Products in the source per second of the whole build."""
        seconds = self.manifest.seconds
        total = self.manifest.products
        return total / seconds if seconds > 0 else 0.0


def build_index(
    source: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    engine: Engine | None = None,
    embedder: Embedder | None = None,
    embedder_name: str | None = None,
    batch_size: int = 1024,
    full: bool = False,
    progress: TextIO | None = None,
    on_problem: ProblemSink | None = None,
) -> BuildReport:
    """Build (or update) the index folder ``out`` from ``source``; see the module notes.

    ``engine`` defaults to :class:`~cartagent.indexing.local_engine.LocalEngine`. With an
    ``embedder`` a dense index is built too; ``embedder_name`` (default: its class name) is
    recorded so a search can pick the same embedder, and a previous build's vectors are reused
    only when both name and size match. Raises :class:`~cartagent.errors.ConfigurationError`
    for an unreadable source, a bad ``batch_size``, or an ``out`` that is not a build folder.
    """
    started = time.perf_counter()
    if batch_size < 1:
        raise ConfigurationError(f"batch_size must be at least 1, not {batch_size}")
    source_path = Path(source).absolute()
    out = Path(out).absolute()
    if out.exists() and not out.is_dir():
        raise ConfigurationError(f"{out} exists and is not a folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    info = None
    if embedder is not None:
        info = EmbedderInfo(name=embedder_name or type(embedder).__name__, dim=embedder.dim)
    with _exclusive(out):
        _recover(out)
        previous, mode = _previous(out, full)
        work = out.parent / f".{out.name}.building-{secrets.token_hex(4)}"
        work.mkdir()
        try:
            job = _Job(
                source=source_path,
                work=work,
                previous=previous,
                engine=engine or LocalEngine(),
                embedder=embedder,
                info=info,
                batch_size=batch_size,
                progress=progress,
                on_problem=on_problem,
            )
            manifest = job.run(started)
            _sync_tree(work)
            _swap(work, out)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        finally:
            if previous is not None:
                previous.fingerprints.close()
    return BuildReport(out, manifest, tuple(job.problems), mode)


# ------------------------------------------------------------------------------- the job


@dataclass
class _Previous:
    folder: Path
    manifest: Manifest
    fingerprints: FingerprintStore


class _Unknown:
    """``wanted`` for an incremental build: fingerprints the previous build has no vector for.

    A plain object holding a set (not a closure over a database), so an engine may pickle it.
    """

    def __init__(self, known: set[str]) -> None:
        self._known = known

    def __call__(self, fingerprint: str) -> bool:
        return fingerprint not in self._known


class _Job:
    """One build's state: counts, problems, the writers, and the vectors still to index."""

    def __init__(
        self,
        *,
        source: Path,
        work: Path,
        previous: _Previous | None,
        engine: Engine,
        embedder: Embedder | None,
        info: EmbedderInfo | None,
        batch_size: int,
        progress: TextIO | None,
        on_problem: ProblemSink | None,
    ) -> None:
        self.source = source
        self.work = work
        self.previous = previous
        self.engine = engine
        self.embedder = embedder
        self.info = info
        self.batch_size = batch_size
        self.progress = progress
        self.on_problem = on_problem
        self.problems: list[RowProblem] = []
        self.counts: dict[str, int] = dict.fromkeys(BuildCounts.model_fields, 0)
        self.stages: dict[str, float] = dict.fromkeys(("prepare", "index", "commit", "dense"), 0.0)
        self.dense_ids: list[str] = []
        self.dense_vectors: list[npt.NDArray[np.float32]] = []

    def run(self, started: float) -> Manifest:
        previous = self.previous
        old_dense = self._reusable_dense()
        wanted = _Unknown(previous.fingerprints.hashes()) if previous and old_dense else None
        fingerprints = FingerprintStore.create(self.work / FINGERPRINTS_FILE)
        lexical_folder = self.work / LEXICAL_FOLDER
        if previous is not None:
            _link_tree(previous.folder / LEXICAL_FOLDER, lexical_folder)
        writer = LexicalWriter(lexical_folder, create=previous is None)
        try:
            with _Bars(self.progress, dense=self.embedder is not None) as bars:
                self._index_batches(fingerprints, writer, wanted, bars)
                t0 = time.perf_counter()
                removed = previous.fingerprints.missing(fingerprints) if previous else []
                for product_id in removed:
                    writer.delete(product_id)
                self.counts["removed"] = len(removed)
                lexical = writer.commit()
                t1 = time.perf_counter()
                self.stages["commit"] = t1 - t0
                if self.embedder is not None:
                    self._write_dense(old_dense, removed, lexical)
                self.stages["dense"] = time.perf_counter() - t1
        except BaseException:
            writer.discard()  # its threads must stop before the folder is deleted
            raise
        finally:
            fingerprints.close()
        products = len(lexical)
        manifest = Manifest(
            format=FORMAT_VERSION,
            source=str(self.source),
            engine=_engine_name(self.engine),
            embedder=self.info,
            products=products,
            incremental=previous is not None,
            built_at=datetime.now(UTC),
            seconds=round(time.perf_counter() - started, 3),
            counts=BuildCounts(**self.counts),
            stages={name: round(seconds, 3) for name, seconds in self.stages.items()},
        )
        temporary = self.work / f".{MANIFEST_FILE}.tmp"
        temporary.write_text(manifest.model_dump_json(indent=2))
        os.replace(temporary, self.work / MANIFEST_FILE)
        return manifest

    def _index_batches(
        self,
        fingerprints: FingerprintStore,
        writer: LexicalWriter,
        wanted: Callable[[str], bool] | None,
        bars: _Bars,
    ) -> None:
        batches = self.engine.prepare(
            self.source,
            embedder=self.embedder,
            batch_size=self.batch_size,
            on_problem=lambda problem: self._problem(problem, bars),
            wanted=wanted,
        )
        try:
            while True:
                t0 = time.perf_counter()
                batch = next(batches, None)
                t1 = time.perf_counter()
                self.stages["prepare"] += t1 - t0
                if batch is None:
                    break
                self._check(batch)
                bars.read.update(len(batch))
                embedded = self._take(batch, fingerprints, writer, wanted, bars)
                if bars.embed is not None:
                    bars.embed.update(embedded)
                self.stages["index"] += time.perf_counter() - t1
        finally:
            close = getattr(batches, "close", None)
            if close is not None:
                close()  # a generator engine releases what it holds (a Spark job, files)

    def _problem(self, problem: RowProblem, bars: _Bars) -> None:
        self.problems.append(problem)
        self.counts["skipped_rows"] += 1
        if self.on_problem is not None:
            with bars.paused():
                self.on_problem(problem)

    def _check(self, batch: PreparedBatch) -> None:
        if len(batch.hashes) != len(batch.products):
            raise RuntimeError("the engine gave a batch whose hashes do not match its products")
        if self.embedder is not None and (
            batch.vectors is None or batch.vectors.shape != (len(batch), self.embedder.dim)
        ):
            raise RuntimeError("the engine gave a batch without one vector per product")

    def _take(
        self,
        batch: PreparedBatch,
        fingerprints: FingerprintStore,
        writer: LexicalWriter,
        wanted: Callable[[str], bool] | None,
        bars: _Bars,
    ) -> int:
        """Index what changed in ``batch``; returns how many of its products were embedded."""
        ids = [product.id for product in batch.products]
        before = self.previous.fingerprints.lookup(ids) if self.previous else {}
        taken = fingerprints.lookup(ids)
        pairs: list[tuple[str, str]] = []
        vector_rows: list[int] = []
        written = embedded = 0
        for row, (product, fingerprint) in enumerate(
            zip(batch.products, batch.hashes, strict=True)
        ):
            if product.id in taken:
                self._problem(
                    RowProblem(0, f"id: product {product.id!r} appears more than once; skipped"),
                    bars,
                )
                continue
            taken[product.id] = fingerprint
            pairs.append((product.id, fingerprint))
            old = before.get(product.id)
            if old == fingerprint:
                self.counts["unchanged"] += 1
            elif old is None:
                self.counts["added"] += 1
                writer.add(product)
                written += 1
            else:
                self.counts["updated"] += 1
                writer.replace(product)
                written += 1
            if self.embedder is not None and (wanted is None or wanted(fingerprint)):
                embedded += 1
                vector_rows.append(row)
        fingerprints.add(pairs)
        if vector_rows and batch.vectors is not None:
            self.dense_ids.extend(ids[row] for row in vector_rows)
            self.dense_vectors.append(batch.vectors[vector_rows])
        self.counts["embedded"] += embedded
        bars.index.update(written)
        return embedded

    def _reusable_dense(self) -> DenseIndex | None:
        """The previous build's dense index, when its vectors can be kept."""
        previous, embedder = self.previous, self.embedder
        if previous is None or embedder is None or previous.manifest.embedder != self.info:
            return None
        from ..retrieval import DenseIndex

        try:
            return DenseIndex.open(previous.folder / DENSE_FOLDER, embedder)
        except (OSError, ValueError):
            return None  # unreadable or from another embedder: embed everything again

    def _write_dense(
        self, old: DenseIndex | None, removed: list[str], lexical: LexicalIndex
    ) -> None:
        import numpy as np

        from ..retrieval import DenseIndex

        if self.embedder is None:
            return
        dim = self.embedder.dim
        vectors = (
            np.concatenate(self.dense_vectors)
            if self.dense_vectors
            else np.zeros((0, dim), dtype=np.float32)
        )
        if old is not None:
            dense = old.updated(self.dense_ids, vectors, remove=removed)
        else:
            dense = DenseIndex.from_vectors(self.dense_ids, vectors, self.embedder)
        self.dense_vectors.clear()
        if len(dense) != len(lexical):
            raise RuntimeError(
                f"the dense index has {len(dense)} products and the lexical {len(lexical)}"
            )
        dense.save(self.work / DENSE_FOLDER)


def _engine_name(engine: Engine) -> str:
    name = type(engine).__name__
    return name.removesuffix("Engine").lower() or name


# ------------------------------------------------------------------------------- progress


class _Bars:
    """The build's tqdm bars (read, embed, index); all disabled without a stream."""

    def __init__(self, stream: TextIO | None, *, dense: bool) -> None:
        from tqdm import tqdm

        options: dict[str, Any] = {
            "file": stream,
            "disable": stream is None,
            "unit": " products",
            "dynamic_ncols": True,
        }
        names = ["read", "embed", "index"] if dense else ["read", "index"]
        bars = {
            name: tqdm(desc=f"{name:<5}", position=i, **options) for i, name in enumerate(names)
        }
        self._stream = stream
        self._all = list(bars.values())
        self.read = bars["read"]
        self.embed = bars.get("embed")
        self.index = bars["index"]

    def __enter__(self) -> _Bars:
        return self

    def __exit__(self, *_: object) -> None:
        for bar in self._all:
            bar.close()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Clear the bars while something else writes to the terminal, then redraw them."""
        for bar in self._all:
            bar.clear()
        try:
            yield
        finally:
            for bar in self._all:
                bar.refresh()


# ------------------------------------------------------------------------------- the folder


@contextmanager
def _exclusive(out: Path) -> Iterator[None]:
    """Hold a lock beside ``out`` (POSIX) so two builds of one folder never interleave."""
    if sys.platform == "win32":
        yield
        return
    import fcntl

    with (out.parent / f".{out.name}.lock").open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigurationError(f"another build of {out} is running") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _recover(out: Path) -> None:
    """Clear what an interrupted build left beside ``out`` (the lock is held)."""
    for stale in out.parent.glob(f".{out.name}.building-*"):
        shutil.rmtree(stale, ignore_errors=True)
    for replaced in sorted(out.parent.glob(f".{out.name}.previous-*")):
        if not out.exists() and (replaced / MANIFEST_FILE).is_file():
            os.rename(replaced, out)  # stopped between the two renames of _swap
        else:
            shutil.rmtree(replaced, ignore_errors=True)


def _previous(out: Path, full: bool) -> tuple[_Previous | None, str]:
    """The build in ``out`` to update, or None and why the build is full."""
    if not out.exists():
        return None, "no previous build"
    if not (out / MANIFEST_FILE).is_file():
        if any(out.iterdir()):
            raise ConfigurationError(
                f"{out} is not empty and holds no catalog build; choose another folder"
            )
        return None, "no previous build"
    if full:
        return None, "--full"
    try:
        manifest = read_manifest(out)
        LexicalIndex.open(out / LEXICAL_FOLDER)
        fingerprints = FingerprintStore.open(out / FINGERPRINTS_FILE)
    except (OSError, ValueError, ConfigurationError) as error:
        return None, f"the previous build cannot be updated ({error})"
    return _Previous(out, manifest, fingerprints), "incremental"


def _link_tree(source: Path, target: Path) -> None:
    """Copy a tantivy folder cheaply: hard links for segment files, copies for the rest."""
    target.mkdir()
    for item in source.iterdir():
        if item.name in _TANTIVY_LOCKS or not item.is_file():
            continue
        if _SEGMENT_FILE.match(item.name):
            try:
                os.link(item, target / item.name)
                continue
            except OSError:
                pass  # no hard links here (another device, a file system without them)
        shutil.copy2(item, target / item.name)


def _sync_tree(folder: Path) -> None:
    """fsync every file and folder under ``folder`` before it is renamed into place."""
    if sys.platform == "win32":
        return
    for root, _dirs, files in os.walk(folder):
        for name in files:
            descriptor = os.open(os.path.join(root, name), os.O_RDONLY)
            try:
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
        descriptor = os.open(root, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _swap(work: Path, out: Path) -> None:
    """Rename the finished build ``work`` to ``out``, removing the build it replaces."""
    if not out.exists():
        os.rename(work, out)
        return
    replaced = out.parent / f".{out.name}.previous-{secrets.token_hex(4)}"
    os.rename(out, replaced)
    os.rename(work, out)
    shutil.rmtree(replaced, ignore_errors=True)
