"""The shopper's language: told from each turn, and the assistant's messages in it.

Replies are written in English in the code and translated through gettext catalogues
(``locale/<lang>/LC_MESSAGES/cartagent.po``, read with Babel; ``make messages`` re-extracts
``locale/cartagent.pot`` and updates them). Product data stays as the catalog writes it.

A turn's language is told by py3langid (a Naive Bayes model on byte n-grams, shipped inside
its package), limited to the languages there are catalogues for. Short turns say too little
("pink?", "laptop", "ok"): they keep the conversation's language, as does a turn the model is
unsure of.
"""

from __future__ import annotations

import io
import re
import threading
from functools import cache
from gettext import NullTranslations
from importlib import resources
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from py3langid.langid import LanguageIdentifier

__all__ = ["DEFAULT", "LANGUAGES", "detect", "messages", "msg", "msg_plural"]

DEFAULT: Final = "en"
LANGUAGES: Final = ("en", "es", "de", "fr")
_MIN_WORDS = 2
_MIN_CONFIDENCE = 0.85
_WORD = re.compile(r"[^\W\d_]{2,}")
# Greetings that belong to one language, for turns too short to tell otherwise.
_GREETINGS: Final = {
    "coucou": "fr", "bonjour": "fr", "bonsoir": "fr", "salut": "fr",
    "moin": "de", "servus": "de", "hallo": "de", "grüezi": "de", "guten": "de",
    "hola": "es", "buenas": "es", "buenos": "es",
}  # fmt: skip
_GREETING_WORDS = 3

_lock = threading.Lock()
_identifier: LanguageIdentifier | None = None


def _model() -> LanguageIdentifier:
    global _identifier
    with _lock:
        if _identifier is None:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            made = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
            made.set_languages(list(LANGUAGES))
            _identifier = made
        return _identifier


def warm_up() -> None:
    """Load the language model now (about 1.5 s) rather than on the first turn."""
    _model()


def detect(text: str, previous: str = DEFAULT) -> str:
    """The language of ``text`` (one of :data:`LANGUAGES`); ``previous`` when it is too short
    or the model is unsure."""
    if previous not in LANGUAGES:
        previous = DEFAULT
    words = _WORD.findall(text.casefold())
    greeted = {_GREETINGS[w] for w in words if w in _GREETINGS}
    if len(greeted) == 1 and len(words) <= _GREETING_WORDS:
        return greeted.pop()  # "Coucou !", "Moin moin!": too short for the model, yet plain
    if len(words) < _MIN_WORDS:
        return previous
    language, confidence = _model().classify(text[:2000])
    if confidence >= _MIN_CONFIDENCE or greeted == {language}:
        return str(language)  # "hola, I need un reloj inteligente": unsure, but greeted so
    return previous


def msg(message: str) -> str:
    """``message``, marked for the catalogues: translated where it is used
    (``turn.messages.gettext(message)``), written where it is defined."""
    return message


def msg_plural(one: str, several: str) -> tuple[str, str]:
    """A message with its plural, marked for the catalogues (``ngettext(*pair, n)``)."""
    return one, several


@cache
def messages(language: str) -> NullTranslations:
    """The assistant's messages in ``language`` (English, the source, for any other)."""
    if language == DEFAULT or language not in LANGUAGES:
        return NullTranslations()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    from babel.support import Translations

    folder = resources.files(__package__) / "locale" / language / "LC_MESSAGES"
    with (folder / "cartagent.po").open("rb") as po:
        catalog = read_po(po, locale=language)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return Translations(compiled)
