"""The data card matches the files it describes."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from cartagent.tuning import FAMILIES, SPLITS, Dataset, write_dataset
from cartagent.tuning.card import NOT_COVERED


def test_card_counts_and_hashes_match_the_files(dataset: Dataset, tmp_path: Path) -> None:
    card = write_dataset(dataset, tmp_path)
    data = json.loads((tmp_path / "card.json").read_text(encoding="utf-8"))
    assert data == card.data
    joined = b""
    for split in SPLITS:
        raw = (tmp_path / f"{split}.jsonl").read_bytes()
        joined += raw
        rows = [json.loads(line) for line in raw.decode("utf-8").splitlines()]
        entry = data["splits"][split]
        assert entry["examples"] == len(rows)
        assert entry["sha256"] == hashlib.sha256(raw).hexdigest()
        assert entry["families"] == dict(Counter(r["family"] for r in rows))
        assert entry["template_counts"] == dict(
            sorted(Counter(r["template"] for r in rows).items())
        )
        assert entry["products"] == len(dataset.plan.products[split])
    assert data["set_sha256"] == hashlib.sha256(joined).hexdigest()
    assert data["examples"] == sum(data["splits"][s]["examples"] for s in SPLITS)
    assert (data["seed"], data["size"]) == (7, 1500)
    assert [f["name"] for f in data["families"]] == [f.name for f in FAMILIES]
    assert data["not_covered"][: len(NOT_COVERED)] == list(NOT_COVERED)
    assert data["dropped"]["held_out_sources"]


def test_the_markdown_and_summary_name_every_family_and_the_set_hash(
    dataset: Dataset, tmp_path: Path
) -> None:
    card = write_dataset(dataset, tmp_path)
    markdown = (tmp_path / "card.md").read_text(encoding="utf-8")
    summary = card.summary()
    for family in FAMILIES:
        assert f"| {family.name} |" in markdown
        assert family.name in summary
    assert card.data["set_sha256"] in markdown and card.data["set_sha256"] in summary
    assert "## What it does not cover" in markdown
    assert "## Split scheme" in markdown
