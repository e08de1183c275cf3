"""The teacher-written messages kept in the repository (``data/teacher``) stay usable."""

from __future__ import annotations

import json
from pathlib import Path

from cartagent.tuning import held_out_requests
from cartagent.tuning.teacher import out_of_role_reason
from cartagent.tuning.training_data import load_split
from tests.conftest import WEBSHOP

FOLDER = Path(__file__).resolve().parents[2] / "data" / "teacher"


def test_every_kept_message_loads_is_in_role_and_is_no_evaluation_request() -> None:
    held_out = held_out_requests(WEBSHOP)
    files = sorted(FOLDER.glob("*.jsonl"))
    assert files
    for path in files:
        split = load_split(path)
        assert split.skipped == () and len(split.examples) > 200
        for example in split.examples:
            assert out_of_role_reason(example.request) is None, example.request
            assert example.request not in held_out
            assert example.gold.category
        card = json.loads(path.with_suffix(".card.json").read_text())
        assert card["refiltered"]["kept"] == len(split.examples)
