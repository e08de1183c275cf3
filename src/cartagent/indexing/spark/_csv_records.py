"""CSV: Spark's text reader, records found across partitions, then grouped as flat rows.

A quoted cell may hold line breaks, so a partition (a byte range) may begin inside a record.
A first pass parses each partition twice, as if it began outside and inside a quoted cell;
the driver then follows the true state from the file's start, learns where each partition's
first and last whole records lie, and parses the records cut by a partition boundary (their
pieces came back with the first pass). A second pass yields each partition's whole records.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NamedTuple

from pyspark import RDD

from ...catalog import RowProblem
from ...catalog.rows import check_columns, physical_lines, unreadable_record
from ..prepared import ProblemSink
from ._flat_rows import products_from_flat
from ._sources import Job, text_lines

__all__ = ["read_csv"]


class _Lines(NamedTuple):
    """A partition's physical lines, up to the first Spark line that is not UTF-8."""

    lines: list[str]
    rows: int  # Spark lines read
    bad: bool  # whether reading stopped at bytes that are not UTF-8
    block: int | None  # the partition's first byte in the file


def _partition_lines(rows: Iterable[Any]) -> _Lines:
    lines: list[str] = []
    block, count = None, 0
    for value, start, raw in rows:
        if block is None:
            block = start
        if value is None:
            if start == 0 and count == 0:  # the local loader keeps what precedes on line 1
                lines = physical_lines(_valid_prefix(bytes(raw)) + "\n")
                lines[-1] = lines[-1].removesuffix("\n")
            return _Lines(lines, count, True, block)
        count += 1
        lines.extend(physical_lines(value + "\n"))  # Spark drops each line's \n
    return _Lines(lines, count, False, block)


def _valid_prefix(data: bytes) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError as error:
        return data[: error.start].decode()


class _Feed:
    """Lines for ``csv.reader`` that notes when the reader asks for more than there is."""

    def __init__(self, lines: Sequence[str], quoted: bool) -> None:
        self._lines = iter(lines)
        self._quoted = quoted
        self.done = False

    def __iter__(self) -> _Feed:
        return self

    def __next__(self) -> str:
        try:
            line = next(self._lines)
        except StopIteration:
            self.done = True
            raise
        if self._quoted:  # begin inside a quoted cell
            self._quoted = False
            return '"' + line
        return line


class _Walk(NamedTuple):
    """How a partition parses from one starting state."""

    lead: int  # lines ending a record begun earlier; -1: all of them (it does not end here)
    lead_text: str
    open: int | None  # index of the line starting a record the partition's end cuts
    open_text: str
    error: tuple[int, str] | None  # csv's error: (its record's first line, -1 the lead; why)
    first: list[str] | None  # the first whole record (the header, in the first partition)


def _walk(lines: list[str], quoted: bool) -> _Walk:
    if not lines:
        return _Walk(-1 if quoted else 0, "", None, "", None, None)
    feed = _Feed(lines, quoted)
    reader = csv.reader(feed)
    lead, first, start = 0, None, 0
    try:
        for cells in reader:
            if quoted and not lead:
                if feed.done:
                    return _Walk(-1, "".join(lines), None, "", None, None)
                lead = start = reader.line_num
                continue
            if feed.done:
                return _Walk(
                    lead, "".join(lines[:lead]), start, "".join(lines[start:]), None, first
                )
            if first is None:
                first = cells
            start = reader.line_num
    except csv.Error as error:
        where = -1 if quoted and not lead else start
        return _Walk(lead, "".join(lines[:lead]), None, "", (where, str(error)), first)
    return _Walk(lead, "".join(lines[:lead]), None, "", None, first)


class _Scan(NamedTuple):
    part: int
    block: int
    lines: int
    rows: int  # Spark lines read (each ended by a newline)
    bad: bool  # whether the partition holds bytes that are not UTF-8 (and was read up to them)
    outside: _Walk
    inside: _Walk


def _scan(part: int, rows: Iterable[Any]) -> Iterator[_Scan]:
    lines, count, bad, block = _partition_lines(rows)
    if block is not None:
        walks = _walk(lines, False), _walk(lines, True)
        yield _Scan(part, block, len(lines), count, bad, *walks)


class _Plan(NamedTuple):
    """A partition's whole records: its lines ``skip`` to ``end`` (``None``: its last)."""

    first_line: int  # the file's number for the partition's first line
    skip: int
    end: int | None


