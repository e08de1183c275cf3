"""Splitting, de-duplication, held-out requests, determinism and the written files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from cartagent.catalog import Product
from cartagent.errors import ConfigurationError
from cartagent.retrieval import SearchQuery
from cartagent.retrieval.prompt import query_json, understanding_messages
from cartagent.tuning import SPLITS, Dataset, HeldOut, TrainingExample, build_dataset, write_dataset
from cartagent.tuning.dataset import dedupe_key, load_teacher_rows
from cartagent.tuning.holdout import normalise
from tests.conftest import TAU, WEBSHOP


def _all(dataset: Dataset) -> list[TrainingExample]:
    return [e for split in SPLITS for e in dataset.splits[split]]


def test_the_size_is_shared_80_10_10(dataset: Dataset) -> None:
    assert [len(dataset.splits[s]) for s in SPLITS] == [1200, 150, 150]


def test_splits_share_no_template_and_no_product(dataset: Dataset) -> None:
    templates = {s: {e.template for e in dataset.splits[s]} for s in SPLITS}
    products = {s: {e.product_id for e in dataset.splits[s]} - {None} for s in SPLITS}
    for i, a in enumerate(SPLITS):
        for b in SPLITS[i + 1 :]:
            assert not templates[a] & templates[b], (a, b)
            assert not products[a] & products[b], (a, b)
            assert not set(dataset.plan.products[a]) & set(dataset.plan.products[b])
    for split in SPLITS:
        assert templates[split] <= set(dataset.plan.templates[split])
        assert products[split] <= set(dataset.plan.products[split])


def test_every_split_has_most_families(dataset: Dataset) -> None:
    for split in SPLITS:
        assert len({e.family for e in dataset.splits[split]}) >= 10, split


def test_no_two_examples_share_a_normalised_request_and_context(dataset: Dataset) -> None:
    keys = [dedupe_key(e.request, e.context) for e in _all(dataset)]
    assert len(keys) == len(set(keys))
    assert dedupe_key("Red  Shoes ", ["Under $50"]) == dedupe_key("red shoes", ["under $50"])
    assert dedupe_key("red shoes", ["a"]) != dedupe_key("red shoes", [])


def test_duplicates_are_dropped_when_products_run_out_of_new_wordings(
    products: tuple[Product, ...],
) -> None:
    few = build_dataset(products[:3] + products[60:63], size=3000, seed=1)
    assert few.duplicates > 0
    keys = [dedupe_key(e.request, e.context) for e in _all(few)]
    assert len(keys) == len(set(keys))


def test_no_request_equals_a_labelled_or_webshop_request(dataset: Dataset) -> None:
    data = Path(__file__).resolve().parents[2] / "src" / "cartagent" / "evals" / "data"
    labelled: set[str] = set()
    for path in sorted(data.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                labelled.add(normalise(case["request"]))
                labelled.update(normalise(turn) for turn in case.get("context", []))
    webshop = json.loads(WEBSHOP.read_text(encoding="utf-8"))
    labelled.update(normalise(k) for k in webshop)
    labelled.update(normalise(q) for queries in webshop.values() for q in queries)
    assert len(labelled) > 1000
    for example in _all(dataset):
        assert normalise(example.request) not in labelled, example.request
        assert not {normalise(t) for t in example.context} & labelled, example.context
    assert dataset.held_out_hits > 0  # the guard was needed: plain requests like "laptop"


def test_a_held_out_request_is_never_written(products: tuple[Product, ...]) -> None:
    first = build_dataset(products, size=300, seed=2)
    taken = first.splits["train"][0].request
    again = build_dataset(
        products, size=300, seed=2, held_out=HeldOut(frozenset({normalise(taken)}), ())
    )
    assert taken not in {e.request for e in _all(again)}
    assert again.held_out_hits >= 1


def test_each_example_carries_the_runtime_prompt_and_the_gold_completion(
    dataset: Dataset,
) -> None:
    for example in _all(dataset)[::37]:
        record = example.record()
        expected = understanding_messages(example.request, example.context, style="short")
        assert record["messages"] == [{"role": m.role, "content": m.content} for m in expected]
        assert record["completion"] == query_json(example.gold)
        assert SearchQuery.model_validate(record["gold"]) == example.gold
        assert set(record) >= {
            "id", "family", "product_id", "request", "context", "messages", "completion", "gold",
        }  # fmt: skip


def _hashes(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_the_same_seed_writes_the_same_files(products: tuple[Product, ...], tmp_path: Path) -> None:
    for name in ("one", "two"):
        write_dataset(build_dataset(products, size=400, seed=5), tmp_path / name)
    write_dataset(build_dataset(products, size=400, seed=6), tmp_path / "other")
    assert _hashes(tmp_path / "one") == _hashes(tmp_path / "two")
    assert set(_hashes(tmp_path / "one")) == {
        "train.jsonl", "dev.jsonl", "test.jsonl", "card.json", "card.md",
    }  # fmt: skip
    assert _hashes(tmp_path / "one")["train.jsonl"] != _hashes(tmp_path / "other")["train.jsonl"]


@pytest.mark.parametrize("size", [0, -5])
def test_a_size_that_is_not_positive_is_a_configuration_error(
    products: tuple[Product, ...], size: int
) -> None:
    with pytest.raises(ConfigurationError, match="size"):
        build_dataset(products, size=size, seed=0)


def test_too_few_products_to_split_is_a_configuration_error(
    products: tuple[Product, ...],
) -> None:
    with pytest.raises(ConfigurationError, match="at least 3"):
        build_dataset(products[:2], size=10, seed=0)


def test_an_unwritable_folder_is_a_configuration_error(
    products: tuple[Product, ...], tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ConfigurationError, match="cannot write"):
        write_dataset(build_dataset(products, size=30, seed=0), blocker / "out")


def test_tau_products_are_all_usable() -> None:
    from cartagent.tuning import training_catalog

    catalog = training_catalog(TAU, 0, seed=0)
    tau = build_dataset(catalog.products, size=50, seed=0)
    assert tau.products == 50 and tau.unusable_products == 0


def _teacher_file(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n", encoding="utf-8")
    return path


def _teacher_row(request: str, product_id: str | None, **extra: object) -> dict[str, object]:
    gold = SearchQuery(category="t-shirt", options={"color": ["red"]})
    return {
        "id": f"t-{request[:8]}",
        "family": "teacher-chatty",
        "template": "teacher",
        "product_id": product_id,
        "request": request,
        "context": [],
        "completion": query_json(gold),
        **extra,
    }


def test_teacher_rows_go_to_their_products_split_after_the_same_checks(
    products: tuple[Product, ...], tmp_path: Path
) -> None:
    plain = build_dataset(products, size=300, seed=7)
    dev_product = plain.plan.products["dev"][0]
    test_product = plain.plan.products["test"][0]
    train_request = plain.splits["train"][0].request
    file = _teacher_file(
        tmp_path / "teacher.jsonl",
        [
            _teacher_row("a red tee for my brother, he loves red", dev_product),
            _teacher_row("rojo camiseta por favor", test_product),
            _teacher_row("red tee from a shop we do not stock", "no-such-product"),
            _teacher_row("held out words", None),
            _teacher_row(train_request.upper(), None),  # a duplicate of a written example
            _teacher_row("A red tee for my brother,  he loves red", dev_product),  # duplicate
            {"request": "no family", "completion": "{}"},
            _teacher_row("bad gold", None, completion='{"price": "cheap"}'),
            "not an object",
        ],
    )
    rows = load_teacher_rows(file)
    assert len(rows.examples) == 6
    assert rows.name == "teacher.jsonl"
    assert [line.split(": skipped: ")[1].split(" ")[0] for line in rows.skipped] == [
        "'family'",
        "'completion'",
        "a",
    ]
    assert all(line.startswith(f"{file}:") for line in rows.skipped)
    held = HeldOut(frozenset({normalise("held out words")}), ())
    dataset = build_dataset(products, size=300, seed=7, held_out=held, teacher=[rows])
    assert [len(dataset.splits[s]) for s in SPLITS] == [
        len(plain.splits["train"]) + 1,
        len(plain.splits["dev"]) + 1,
        len(plain.splits["test"]) + 1,
    ]
    assert dataset.splits["dev"][-1].request == "a red tee for my brother, he loves red"
    assert dataset.splits["dev"][-1].family == "teacher-chatty"
    assert dataset.splits["test"][-1].request == "rojo camiseta por favor"
    assert dataset.splits["train"][-1].product_id == "no-such-product"
    assert dataset.duplicates == plain.duplicates + 2
    assert dataset.held_out_hits == plain.held_out_hits + 1
    assert dataset.teacher == (("teacher.jsonl", rows.sha256, 3),)
    card = write_dataset(dataset, tmp_path / "out")
    assert card.data["teacher"] == [{"name": "teacher.jsonl", "sha256": rows.sha256, "kept": 3}]
    assert card.data["splits"]["dev"]["families"]["teacher-chatty"] == 1
    assert "teacher-chatty" in [f["name"] for f in card.data["families"]]
    assert "3 rows kept, each in its product's split" in card.markdown()
    assert "teacher-chatty" in card.summary()


def test_a_teacher_file_without_usable_rows_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no usable teacher rows \\(1 malformed\\)"):
        load_teacher_rows(_teacher_file(tmp_path / "bad.jsonl", [{"request": "x"}]))
    with pytest.raises(ConfigurationError, match="cannot read the teacher rows"):
        load_teacher_rows(tmp_path / "missing.jsonl")
