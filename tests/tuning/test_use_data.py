"""The kind-from-use evaluation set (``data/uses``) stays apart from the evaluations and usable."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

from cartagent.catalog.tau import tau_catalog
from cartagent.evals.discovery import load_conversations
from cartagent.retrieval.uses import not_sold_kinds
from cartagent.tuning.listing import listing_for
from tests.conftest import TAU

FOLDER = Path(__file__).resolve().parents[2] / "data" / "uses"


def _rows(name: str) -> list[dict[str, str]]:
    with (FOLDER / name).open(encoding="utf-8", newline="") as file:
        return list(csv.DictReader(file, delimiter="\t"))


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def _store_kinds() -> set[str]:
    return {found.noun for p in tau_catalog(TAU) if (found := listing_for(p)) is not None}


def test_each_kind_of_the_store_has_three_requests_that_do_not_name_it() -> None:
    rows = _rows("vague.tsv")
    kinds = _store_kinds()
    assert Counter(row["kind"] for row in rows) == dict.fromkeys(kinds, 3)
    for row in rows:
        assert row["kind"] not in row["request"].casefold(), row


def test_the_not_sold_requests_and_the_general_kinds_are_not_the_stores() -> None:
    kinds = _store_kinds()
    rows = _rows("not-sold.tsv")
    assert len(rows) > 50 and not {row["item"] for row in rows} & kinds
    general = json.loads((FOLDER / "general-kinds.json").read_text(encoding="utf-8"))
    listed = {item for items in general["by_department"].values() for item in items}
    assert set(general["not_sold"]) <= listed
    assert not {item.removesuffix("s") for item in general["not_sold"]} & kinds
    # The package ships this list (cartagent.retrieval.uses), with vectors made from it.
    assert not_sold_kinds() == general["not_sold"]


def test_no_request_is_one_of_the_discovery_sets_turns_or_close_to_one() -> None:
    turns = [_words(turn.text) for c in load_conversations() for turn in c.turns]
    for row in _rows("vague.tsv") + _rows("not-sold.tsv"):
        words = _words(row["request"])
        closest = max(len(words & turn) / len(words | turn) for turn in turns)
        # A frame shared with a turn ("do you sell ...") is fine; a turn's wish, copied, is not.
        assert closest <= 0.6, row["request"]
