"""Store knowledge: the store's policy documents, split into sections and searched.

The documents are the Markdown files in ``assistant/policies/`` (shipping, returns, warranty,
payments, orders), shipped with cartagent. Each ``## Section`` of a document is one unit of
retrieval: the document's ``# Title``, the section heading and the section's text, verbatim.

A question is matched against every section twice, and the scores are added (the second
one weighted):

* by meaning: the cosine similarity of the question's and the section's embeddings (any
  :class:`~cartagent.retrieval.embeddings.Embedder`; MiniLM by default), and
* by words: the share of the question's words the section contains, each word weighted by
  its inverse document frequency over the sections. A word no section uses weighs as much as
  the rarest word, so "do you price match" is only half covered by "price". Words are stemmed
  by the analyzer lexical product search uses; question words ("how", "can", "you") are left
  out.

The best section answers when its score reaches ``threshold``; otherwise the documents do not
answer the question, and nobody should make an answer up.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from ....retrieval import Words, analyzer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ....retrieval import Embedder

__all__ = [
    "DOCUMENTS",
    "Match",
    "Section",
    "StoreKnowledge",
    "document_text",
    "load_sections",
    "split_sections",
]

DOCUMENTS = ("shipping", "returns", "warranty", "payments", "orders")
"""The policy documents shipped in ``assistant/policies/`` (``<name>.md``)."""

# Words of the question that say nothing about its subject ("how do I ...", "can you ...").
_QUESTION_WORDS = (
    "a an and any are as at be been by can could do does for from get have how i if in is it "
    "me my of on or our please s so should that the there this to us was we what when where "
    "which who why will with would you your"
)
_HEADING = re.compile(r"^(#{1,2})\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True)
class Section:
    """One ``## Section`` of a policy document; ``text`` is its body, verbatim."""

    document: str
    title: str
    heading: str
    text: str

    def passage(self) -> str:
        """What is embedded and matched: the title, the heading and the text."""
        return f"{self.title}: {self.heading}. {self.text}"


@dataclass(frozen=True)
class Match:
    """A section's score for a question: ``dense + lexical_weight * lexical``."""

    section: Section
    score: float
    dense: float
    lexical: float


def split_sections(document: str, markdown: str) -> list[Section]:
    """The sections of one Markdown document named ``document``.

    The document starts with a ``# Title``; each ``## Heading`` starts a section that runs to
    the next one. Text between the title and the first heading is a section headed by the
    title. Sections without text are left out.
    """
    lines = markdown.strip().splitlines()
    first = _HEADING.match(lines[0]) if lines else None
    if first is None or first.group(1) != "#":
        raise ValueError(f"policy {document!r} does not start with a '# Title' line")
    title = first.group(2)
    sections: list[Section] = []
    heading = title
    body: list[str] = []
    for line in lines[1:]:
        found = _HEADING.match(line)
        if found is None or found.group(1) != "##":
            body.append(line)
            continue
        sections.extend(_section(document, title, heading, body))
        heading, body = found.group(2), []
    sections.extend(_section(document, title, heading, body))
    return sections


def _section(document: str, title: str, heading: str, body: list[str]) -> list[Section]:
    text = "\n".join(body).strip()
    return [Section(document, title, heading, text)] if text else []


def load_sections(documents: Iterable[str] = DOCUMENTS) -> list[Section]:
    """Every section of the policy documents shipped in ``assistant/policies/``."""
    return [s for name in documents for s in split_sections(name, document_text(name))]


def document_text(document: str) -> str:
    """The Markdown text of the shipped policy document ``document``."""
    return (
        resources.files("cartagent.assistant")
        .joinpath("policies", f"{document}.md")
        .read_text("utf-8")
    )


class StoreKnowledge:
    """The policy sections, ranked for a question by meaning and by words.

    ``lexical_weight`` scales the word score before it is added to the cosine similarity;
    ``threshold`` is the score the best section needs to answer. The defaults were chosen on
    MiniLM with the questions in ``tests/assistant/test_store_knowledge.py``: the weighted sum
    ranked better than reciprocal rank fusion, and a lower threshold quotes sections for
    questions the policies do not answer. The sections are embedded once, on the first
    question (or by :meth:`warm_up`).
    """

    def __init__(
        self,
        embedder: Embedder,
        sections: Sequence[Section] | None = None,
        *,
        lexical_weight: float = 0.3,
        threshold: float = 0.35,
    ) -> None:
        self.embedder = embedder
        self.sections = list(load_sections() if sections is None else sections)
        if not self.sections:
            raise ValueError("StoreKnowledge needs at least one section")
        if lexical_weight < 0:
            raise ValueError(f"lexical_weight must not be negative, not {lexical_weight}")
        self.lexical_weight = lexical_weight
        self.threshold = threshold
        self._words = Words(analyzer())
        self._ignored = frozenset(self._words.tokens(_QUESTION_WORDS))
        self._section_words = [self._content(s.passage()) for s in self.sections]
        count = len(self.sections)
        frequency: dict[str, int] = {}
        for words in self._section_words:
            for word in words:
                frequency[word] = frequency.get(word, 0) + 1
        self._idf = {word: math.log(1 + count / df) for word, df in frequency.items()}
        self._unseen_idf = math.log(1 + count)  # a word no section has, as if one had it
        self._matrix: npt.NDArray[np.float32] | None = None
        self._lock = threading.Lock()

    def _content(self, text: str) -> frozenset[str]:
        return frozenset(self._words.tokens(text)) - self._ignored

    def warm_up(self) -> None:
        """Embed the sections now rather than on the first question."""
        self._index()

    def _index(self) -> npt.NDArray[np.float32]:
        with self._lock:
            if self._matrix is None:
                self._matrix = self.embedder.embed([s.passage() for s in self.sections])
            return self._matrix

    def lexical(self, question: str, section: int) -> float:
        """The idf-weighted share of ``question``'s words found in section ``section``."""
        words = self._content(question)
        total = sum(self._idf.get(w, self._unseen_idf) for w in words)
        if total == 0:
            return 0.0
        found = self._section_words[section]
        return sum(self._idf[w] for w in words if w in found) / total

    def rank(self, question: str) -> list[Match]:
        """Every section's match for ``question``, best first."""
        dense = self._index() @ self.embedder.embed([question])[0]
        matches = []
        for index, section in enumerate(self.sections):
            lexical = self.lexical(question, index)
            cosine = float(dense[index])
            score = cosine + self.lexical_weight * lexical
            matches.append(Match(section, score, cosine, lexical))
        matches.sort(key=lambda m: -m.score)
        return matches

    def answer(self, question: str) -> Match | None:
        """The best section when it reaches the threshold, else ``None`` (not answered)."""
        best = self.rank(question)[0]
        return best if best.score >= self.threshold else None
