"""Building the tuning set: write examples, drop duplicates and held-out requests, split, save.

The split scheme (deterministic for a seed):

1. **Templates.** Each family's templates are shuffled; the first goes to ``test``, the second
   to ``dev``, the rest to ``train``. Every kind of request is therefore trained and measured,
   but no template's wording appears in two splits.
2. **Products.** The products (those a category noun could be found for) are shuffled; a tenth
   goes to ``test``, a tenth to ``dev``, the rest to ``train``. No product appears in two splits.
3. Each split's examples are written only from its own templates and its own products:
   ``size`` is shared 80/10/10, each example drawn as family (by weight), template, product,
   variant. An example whose case- and space-normalised request plus earlier requests equals
   one already kept (in any split) is a duplicate and dropped, as is one whose request or
   earlier request is held out (:mod:`cartagent.tuning.holdout`).
4. **Teacher-written rows** (``cartagent tune teacher``'s ``teacher.jsonl``, given as
   ``teacher``) come on top of ``size``: each goes to the split of its product (train when the
   product is not one of the catalog's), after the same duplicate and held-out checks.

Each example carries the exact chat messages the runtime sends a tuned model
(:func:`~cartagent.retrieval.prompt.understanding_messages` with ``style="short"``) and the
gold completion (:func:`~cartagent.retrieval.prompt.query_json`).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..catalog.product import Product
from ..errors import ConfigurationError
from ..retrieval import SearchQuery, query_json, understanding_messages
from .card import DataCard, data_card
from .families import FAMILIES, Family, Template
from .holdout import HeldOut, normalise
from .listing import Listing, listing_for
from .training_data import example_from_row, read_rows

__all__ = [
    "SPLITS",
    "Dataset",
    "SplitPlan",
    "TeacherRows",
    "TrainingExample",
    "build_dataset",
    "dedupe_key",
    "load_teacher_rows",
    "plan_splits",
    "split_bytes",
    "write_dataset",
]

SPLITS: Final = ("train", "dev", "test")
_HELD_SHARE = 0.1  # of templates' families and of products, for each of dev and test
_ATTEMPTS_PER_EXAMPLE = 40


@dataclass(frozen=True)
class TrainingExample:
    """One supervised example: the request (after ``context``) and its gold query."""

    id: str
    family: str
    template: str
    product_id: str | None
    request: str
    context: tuple[str, ...]
    gold: SearchQuery

    def messages(self) -> list[dict[str, str]]:
        """The chat messages the runtime sends for this request in the short prompt style."""
        return [
            {"role": m.role, "content": m.content or ""}
            for m in understanding_messages(self.request, self.context, style="short")
        ]

    def completion(self) -> str:
        """The assistant turn the model is trained to write."""
        return query_json(self.gold)

    def record(self) -> dict[str, Any]:
        """The example as one JSON Lines object."""
        completion = self.completion()
        return {
            "id": self.id,
            "family": self.family,
            "template": self.template,
            "product_id": self.product_id,
            "request": self.request,
            "context": list(self.context),
            "messages": self.messages(),
            "completion": completion,
            "gold": json.loads(completion),
        }


@dataclass(frozen=True)
class TeacherRows:
    """The usable rows of one teacher file, with its name, hash and the lines skipped."""

    name: str
    sha256: str
    examples: tuple[TrainingExample, ...]
    skipped: tuple[str, ...]


def _teacher_example(row: Any, number: int) -> TrainingExample:
    read = example_from_row(row)  # request, context and gold checked as training reads them
    family, product, row_id = row.get("family"), row.get("product_id"), row.get("id")
    if not isinstance(family, str) or not family.startswith("teacher-"):
        raise ValueError("'family' must name the teacher's style ('teacher-<style>')")
    return TrainingExample(
        id=str(row_id) if isinstance(row_id, str) and row_id else f"teacher-{number:06d}",
        family=family,
        template="teacher",
        product_id=product if isinstance(product, str) and product else None,
        request=read.request,
        context=read.context,
        gold=read.gold,
    )


def load_teacher_rows(path: Path) -> TeacherRows:
    """The rows of a ``cartagent tune teacher`` file; a malformed row is skipped with its line.

    Raises :class:`~cartagent.errors.ConfigurationError` when the file cannot be read or has no
    usable row.
    """
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ConfigurationError(f"cannot read the teacher rows {path}: {error}") from error
    examples, skipped = read_rows(path, raw, _teacher_example)
    if not examples:
        raise ConfigurationError(f"{path}: no usable teacher rows ({len(skipped)} malformed)")
    digest = hashlib.sha256(raw).hexdigest()
    return TeacherRows(path.name, digest, tuple(examples), tuple(skipped))


@dataclass(frozen=True)
class SplitPlan:
    """Which templates and which products each split is written from."""

    templates: dict[str, tuple[str, ...]]
    products: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class Dataset:
    """The three splits and what it took to build them."""

    seed: int
    size: int
    splits: dict[str, tuple[TrainingExample, ...]]
    plan: SplitPlan
    products: int
    """Products read, including those no category could be found for."""
    unusable_products: int
    duplicates: int
    held_out_hits: int
    origins: tuple[str, ...] = ()
    held_out_sources: tuple[tuple[str, str], ...] = ()
    teacher: tuple[tuple[str, str, int], ...] = ()
    """Teacher files read: name, SHA-256 and the rows kept from each."""


def dedupe_key(request: str, context: Sequence[str]) -> str:
    """The normalised request with its normalised earlier requests: equal keys are duplicates."""
    return "\x1e".join([normalise(request), *(normalise(turn) for turn in context)])


def plan_splits(listings: Sequence[Listing], seed: int) -> SplitPlan:
    """Assign each family's templates, then the products, to splits (see the module doc)."""
    templates: dict[str, list[str]] = {split: [] for split in SPLITS}
    for family in FAMILIES:
        names = sorted(t.name for t in family.templates)
        random.Random(f"{seed}:templates:{family.name}").shuffle(names)
        templates["test"].append(names[0])
        templates["dev"].append(names[1])
        templates["train"].extend(names[2:])
    ids = sorted({listing.product_id for listing in listings})
    if len(ids) < 3:
        raise ConfigurationError(
            f"need at least 3 usable products to split by product, got {len(ids)}"
        )
    random.Random(f"{seed}:products").shuffle(ids)
    n_test = n_dev = max(1, round(len(ids) * _HELD_SHARE))
    products = {
        "test": tuple(ids[:n_test]),
        "dev": tuple(ids[n_test : n_test + n_dev]),
        "train": tuple(ids[n_test + n_dev :]),
    }
    return SplitPlan({k: tuple(sorted(v)) for k, v in templates.items()}, products)


