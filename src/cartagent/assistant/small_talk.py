"""Greetings, thanks and goodbyes (and "are you a bot?"): a message that is only one of them,
and the answer it gets.

"Hi" was declined as out of scope and "thanks" showed the empty cart; they get the answer a
shop assistant gives. The message is read word by word, in English, Spanish, German and
French: it is small talk when every word is a greeting, thanks, goodbye or filler ("ok",
"cool", "perfect", "haha", "so much", "de todos modos") and one of them is more than filler.
A message that also asks for something ("hey, do you have backpacks?", "thanks, now show me
red ones") is not small talk. Punctuation and emoji are ignored, except a lone wave or
folded hands, which say hello and thanks.

The answers are written in English in :data:`REPLIES` and :data:`CART_REPLIES` (plural pairs
for the cart count) and translated through the gettext catalogues (:mod:`.language`).
"""

from __future__ import annotations

import re
from gettext import NullTranslations
from typing import Final, Literal

from .language import msg, msg_plural

__all__ = ["CART_REPLIES", "REPLIES", "SmallTalk", "reply", "small_talk"]

SmallTalk = Literal["greeting", "thanks", "goodbye", "identity"]
_Role = Literal["greeting", "thanks", "goodbye", "identity", "filler"]

_ENGLISH = NullTranslations()
_MAX_WORDS = 12
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_EMOJI: Final[dict[str, SmallTalk]] = {"\U0001f44b": "greeting", "\U0001f64f": "thanks"}
_PRECEDENCE: Final[tuple[SmallTalk, ...]] = ("identity", "goodbye", "thanks", "greeting")


def _words(role: _Role, words: str) -> dict[str, _Role]:
    return dict.fromkeys(words.split(), role)


_WORDS: Final[dict[str, _Role]] = {
    **_words(
        "greeting",
        "hi hii hiii hello helo hallo hey heya heyy hiya howdy yo greetings hola buenas holi "
        "servus moin bonjour bonsoir salut coucou",
    ),
    **_words(
        "thanks",
        "thanks thank thankyou thanx thnx thx thks tks ty tysm tyvm cheers appreciated gracias "
        "merci danke dankeschön danki grazie obrigado obrigada",
    ),
    **_words(
        "goodbye",
        "bye byebye goodbye cya ciao chao adiós adios tschüss tschüs tschau ade later laters",
    ),
    **_words(
        "filler",
        # reactions and agreement
        "ok okay okey oki okie k kk cool great perfect awesome nice lovely brilliant sweet super "
        "amazing wonderful excellent fantastic fine alright alrighty right sure well oh ah aw "
        "haha hahaha hah lol lmao hehe xd figures meh ugh hmm hm whatever anyway anyways "
        # the addressee and intensifiers
        "there everyone everybody all y'all you guys folks mate buddy friend dude so very "
        "really much again too and "
        # Spanish, German, French
        "genial perfecto perfecta vale bueno buena bien muy muchas muchísimas mil amigo "
        "igualmente y perfekt prima toll gut sehr vielen herzlichen trotzdem nochmal und dir euch "
        "parfait génial beaucoup très bien encore et",
    ),
}

# Several-word expressions, matched before single words; longest and most telling first.
_PHRASES: Final[tuple[tuple[_Role, str], ...]] = (
    (
        "identity",
        r"(?:are|r) (?:you|u) (?:a |an )?(?:real )?(?:person|human|bot|robot|ai|machine)"
        r"(?: or (?:a |an )?(?:real )?(?:person|human|bot|robot|ai|machine))?"
        r"|who are you|what are you|am i (?:talking|chatting) (?:to|with) (?:a )?(?:real )?"
        r"(?:person|human|bot|robot)|eres (?:un )?(?:bot|robot|humano|persona)"
        r"|bist du (?:ein )?(?:bot|roboter|mensch)|es tu (?:un )?(?:bot|robot|humain)",
    ),
    (
        "goodbye",
        r"have a (?:nice|good|great|lovely|wonderful) (?:day|evening|one|weekend|night|afternoon)"
        r"|see (?:you|ya|u)(?: later| soon| around)?|take care|good night|bye bye"
        r"|hasta (?:luego|pronto|mañana|la vista)|nos vemos|que tengas (?:un )?buen día|buen día"
        r"|auf wiedersehen|bis (?:bald|später|dann|morgen)|schönen tag(?: noch)?"
        r"|au revoir|à (?:bientôt|plus)|a (?:bientot|plus)|bonne (?:journée|journee|soirée|soiree"
        r"|nuit|fin de journée)"
        # closing the conversation
        r"|that(?:'s| is|s) (?:all|it|everything)(?: for (?:now|today))?|that will be all"
        r"|nothing else|i'm (?:good|done|all set)|all set|eso es todo|nada más|nada mas|nada"
        r"|das war's|das wars|das ist alles|sonst nichts|c'est tout|rien d'autre|ce sera tout",
    ),
    (
        "thanks",
        r"thank (?:you|u)|many thanks|much appreciated|appreciate it|muchas gracias|mil gracias"
        r"|vielen dank|danke schön|danke sehr|merci bien|mille mercis",
    ),
    (
        "greeting",
        r"good (?:morning|afternoon|evening|day)|buenos días|buenos dias|buenas (?:tardes|noches)"
        r"|guten (?:tag|morgen|abend)|grüß gott|grüss gott|grüezi"
        r"|how (?:are|r) (?:you|u)(?: doing)?(?: today)?|how's it going|what's up|wassup|sup"
        r"|(?:qué|que) tal|(?:cómo|como) estás|wie geht's|wie geht es (?:dir|ihnen)"
        r"|comment (?:ça|ca) va|(?:ça|ca) va",
    ),
    (
        "filler",
        r"for (?:all )?(?:the|your) (?:help|time|assistance)|for everything|got it|all good"
        r"|no worries|no problem|oh well|never mind|for now|a lot|a ton|a bunch"
        r"|(?:i )?hope you(?:'re| are) (?:having a )?(?:good|nice|lovely|great|wonderful|well)"
        r"(?: day| one| morning| evening)?"
        r"|de todos modos|de todas formas|por (?:todo|tu ayuda|su ayuda|la ayuda)|alles klar"
        r"|für (?:die|ihre|deine) hilfe|quand même|pour (?:votre|ton|ta) aide|d'accord"
        r"|a ti|a vos|a usted|à vous|à toi",
    ),
)
_PATTERNS: Final = tuple(
    (role, re.compile(rf"(?<!\S)(?:{pattern})(?!\S)")) for role, pattern in _PHRASES
)


