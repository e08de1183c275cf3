"""Merge translations into the assistant's gettext catalogues (used once per batch of new
messages; `make messages` extracts them first). Reads a Python file defining ``T``:
msgid, or (singular, plural), -> {language: translation or (singular, plural)}."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

from babel.messages.pofile import read_po, write_po

LOCALE = Path("src/cartagent/assistant/locale")


def main() -> int:
    table = runpy.run_path(sys.argv[1])["T"]
    for language in ("es", "de", "fr"):
        path = LOCALE / language / "LC_MESSAGES" / "cartagent.po"
        with path.open("rb") as handle:
            catalog = read_po(handle, locale=language)
        for key, by_language in table.items():
            message = catalog.get(key[0] if isinstance(key, tuple) else key)
            if message is not None and language in by_language:
                string = by_language[language]
                if isinstance(string, tuple):  # CLDR may count more forms ("many" in es, fr)
                    string = string + (string[-1],) * (catalog.num_plurals - len(string))
                message.string = string
                message.flags.discard("fuzzy")
        with path.open("wb") as handle:
            write_po(handle, catalog, omit_header=False, no_location=True, width=100)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
