"""Writes the common-word lists ``cartagent.retrieval`` ships (``retrieval/data/common-words``).

A word of a shopper's turn in German, French or Spanish that nothing could check is taken as
a requirement the catalog's English could not read (so no card is called an exact match)
unless it is one of that language's common words: "dazu", "entonces", "possible" are chat,
"kabellose", "argenté", "Laptopfach" are requirements. The lists are the words of wordfreq
3.1.1 (Robyn Speer; data CC-BY-SA 4.0, see the NOTICE this writes) whose Zipf frequency is
at least ``ZIPF``, that is at least about 32 uses per million words.

``en-words.txt`` is the English words of four letters or more used at least about 3 times per
million (``WORD_ZIPF``): a word a shopper types that is one of them is that word, never a typo
of a catalog's value ("blown" is not "brown", "brain" is not "brown").

Run once, by hand, in an environment with ``pip install wordfreq==3.1.1``:

    python scripts/common-words.py
"""

from __future__ import annotations

from pathlib import Path

from wordfreq import top_n_list, zipf_frequency

LANGUAGES = ("de", "es", "fr")
ZIPF = 4.5
WORD_ZIPF = 3.5
SCANNED = 20_000
OUT = Path(__file__).resolve().parents[1] / "src/cartagent/retrieval/data/common-words"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for language in LANGUAGES:
        words = sorted(
            {w for w in top_n_list(language, SCANNED) if zipf_frequency(w, language) >= ZIPF}
        )
        (OUT / f"{language}.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
        print(f"{language}: {len(words)} words")
    english = sorted(
        {
            w
            for w in top_n_list("en", 60_000)
            if len(w) >= 4 and w.isalpha() and zipf_frequency(w, "en") >= WORD_ZIPF
        }
    )
    (OUT / "en-words.txt").write_text("\n".join(english) + "\n", encoding="utf-8")
    print(f"en-words: {len(english)} words")


if __name__ == "__main__":
    main()