def _roles(text: str) -> list[_Role] | None:
    """The role of every word or expression of ``text``; ``None`` when one has none."""
    said = " ".join(_TOKEN.findall(text))
    roles: list[_Role] = []
    for role, pattern in _PATTERNS:
        found = len(pattern.findall(said))
        if found:
            roles += [role] * found
            said = pattern.sub(" ", said)
    for word in said.split():
        known = _WORDS.get(word)
        if known is None:
            return None
        roles.append(known)
    return roles


def small_talk(text: str) -> SmallTalk | None:
    """What ``text`` says when it is only small talk, else ``None``. With several kinds in
    one message, a question about the assistant wins, then a goodbye ("thanks, bye"), then
    thanks ("hi, thanks")."""
    folded = text.casefold().replace("\u2019", "'")
    if len(folded.split()) > _MAX_WORDS:
        return None
    roles = _roles(folded)
    if roles is None:
        return None
    if not roles:  # no words at all: a wave is a hello
        kinds = {kind for emoji, kind in _EMOJI.items() if emoji in folded}
        return kinds.pop() if len(kinds) == 1 else None
    return next((kind for kind in _PRECEDENCE if kind in roles), None)


REPLIES: Final[dict[str, str]] = {
    "greeting": msg(
        "Hello! I am this store's shopping assistant: I can find products and narrow them "
        "down, keep your cart, check out with PayPal, tell you where your order is, take a "
        "return, and answer questions about shipping, returns, warranty and payment. What are "
        "you looking for?"
    ),
    "greeting merchant": msg(
        "Hello! I can show the store's sales, best sellers and recent orders, refund and ship "
        "orders, make and send invoices, set up plans and subscriptions, handle disputes, and "
        "search the catalog. What would you like to see?"
    ),
    "thanks": msg("You're welcome! Anything else I can help with?"),
    "goodbye": msg("Goodbye, and thank you!"),
    "identity": msg(
        "I am this store's shopping assistant, a computer program, not a person. I can find "
        "products, keep your cart and check out with PayPal. What are you looking for?"
    ),
}
"""Every small talk answer by kind (" merchant" for the merchant's, where it differs), in
English: :func:`reply` translates it."""

CART_REPLIES: Final[dict[str, tuple[str, str]]] = {
    "thanks": msg_plural(
        "You're welcome! Your cart holds %(count)d item. Anything else I can help with?",
        "You're welcome! Your cart holds %(count)d items. Anything else I can help with?",
    ),
    "goodbye": msg_plural(
        "Goodbye, and thank you! Your cart holds %(count)d item, kept for when you come back.",
        "Goodbye, and thank you! Your cart holds %(count)d items, kept for when you come back.",
    ),
}
"""A shopper's thanks and goodbye while the cart holds something: (one item, several)."""


def reply(
    kind: SmallTalk,
    *,
    merchant: bool = False,
    cart_items: int = 0,
    tr: NullTranslations = _ENGLISH,
) -> str:
    """The answer to ``kind`` in ``tr``'s language; a shopper thanking or leaving hears what
    the cart holds."""
    if cart_items > 0 and not merchant and kind in CART_REPLIES:
        return tr.ngettext(*CART_REPLIES[kind], cart_items) % {"count": cart_items}
    return tr.gettext(REPLIES.get(f"{kind} merchant", REPLIES[kind]) if merchant else REPLIES[kind])