@dataclass
class _Layout:
    """Where a CSV's records lie across partitions."""

    plans: dict[int, _Plan] = field(default_factory=dict)
    pieces: dict[int, list[str]] = field(default_factory=dict)  # cut record's line -> texts
    lines: int = 0
    stop: RowProblem | None = None  # nothing from this line on is read (as the local loader)
    utf8: RowProblem | None = None
    unfinished: int | None = None  # a record still open where bytes not UTF-8 end the text
    header: list[str] | None = None


def _layout(scans: list[_Scan]) -> _Layout:
    layout = _Layout()
    scans = sorted(scans, key=lambda scan: scan.block)
    rows = 0
    for scan in scans:  # the local loader reads nothing after bytes that are not UTF-8
        if scan.bad:
            why = "the file is not valid UTF-8; nothing after this was read"
            layout.utf8 = RowProblem(rows + scan.rows + 1, why)
            break
        rows += scan.rows
    quoted, owner = False, 0
    for scan in scans:
        base = layout.lines
        walk = scan.inside if quoted else scan.outside
        if quoted:
            layout.pieces[owner].append(walk.lead_text)
        elif base == 0:
            layout.header = walk.first
        lead = scan.lines if walk.lead < 0 else walk.lead
        layout.plans[scan.part] = _Plan(base + 1, lead, walk.open)
        if walk.error is not None:
            where, why = walk.error
            layout.stop = unreadable_record(owner if where < 0 else base + where + 1, why)
            break
        if walk.open is not None:
            owner = base + walk.open + 1
            layout.pieces[owner] = [walk.open_text]
        quoted = walk.open is not None or walk.lead < 0
        layout.lines += scan.lines
        if scan.bad:
            # the local loader's text then ends without the last line's newline
            layout.unfinished = owner if quoted else None
            break
    return layout


def _cut_records(layout: _Layout) -> list[tuple[int, list[str]]]:
    """Parse the records that partition boundaries cut (the header too, if it is one)."""
    records = []
    for line, pieces in sorted(layout.pieces.items()):
        if layout.stop is not None and line >= layout.stop.line:
            break
        text = "".join(pieces)
        if line == layout.unfinished:
            text = text.removesuffix("\n")
        try:
            cells = next(csv.reader(io.StringIO(text, newline="")), [])
        except csv.Error as error:
            layout.stop = unreadable_record(line, str(error))
            break
        if line == 1:
            layout.header = cells
        else:
            records.append((line, cells))
    return records


def read_csv(job: Job, uri: str, on_problem: ProblemSink) -> RDD[Any] | None:
    text = text_lines(job, uri).select("text", "block", "raw").rdd
    layout = _layout(text.mapPartitionsWithIndex(_scan).collect())
    cut = _cut_records(layout)
    early = [] if layout.utf8 is None else [layout.utf8]
    header, stop = layout.header, layout.stop
    if stop is not None and stop.line == 1:
        early.append(stop)
        header = None
    elif not header or not any(cell.strip() for cell in header):
        early.append(RowProblem(1, "no header row (expected id, title, price, ...)"))
        header = None
    columns = [] if header is None else [cell.strip().lower() for cell in header]
    ok, problems = (False, []) if header is None else check_columns(columns, 1)
    for problem in [*early, *problems]:
        on_problem(problem)
    if not ok:
        return None
    end = None if stop is None else stop.line
    records = text.mapPartitionsWithIndex(partial(_csv_records, layout.plans, end))
    if cut:
        records = records.union(job.context.parallelize(cut, 1))
    rows = records.flatMap(partial(_csv_row, columns))
    if stop is not None:
        rows = rows.union(job.context.parallelize([(stop.line, stop)], 1))
    return products_from_flat(job, rows, max(layout.lines, 1))


def _csv_records(
    plans: dict[int, _Plan], stop: int | None, part: int, rows: Iterable[Any]
) -> Iterator[tuple[int, list[str]]]:
    """The partition's whole records, each with the line it starts at (the header left out)."""
    plan = plans.get(part)
    if plan is None:
        return
    lines = _partition_lines(rows).lines
    end = len(lines) if plan.end is None else plan.end
    if stop is not None:  # a record starts at the stop line: lines before it are whole records
        end = max(0, min(end, stop - plan.first_line))
    reader = csv.reader(lines[plan.skip : end])
    consumed = 0
    for cells in reader:
        line = plan.first_line + plan.skip + consumed
        consumed = reader.line_num
        if line > 1:
            yield line, cells


def _csv_row(columns: list[str], item: tuple[int, list[str]]) -> Iterator[tuple[int, Any]]:
    line, cells = item
    if not any(cell.strip() for cell in cells):
        return
    if len(cells) != len(columns):
        yield line, RowProblem(line, f"has {len(cells)} cells, the header has {len(columns)}")
        return
    yield line, dict(zip(columns, cells, strict=True))
