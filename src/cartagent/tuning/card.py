"""The data card: what a tuning set holds, how it was split, its hashes, and what it lacks.

``card.json`` is for tools (the training step checks hashes against it), ``card.md`` for
people. The card holds no time stamp, so the same seed and inputs give the same card.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .families import FAMILIES

if TYPE_CHECKING:
    from .dataset import Dataset

__all__ = ["NOT_COVERED", "DataCard", "data_card"]

SPLIT_SCHEME = (
    "Each family's templates are shuffled by the seed: the first goes to test, the second to "
    "dev, the rest to train, so every kind of request is trained and measured but no "
    "template's wording is in two splits. The usable products are shuffled by the seed: a "
    "tenth to test, a tenth to dev, the rest to train, so no product is in two splits. Each "
    "split is written only from its own templates and products (size shared 80/10/10). An "
    "example whose case- and space-normalised request plus earlier requests repeats a kept one "
    "(in any split), or whose request or earlier request is in a held-out set, is dropped."
)

NOT_COVERED: tuple[str, ...] = (
    "Requests are written from templates over catalog data: real shoppers' wording, intent "
    "and spelling are far more varied; WebShop's long instructions are held out, not imitated.",
    "Languages: English, plus Spanish, French and German templates for about 25 categories "
    "(colour, gender, euro prices only); no other language, no mixed languages, no non-Latin "
    "scripts.",
    "Currencies: US dollars (symbol, 'dollars', 'bucks'); euros only in the other-language "
    "templates; no GBP, JPY, CNY or others.",
    "No adversarial input: no prompt injection, markup, SQL, empty or over-long requests "
    "(the labelled set tests those; the runtime's prompt and repair handle them).",
    "Only facets the catalog's variants offer; descriptors the retrieval vocabulary lacks are "
    "free text; numeric descriptors without a unit (thread count, 4K, '30-50 lbs') are never "
    "asked for.",
    "Follow-ups have at most two earlier turns and never point at a shown result ('the second "
    "one') or correct the assistant.",
    "Product-disjoint is not category-disjoint: synthetic products of one kind share category, "
    "brands and vocabulary across splits.",
    "Gold values follow the retrieval vocabulary's canonical forms and inherit its choices "
    "(e.g. 'charcoal' is gray, 'water-resistant' is waterproof).",
    "Ratings, stock and price bounds are asked for regardless of the product's own rating, "
    "stock or price; nothing checks that a request has matching products.",
)
"""What the tuning set does not cover (also listed in every card)."""


@dataclass(frozen=True)
class DataCard:
    """A tuning set's card; ``data`` is exactly what ``card.json`` holds."""

    data: dict[str, Any]

    def json(self) -> str:
        return json.dumps(self.data, ensure_ascii=False, indent=2) + "\n"

    def summary(self) -> str:
        """A few lines for a terminal: counts per split and family, and the set's hash."""
        splits = self.data["splits"]
        names = list(splits)
        lines = [
            f"{self.data['examples']} examples (size {self.data['size']}, seed "
            f"{self.data['seed']}): " + ", ".join(f"{s} {splits[s]['examples']}" for s in names)
        ]
        width = max(len(f["name"]) for f in self.data["families"])
        lines.append(f"{'family':<{width}}  " + "  ".join(f"{s:>6}" for s in names))
        for family in self.data["families"]:
            counts = [splits[s]["families"].get(family["name"], 0) for s in names]
            lines.append(f"{family['name']:<{width}}  " + "  ".join(f"{c:>6}" for c in counts))
        dropped = self.data["dropped"]
        lines.append(
            f"dropped: {dropped['duplicates']} duplicates, {dropped['held_out']} held-out "
            f"requests; set sha256 {self.data['set_sha256']}"
        )
        return "\n".join(lines)

    def markdown(self) -> str:
        d = self.data
        splits = d["splits"]
        names = list(splits)
        out = [
            "# Query-understanding tuning set",
            "",
            "Examples for fine-tuning the small model that turns a shopper's request (after any "
            "earlier requests) into a `SearchQuery`. Each JSON Lines record holds `id`, "
            "`family`, `template`, `product_id` (null when the request is not about a product), "
            "`request`, `context` (earlier requests, oldest first), `messages` (the exact chat "
            f"messages the runtime sends, prompt style `{d['prompt_style']}`), `completion` "
            "(the assistant turn to learn) and `gold` (the same query as an object).",
            "",
            f"- seed: {d['seed']}; size asked: {d['size']}; examples: {d['examples']}",
            f"- products: {d['catalog']['products']} read, "
            f"{d['catalog']['unusable_products']} without a category noun left out",
            *(f"- source: {origin}" for origin in d["catalog"]["origins"]),
            *(
                f"- teacher-written: `{t['name']}` (sha256 `{t['sha256']}`), {t['kept']} rows "
                "kept, each in its product's split"
                for t in d.get("teacher", [])
            ),
            f"- dropped: {d['dropped']['duplicates']} duplicates, "
            f"{d['dropped']['held_out']} equal to a held-out request",
            *(
                f"- held out: `{s['name']}` (sha256 `{s['sha256']}`)"
                for s in d["dropped"]["held_out_sources"]
            ),
            "",
            "## Files",
            "",
            "| file | examples | products | sha256 |",
            "|---|---:|---:|---|",
            *(
                f"| {splits[s]['file']} | {splits[s]['examples']} | {splits[s]['products']} "
                f"| `{splits[s]['sha256']}` |"
                for s in names
            ),
            "",
            f"Whole set (SHA-256 of {', '.join(splits[s]['file'] for s in names)} "
            f"concatenated in that order): `{d['set_sha256']}`",
            "",
            "## Split scheme",
            "",
            d["split_scheme"],
            "",
            "## Families",
            "",
            "| family | " + " | ".join(names) + " | templates (train; dev; test) |",
            "|---|" + "---:|" * len(names) + "---|",
        ]
        for family in d["families"]:
            counts = [str(splits[s]["families"].get(family["name"], 0)) for s in names]
            placed = "; ".join(
                ", ".join(t for t in splits[s]["templates"] if t.startswith(family["name"] + "/"))
                for s in names
            )
            out.append(f"| {family['name']} | " + " | ".join(counts) + f" | {placed} |")
        out += ["", *(f"- **{f['name']}**: {f['description']}" for f in d["families"])]
        out += ["", "## What it does not cover", "", *(f"- {line}" for line in d["not_covered"])]
        return "\n".join(out) + "\n"


