"""Teacher-written data: labels drawn from the catalog, messages kept only on a round trip."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cartagent.catalog import Product
from cartagent.llm import Message
from cartagent.testing import FunctionModel, ModelFunction
from cartagent.tuning import HeldOut
from cartagent.tuning.listing import Facet, Listing, listing_for
from cartagent.tuning.teacher import (
    STYLES,
    Label,
    Style,
    check,
    out_of_role_reason,
    sample_label,
    teacher_messages,
    write_teacher_data,
)
from cartagent.tuning.training_data import load_split

BY_NAME = {style.name: style for style in STYLES}


def _said(text: str) -> Message:
    return Message(role="assistant", content=text)


@pytest.fixture(scope="module")
def listings(products: tuple[Product, ...]) -> list[Listing]:
    return [found for p in products if (found := listing_for(p)) is not None]


def _label(listings: list[Listing], seed: int = 3) -> Label:
    rng = random.Random(seed)
    while (label := sample_label(listings, rng)) is None:
        pass
    return label


def test_a_label_is_a_gold_query_of_a_real_variant(listings: list[Listing]) -> None:
    rng = random.Random(11)
    labels = [label for _ in range(300) if (label := sample_label(listings, rng)) is not None]
    assert len(labels) > 250
    for label in labels:
        gold = label.gold
        assert gold.category == label.listing.category
        assert 1 <= len(label.wanted) <= 3
        for facet in label.wanted:
            if facet.kind == "option":
                assert facet.value in gold.options[facet.key]
        offered = [o for o in label.listing.offers if set(label.wanted) <= set(o.facets)]
        assert offered  # some variant has every wanted value
        assert not label.in_stock or any(o.available for o in offered)
        if label.price_max is not None:
            assert gold.price is not None and gold.price.max == label.price_max
        assert [e.value for e in gold.exclude] == [f.value for f in label.avoided]
    assert any(label.avoided for label in labels) and any(label.price_max for label in labels)


def test_the_teacher_is_told_every_requirement_and_the_style(listings: list[Listing]) -> None:
    label = _label(listings)
    system, user = teacher_messages(label, BY_NAME["german"])
    assert "shopper's message only" in (system.content or "")
    text = user.content or ""
    assert f"The shopper wants: {label.listing.noun}." in text
    assert all(f"- {line}" in text for line in label.requirements())
    assert "Write the message in German." in text


def _shirt_label(listings: list[Listing]) -> Label:
    tee = next(x for x in listings if x.category == "t-shirt")
    offer = next(o for o in tee.offers if any(f.key == "color" for f in o.facets))
    color = next(f for f in offer.facets if f.key == "color")
    from cartagent.tuning.wording import Ask

    ask = Ask(category=tee.category).want(color)
    return Label(tee, (color,), (), None, False, ask.query())


@pytest.mark.parametrize(
    ("style", "message", "why"),
    [
        ("terse", "{color} t-shirt", None),
        ("typos", "lookin for a {color} tshirt pls", None),
        ("terse", "a t-shirt", "misses color"),
        ("vague", "something {color} to wear at the gym", None),
        ("vague", "a {color} t-shirt for the gym", "names the kind"),
        ("terse", "Sure! What {color} t-shirt do you need?", "speaks as the store"),
        ("terse", "Here is the message: {color} t-shirt", "talks about the task"),
        ("terse", "", "empty"),
        ("terse", "{color} t-shirt " + "very " * 400, "too long"),
    ],
)
def test_the_round_trip_keeps_only_messages_that_say_their_label(
    listings: list[Listing], style: str, message: str, why: str | None
) -> None:
    label = _shirt_label(listings)
    color = label.wanted[0].words
    assert check(label, BY_NAME[style], message.format(color=color)) == why


def test_a_message_of_an_evaluation_set_or_in_another_language_is_refused(
    listings: list[Listing],
) -> None:
    label = _shirt_label(listings)
    text = f"{label.wanted[0].words} t-shirt"
    assert check(label, BY_NAME["terse"], text, held_out=HeldOut(frozenset([text]), ())) == (
        "an evaluation request"
    )
    german = Style("german", "", language="de")
    assert check(label, german, text, language_of=lambda _: "en") == "wrong language"
    assert check(label, german, text, language_of=lambda _: "de") is None


def test_in_stock_must_be_asked_for(listings: list[Listing]) -> None:
    label = _shirt_label(listings)
    stocked = Label(label.listing, label.wanted, (), None, True, label.gold)
    color = label.wanted[0].words
    terse = BY_NAME["terse"]
    assert check(stocked, terse, f"{color} t-shirt") == "misses in stock"
    assert check(stocked, terse, f"{color} t-shirt in stock") is None
    assert check(stocked, BY_NAME["german"], f"{color} T-Shirt, sofort lieferbar") is None


def test_what_is_ruled_out_must_be_said_with_a_negation(listings: list[Listing]) -> None:
    label = _shirt_label(listings)
    avoided = Facet("option", "size", "XL", "size XL")
    ruled = Label(label.listing, label.wanted, (avoided,), None, False, label.gold)
    color = label.wanted[0].words
    terse = BY_NAME["terse"]
    assert check(ruled, terse, f"{color} t-shirt, size XL") == "misses what is ruled out"
    assert check(ruled, terse, f"{color} t-shirt, not size XL") is None


def test_the_writer_keeps_passing_messages_counts_the_rest_and_stops(
    listings: list[Listing],
) -> None:
    calls = 0

    def teacher(messages: list[Message], tools: object) -> Message:
        # Says every requirement back, on every other call; rambles about nothing otherwise.
        nonlocal calls
        calls += 1
        if calls % 2:
            return _said("I like turtles.")
        lines = (messages[1].content or "").splitlines()
        wants = [line[2:] for line in lines if line.startswith("- ")]
        kind = lines[0].removeprefix("The shopper wants: ").rstrip(".")
        said = ", ".join(w.split(": ", 1)[-1].replace("NOT ", "not ").replace(" (rule it out)", "")
                         for w in wants)  # fmt: skip
        return _said(f'"{kind}, {said}"')

    kept, card = asyncio.run(
        write_teacher_data(
            FunctionModel(teacher),
            listings,
            count=5,
            seed=1,
            styles=[BY_NAME["terse"]],
            teacher_name="scripted",
        )
    )
    assert len(kept) == 5 and card.kept == {"terse": 5}
    assert card.asked == 10 and sum(card.rejected.values()) == 5  # every other one
    assert all(not example.request.startswith('"') for example in kept)  # quotes dropped
    record = kept[0].record()
    assert record["family"] == "teacher-terse" and record["context"] == []
    assert json.loads(record["completion"]) == record["gold"]
    stopped, card = asyncio.run(
        write_teacher_data(
            FunctionModel(lambda m, t: _said("I like turtles.")),
            listings,
            count=5,
            seed=1,
            max_asks=7,
        )
    )
    assert stopped == [] and card.asked == 7 and card.to_json()["kept"] == 0


def _says_plainly(messages: list[Message], tools: object) -> Message:
    """A teacher that writes the kind and the wanted values, nothing ruled out or priced."""
    lines = (messages[1].content or "").splitlines()
    kind = lines[0].removeprefix("The shopper wants: ").rstrip(".")
    wants = [line[2:].split(": ", 1)[-1] for line in lines if line.startswith("- ")]
    plain = (w for w in wants if not w.startswith(("NOT", "at most", "must")))
    return _said(f"{kind} " + " ".join(plain))


def _run_teacher(
    monkeypatch: pytest.MonkeyPatch, teacher: ModelFunction, out: Path, count: int
) -> Result:
    """``cartagent tune teacher`` in terse style with ``teacher`` as the model."""
    from cartagent.cli.main import cli

    monkeypatch.setattr(
        "cartagent.cli.tune._teacher_model", lambda name, t, s: FunctionModel(teacher)
    )
    args = ["tune", "teacher", "--count", str(count), "--styles", "terse", "--out", str(out)]
    return CliRunner().invoke(cli, [*args, "--quiet"])


def test_the_cli_writes_the_messages_and_the_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cartagent.cli.main import cli

    out = tmp_path / "data"
    result = _run_teacher(monkeypatch, _says_plainly, out, 4)
    assert result.exit_code == 0, result.output
    assert "teacher qwen2.5-coder-1.5b: kept 4 of" in result.output
    split = load_split(out / "teacher.jsonl")
    assert len(split.examples) == 4 and split.skipped == ()
    card = json.loads((out / "teacher-card.json").read_text())
    assert card["kept_by_style"] == {"terse": 4}
    bad = CliRunner().invoke(cli, ["tune", "teacher", "--styles", "poetry", "--out", str(out)])
    assert bad.exit_code == 2 and "unknown style poetry" in bad.output


def test_a_run_stopped_halfway_keeps_what_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = 0

    def teacher(messages: list[Message], tools: object) -> Message:
        nonlocal answers
        answers += 1
        if answers > 2:
            raise KeyboardInterrupt  # Ctrl-C on the third message
        return _says_plainly(messages, tools)

    out = tmp_path / "data"
    result = _run_teacher(monkeypatch, teacher, out, 9)
    assert result.exit_code == 0, result.output
    assert "stopped: what was kept so far is written" in result.output
    card = json.loads((out / "teacher-card.json").read_text())
    assert card["asked"] == 3 and card["kept"] >= 1  # two answered, the third cut short
    assert len(load_split(out / "teacher.jsonl").examples) == card["kept"]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Voici un exemple de message : je cherche une lampe noire", "talks about the task"),
        ("Good afternoon! My name is [Your Name] and I need boots", "talks about the task"),
        ('The shopping assistant said: "tea kettle, ceramic"', "talks about the task"),
        ("Bien sûr ! Une lampe noire, s'il vous plaît", "speaks as the store"),
        ("Bitte besuchen Sie unsere Webseite und wählen Sie eine Maus", "speaks as the store"),
        ("je cherche une lampe de bureau noire, pas trop chère", None),
        ("need a red tee, size M, nothing over 30 bucks", None),
    ],
)
def test_a_message_out_of_the_shoppers_role_is_refused(text: str, why: str | None) -> None:
    assert out_of_role_reason(text) == why