@dataclass
class _Tally:
    seen: set[str]
    duplicates: int = 0
    held_out: int = 0

    def keep(self, request: str, context: Sequence[str], held_out: HeldOut) -> bool:
        """Whether a request (after ``context``) is new and not held out; counts it either way."""
        key = dedupe_key(request, context)
        if key in self.seen:
            self.duplicates += 1
            return False
        if request in held_out or any(turn in held_out for turn in context):
            self.held_out += 1
            return False
        self.seen.add(key)
        return True


def _write_split(
    split: str,
    target: int,
    listings: Sequence[Listing],
    templates: dict[str, list[Template]],
    seed: int,
    held_out: HeldOut,
    tally: _Tally,
    progress: Callable[[int], None] | None,
) -> tuple[TrainingExample, ...]:
    rng = random.Random(f"{seed}:{split}")
    families: list[Family] = [f for f in FAMILIES if templates.get(f.name) for _ in range(f.weight)]
    examples: list[TrainingExample] = []
    attempts = 0
    while len(examples) < target and attempts < _ATTEMPTS_PER_EXAMPLE * target:
        attempts += 1
        family = rng.choice(families)
        template = rng.choice(templates[family.name])
        listing = rng.choice(listings)
        draft = template.write(listing, rng.choice(listing.offers), rng)
        if draft is None or not draft.request.strip():
            continue
        if not tally.keep(draft.request, draft.context, held_out):
            continue
        examples.append(
            TrainingExample(
                id=f"{split}-{len(examples):05d}",
                family=family.name,
                template=template.name,
                product_id=listing.product_id if family.about_product else None,
                request=draft.request,
                context=draft.context,
                gold=draft.gold,
            )
        )
        if progress is not None:
            progress(1)
    return tuple(examples)


