"""The shopper's language: told from each turn, and the assistant's messages in it."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.checkers import python_format
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from cartagent.assistant import Assistant, ConversationStore, EmbeddingRouter
from cartagent.assistant.language import LANGUAGES, detect, messages
from cartagent.retrieval.search import Searcher

LOCALE = Path(str(resources.files("cartagent.assistant") / "locale"))
TRANSLATED = [language for language in LANGUAGES if language != "en"]


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("hola, busco unos auriculares inalámbricos", "es"),
        ("Tablet mit 10 Zoll und 128 GB, aber nicht in Gold", "de"),
        ("et en marron, ça existe ?", "fr"),
        ("i need something to boil water for my tea", "en"),
    ],
)
def test_a_sentence_is_told_by_its_language(text: str, language: str) -> None:
    assert detect(text) == language
    assert detect(text, previous="de") == language


@pytest.mark.parametrize("text", ["pink?", "laptop", "ok", "👋", "", "4K"])
def test_a_turn_that_says_too_little_keeps_the_conversations_language(text: str) -> None:
    assert detect(text, previous="fr") == "fr"
    assert detect(text) == "en"
    assert detect(text, previous="klingon") == "en"


def _catalog(language: str) -> Catalog:
    with (LOCALE / language / "LC_MESSAGES" / "cartagent.po").open("rb") as handle:
        return read_po(handle, locale=language)


def test_the_template_holds_every_message_the_code_writes() -> None:
    """`make messages` was run after the last message changed in the code."""
    source = Path(str(resources.files("cartagent.assistant")))
    keywords = {"gettext": None, "ngettext": (1, 2), "msg": None, "msg_plural": (1, 2)}
    found = {
        message[2] if isinstance(message[2], str) else message[2][0]
        for message in extract_from_dir(source, keywords=keywords)  # type: ignore[arg-type]
    }
    with (LOCALE / "cartagent.pot").open("rb") as handle:
        template = {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(handle) if m.id}
    assert found == template


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_message_is_translated_with_the_same_placeholders(language: str) -> None:
    catalog = _catalog(language)
    with (LOCALE / "cartagent.pot").open("rb") as handle:
        wanted = {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(handle) if m.id}
    for msgid in wanted:
        message = catalog.get(msgid)
        assert message is not None, msgid
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        assert all(strings) and not message.fuzzy, msgid
        python_format(catalog, message)  # raises on a placeholder that differs


def test_a_message_comes_in_the_language_asked_and_english_otherwise() -> None:
    plural = ("%(matches)d exact match for %(wanted)s", "%(matches)d exact matches for %(wanted)s")
    assert messages("de").ngettext(*plural, 3) == "%(matches)d genaue Treffer für %(wanted)s"
    assert messages("es").ngettext(*plural, 1) == "%(matches)d coincidencia exacta para %(wanted)s"
    assert messages("fr").ngettext(*plural, 2) == "%(matches)d résultats exacts pour %(wanted)s"
    assert messages("en").ngettext(*plural, 2) == plural[1]
    assert messages("xx").gettext("in stock") == "in stock"


@pytest.mark.anyio
async def test_the_assistant_answers_in_the_shoppers_language_and_keeps_it(
    minilm_router: EmbeddingRouter, tau_grounded_searcher: Searcher, memory_store: ConversationStore
) -> None:
    assistant = Assistant(minilm_router, memory_store, searcher=tau_grounded_searcher)
    sid = assistant.open_session()
    english = await assistant.turn(sid, "a blue t-shirt under 60")
    assert "exact matches for" in english.text
    german = await assistant.turn(sid, "ein T-Shirt in Blau unter 60 Dollar")
    assert "genaue Treffer für" in german.text, german.text
    short = await assistant.turn(sid, "unter 55")  # too short to tell: still German
    assert "Treffer" in short.text or "Kein genauer Treffer" in short.text, short.text
    stored = assistant.store.load(sid).messages[-1]
    assert stored.payload["language"] == "de"


@pytest.mark.parametrize(
    ("text", "language"),
    [("Coucou !", "fr"), ("Moin moin!", "de"), ("hola", "es"), ("Servus!", "de"), ("hi", "en")],
)
def test_a_greeting_of_one_language_tells_it_however_short(text: str, language: str) -> None:
    assert detect(text, "en") == language


def test_a_greeting_settles_a_mixed_turn_the_model_is_unsure_of() -> None:
    # The model leans Spanish but is unsure of the mix; the greeting says so too.
    assert detect("hola, I need un reloj inteligente con pantalla AMOLED", "en") == "es"
    # A greeting does not outvote a model sure of another language.
    assert detect("hola! could you show me some wireless headphones please", "en") == "en"