def data_card(dataset: Dataset, files: Mapping[str, bytes]) -> DataCard:
    """The card of ``dataset`` whose split files hold ``files`` (split -> bytes, in order)."""
    splits: dict[str, Any] = {}
    gaps: list[str] = []
    written = {e.family for examples in dataset.splits.values() for e in examples}
    taught = sorted(written - {f.name for f in FAMILIES})
    names = [*(f.name for f in FAMILIES), *taught]
    for split, raw in files.items():
        examples = dataset.splits[split]
        families = Counter(e.family for e in examples)
        splits[split] = {
            "file": f"{split}.jsonl",
            "examples": len(examples),
            "sha256": hashlib.sha256(raw).hexdigest(),
            "products": len(dataset.plan.products[split]),
            "templates": list(dataset.plan.templates[split]),
            "families": {name: families[name] for name in names if families[name]},
            "template_counts": dict(sorted(Counter(e.template for e in examples).items())),
        }
        gaps += [
            f"Split {split} has no {f.name} examples: its {f.name} template found nothing to "
            f"say about its products."
            for f in FAMILIES
            if not families[f.name]
        ]
    total = sum(len(v) for v in dataset.splits.values())
    if total < dataset.size:
        gaps.append(
            f"Only {total} of the {dataset.size} examples asked for: the templates ran out of "
            "new requests for these products (duplicates are dropped)."
        )
    data: dict[str, Any] = {
        "name": "cartagent query-understanding tuning set",
        "prompt_style": "short",
        "seed": dataset.seed,
        "size": dataset.size,
        "examples": total,
        "splits": splits,
        "set_sha256": hashlib.sha256(b"".join(files.values())).hexdigest(),
        "split_scheme": SPLIT_SCHEME,
        "families": [
            {
                "name": f.name,
                "description": f.description,
                "weight": f.weight,
                "about_product": f.about_product,
                "templates": [t.name for t in f.templates],
            }
            for f in FAMILIES
        ]
        + [
            {
                "name": name,
                "description": f"Written by a teacher model for a gold query drawn first, in "
                f"the {name.removeprefix('teacher-')} style (cartagent tune teacher).",
                "weight": 0,
                "about_product": True,
                "templates": ["teacher"],
            }
            for name in taught
        ],
        "teacher": [
            {"name": name, "sha256": digest, "kept": kept} for name, digest, kept in dataset.teacher
        ],
        "catalog": {
            "origins": list(dataset.origins),
            "products": dataset.products,
            "unusable_products": dataset.unusable_products,
        },
        "dropped": {
            "duplicates": dataset.duplicates,
            "held_out": dataset.held_out_hits,
            "held_out_sources": [
                {"name": name, "sha256": digest} for name, digest in dataset.held_out_sources
            ],
        },
        "not_covered": [*NOT_COVERED, *gaps],
    }
    return DataCard(data)