def build_dataset(
    products: Sequence[Product],
    *,
    size: int,
    seed: int,
    held_out: HeldOut | None = None,
    origins: Sequence[str] = (),
    progress: Callable[[int], None] | None = None,
    teacher: Sequence[TeacherRows] = (),
) -> Dataset:
    """About ``size`` examples written from ``products``, split by template and by product,
    plus the ``teacher`` rows, each in its product's split.

    ``progress`` is called with 1 for each example kept. Raises
    :class:`~cartagent.errors.ConfigurationError` when ``size`` is not positive or fewer than
    three products have a category to speak of.
    """
    if size <= 0:
        raise ConfigurationError(f"size must be a positive number of examples, got {size}")
    listings = [found for found in map(listing_for, products) if found is not None]
    plan = plan_splits(listings, seed)
    held = held_out or HeldOut(frozenset(), ())
    by_id = {listing.product_id: listing for listing in listings}
    by_name = {t.name: (f, t) for f in FAMILIES for t in f.templates}
    n_test = n_dev = max(1, round(size * _HELD_SHARE))
    targets = {"train": max(1, size - n_test - n_dev), "dev": n_dev, "test": n_test}
    tally = _Tally(set())
    splits: dict[str, tuple[TrainingExample, ...]] = {}
    for split in SPLITS:
        templates: dict[str, list[Template]] = {}
        for name in plan.templates[split]:
            family, template = by_name[name]
            templates.setdefault(family.name, []).append(template)
        chosen = [by_id[i] for i in plan.products[split]]
        splits[split] = _write_split(
            split, targets[split], chosen, templates, seed, held, tally, progress
        )
    placed = {product: split for split in SPLITS for product in plan.products[split]}
    kept_teacher: list[tuple[str, str, int]] = []
    for rows in teacher:
        kept = _placed_teacher_rows(rows, placed, held, tally, splits)
        kept_teacher.append((rows.name, rows.sha256, kept))
    return Dataset(
        seed=seed,
        size=size,
        splits=splits,
        plan=plan,
        products=len(products),
        unusable_products=len(products) - len(listings),
        duplicates=tally.duplicates,
        held_out_hits=tally.held_out,
        origins=tuple(origins),
        held_out_sources=held.sources,
        teacher=tuple(kept_teacher),
    )


def _placed_teacher_rows(
    rows: TeacherRows,
    placed: dict[str, str],
    held: HeldOut,
    tally: _Tally,
    splits: dict[str, tuple[TrainingExample, ...]],
) -> int:
    """Add ``rows`` to ``splits`` (each in its product's split), after the duplicate and
    held-out checks; returns how many were kept."""
    added: dict[str, list[TrainingExample]] = {split: [] for split in SPLITS}
    for example in rows.examples:
        if tally.keep(example.request, example.context, held):
            added[placed.get(example.product_id or "", "train")].append(example)
    for split, examples in added.items():
        splits[split] = (*splits[split], *examples)
    return sum(map(len, added.values()))


def split_bytes(examples: Sequence[TrainingExample]) -> bytes:
    """A split as JSON Lines (UTF-8, one object per line, keys in a fixed order)."""
    lines = (json.dumps(e.record(), ensure_ascii=False) + "\n" for e in examples)
    return "".join(lines).encode("utf-8")


def write_dataset(dataset: Dataset, out: Path) -> DataCard:
    """Write ``train.jsonl``, ``dev.jsonl``, ``test.jsonl``, ``card.json`` and ``card.md``.

    Raises :class:`~cartagent.errors.ConfigurationError` when ``out`` cannot be written.
    """
    files = {split: split_bytes(dataset.splits[split]) for split in SPLITS}
    card = data_card(dataset, files)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for split, data in files.items():
            (out / f"{split}.jsonl").write_bytes(data)
        (out / "card.json").write_text(card.json(), encoding="utf-8")
        (out / "card.md").write_text(card.markdown(), encoding="utf-8")
    except OSError as error:
        raise ConfigurationError(f"cannot write the tuning set to {out}: {error}") from error
    return card
