"""Words of a request that ask for nothing a product could have: chat around it ("sorry",
"then", "lol"), courtesy, and the function words of Spanish, German and French requests.

The catalog check leaves them out of what a reply says is met
(:mod:`.catalog_vocabulary`), and a model is not asked about a request whose only unplaced
words are these (:mod:`.understanding`).
"""

from __future__ import annotations

from .vocabulary import (
    AVAILABILITY_CUES,
    CURRENCY_WORDS,
    NEGATION_CUES,
    PRICE_MAX_CUES,
    PRICE_MIN_CUES,
    SORT_CUES,
    STOPWORDS,
)

__all__ = ["CUE_WORDS", "FILLER", "FOREIGN_FUNCTION_WORDS", "asks_nothing", "is_chat", "only_chat"]

# Words of a request that ask for nothing a product could lack.
FILLER = frozenset(
    {
        "guys",
        "anything",
        "everything",
        "stuff",
        "whatever",
        "ok",
        "okay",
        "yes",
        "yeah",
        "hmm",
        "um",
        "uh",
        "lol",
        "pls",
        "plz",
        "thx",
        "sell",
        "selling",
        "got",
        "gotta",
        "gonna",
        "wanna",
        "tell",
        "know",
        "think",
        "go",
        "going",
        "then",
        "now",
        "right",
        "today",
        "one",
        "two",
        "three",
        "first",
        "second",
        "third",
        "last",
        "cheap",
        "cheaper",
        "cheapest",
        "good",
        "great",
        "nice",
        "best",
        "more",
        "less",
        "most",
        "least",
        "much",
        "many",
        "other",
        "another",
        "else",
        # chat around a request: apologies, hesitation, courtesy
        "sorry",
        "oops",
        "ugh",
        "oh",
        "typo",
        "meant",
        "mean",
        "fine",
        "cool",
        "ty",
        "tho",
        "though",
        "if",
        # letting go of something: "forget the battery thing", "colour doesn't matter"
        "forget",
        "matter",
        "doesn't",
        "doesnt",
        "care",
        "thing",
    }
)
# Function and courtesy words of Spanish, German and French requests (none an English word):
# they ask for nothing either.
FOREIGN_FUNCTION_WORDS = frozenset(
    """
    unos unas uno al del lo les los las el mi mis tu su sus nos yo tengo tienes tiene hay
    quiero busco necesito buscando quisiera algo alguno alguna así cual cuál cuáles qué pero
    porque muy más ya también sí solo sólo mejor bueno vale claro ahora hoy por favor gracias
    einen einem einer eines ich du er sie es wir ihr mein meine meinen ist sind habe
    haben gibt suche brauche möchte hätte gern gerne etwas welche welcher welches aber auch
    noch nur schon sehr mehr dann doch bitte danke ja nein oder und zu vom zum zur am im auf
    je tu il elle nous vous ils elles une mon ma mes ta tes est sont suis ai avons avez
    cherche voudrais veux aimerais quelque chose quel quelle quels quelles mais aussi encore
    seulement très bien alors donc oui non svp merci bonjour salut ça cette ces celle celles
    hola hallo
    que qui quoi esté sea ser estar está están existe existen dire voulais voulait pardon
    dommage plutôt liebsten lieber darf sein halt mal denn eben kann könnt vielleicht peut
    faut avoir être tengan tenga puede pueda podría egal importe igual da cualquier
    d'accord peu
    """.split()  # noqa: SIM905
)


def asks_nothing(word: str) -> bool:
    """Whether ``word`` of a request is chat that asks for nothing a product could have
    ("sorry", "then", "bitte", "une"): left out of what is checked and of what is said back."""
    word = word.casefold()
    # An adverb in "-ally" ("basically", "literally", "naturally") qualifies the talk, not
    # the product, though its stem may be a value's ("basic").
    adverb = len(word) > 6 and word.endswith("ally")
    return word in STOPWORDS or word in FILLER or word in FOREIGN_FUNCTION_WORDS or adverb


# Chat words that are also part of a sort, price, stock or negation cue ("cheapest", "now",
# "more"): left unplaced, they may be a cue the parser missed, so they are not just chat.
CUE_WORDS = frozenset(
    word
    for cues in (
        *SORT_CUES.values(),
        PRICE_MAX_CUES,
        PRICE_MIN_CUES,
        AVAILABILITY_CUES,
        NEGATION_CUES,
        tuple(CURRENCY_WORDS),
    )
    for cue in cues
    for word in cue.split()
)


def is_chat(word: str) -> bool:
    """Whether ``word``, left unplaced by the parser, is chat (:func:`asks_nothing`) and no part
    of a cue it may have missed."""
    return asks_nothing(word) and word.casefold() not in CUE_WORDS


def only_chat(text: str) -> bool:
    """Whether every word of ``text`` (a parser's unplaced words) is chat (:func:`is_chat`): a
    model asked about them has nothing to add ("ok then", "une ça existe")."""
    words = text.split()
    return bool(words) and all(is_chat(word) for word in words)
