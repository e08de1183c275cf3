"""Greetings, thanks and goodbyes told apart from messages that ask for something, and the
answers they get."""

from __future__ import annotations

import pytest

from cartagent.assistant.small_talk import CART_REPLIES, REPLIES, reply, small_talk


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("hi", "greeting"),
        ("Hello there!", "greeting"),
        ("good morning :)", "greeting"),
        ("hello!! how are you today?", "greeting"),
        ("good morning! hope you're having a lovely day", "greeting"),
        ("Thanks!", "thanks"),
        ("ok, thank you so much", "thanks"),
        ("thanks for your help", "thanks"),
        ("cheers mate", "thanks"),
        ("sweet, thanks", "thanks"),
        ("perfect, ty!", "thanks"),
        ("ok cool thx \U0001f642", "thanks"),
        ("alright, thank you anyway!", "thanks"),
        ("bye", "goodbye"),
        ("That\u2019s all for now", "goodbye"),
        ("nothing else, thanks", "goodbye"),
        ("great, thanks, that's all", "goodbye"),  # "that's all" ends the conversation
        ("ok thx thats all", "goodbye"),
        ("see you later!", "goodbye"),
        ("figures. bye", "goodbye"),
        ("perfect, thank you so much! have a good one", "goodbye"),
        ("are you a real person or a bot lol", "identity"),
        ("hi, who are you?", "identity"),
    ],
)
def test_english_small_talk_is_told_by_kind(text: str, kind: str) -> None:
    assert small_talk(text) == kind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("¡Hola! ¿Qué tal?", "greeting"),
        ("genial, gracias!!", "thanks"),
        ("ok, gracias de todos modos", "thanks"),
        ("bueno, nada, gracias. chao", "goodbye"),
        ("Guten Morgen", "greeting"),
        ("Danke!", "thanks"),
        ("danke, tschüss", "goodbye"),
        ("Vielen Dank, schönen Tag noch!", "goodbye"),
        ("Coucou !", "greeting"),
        ("Parfait, merci beaucoup !", "thanks"),
        ("merci, au revoir", "goodbye"),
        ("super, merci et bonne soirée !", "goodbye"),
        ("Super, danke dir!", "thanks"),
        ("gracias a ti", "thanks"),
        ("merci à vous !", "thanks"),
    ],
)
def test_spanish_german_and_french_small_talk_is_told_by_kind(text: str, kind: str) -> None:
    assert small_talk(text) == kind


def test_a_lone_wave_says_hello_and_folded_hands_say_thanks() -> None:
    assert small_talk("\U0001f44b") == "greeting"
    assert small_talk("\U0001f44b\U0001f3fd") == "greeting"  # with a skin tone
    assert small_talk("\U0001f64f") == "thanks"
    assert small_talk("\U0001f44d") is None  # a thumbs up may say yes to a question
    assert small_talk("\U0001f44b\U0001f64f") is None  # which one?


@pytest.mark.parametrize(
    "text",
    [
        "hey, can you help me find a backpack?",
        "hi, I need running shoes",
        "thanks for the help finding boots",
        "no thanks",  # answers a question: not small talk
        "thank you, now show me hoodies",
        "thanks, now show me red ones",
        "hola! busco unos auriculares",
        "danke, und jetzt in Rot",
        "hello kitty backpack",
        "action figures",
        "ok",  # filler alone: a confirmation, perhaps
        "cool cool",
        "thanks 2",
        "",
        "hi " * 40,
    ],
)
def test_a_message_that_asks_for_something_is_not_small_talk(text: str) -> None:
    assert small_talk(text) is None


@pytest.mark.parametrize(
    "text", [*REPLIES.values(), *(t for p in CART_REPLIES.values() for t in p)]
)
def test_every_answer_is_short_and_refuses_nothing(text: str) -> None:
    said = (text % {"count": 12}).casefold()
    assert len(said) <= 300
    assert not any(refusal in said for refusal in ("sorry", "can't help", "cannot help"))


def test_thanks_and_goodbye_tell_the_shopper_what_the_cart_holds() -> None:
    assert reply("thanks") == "You're welcome! Anything else I can help with?"
    assert reply("thanks", cart_items=1) == (
        "You're welcome! Your cart holds 1 item. Anything else I can help with?"
    )
    assert reply("goodbye", cart_items=3) == (
        "Goodbye, and thank you! Your cart holds 3 items, kept for when you come back."
    )
    # The merchant's cart is no shopping cart.
    assert reply("thanks", merchant=True, cart_items=2) == reply("thanks")


def test_a_greeting_says_what_the_assistant_does_for_whom() -> None:
    assert "What are you looking for?" in reply("greeting")
    assert "the store's sales" in reply("greeting", merchant=True)
    assert "not a person" in reply("identity")
    assert reply("identity", merchant=True) == reply("identity")
