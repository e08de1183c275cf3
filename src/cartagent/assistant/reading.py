"""One reading of a turn, made once and shared by the router and the specialists.

The assistant reads a turn for what it points at among the results on screen (a card by its
number or by an option value, "add size 8"), what it asks about them (a fact, their options,
a comparison, "the cheapest", a question in the shopper's own words), what it changes in the
cart (a quantity, a variant), whether it asks for more results, something similar, the
catalog or a value other than one named, whether it is small talk, and the search it asks
for. Routing needs most of these, and the specialist the turn goes to needs them again:
:class:`TurnReading` reads each part when first asked for and keeps it, so the router's
reading is the specialist's and nothing is read twice. The search itself is read by the
searcher's understander (the rule parser, or a tuned model behind it): a model plugs in there,
under :meth:`TurnReading.search`, and every consumer gets its reading. :meth:`TurnReading.
constraints` lines that search up with the turn's words: each constraint's span and whether
the turn said it, said it in another language or by a use, or carried it from an earlier turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from ..retrieval import asks_other_than, parse
from .cart import QuantityChange, find_quantity_change
from .catalog_overview import CATALOG_QUESTION
from .comparison import find_comparison
from .constraints import Constraint, constraints_of
from .language import detect
from .more_results import wants_more
from .option_pick import THE_VALUE_ONE, OptionPick, find_option_pick
from .product_facts import FactQuestion, find_fact_question
from .product_questions import find_option_question
from .product_talk import names_a_kind, names_constraints
from .references import Reference, find_reference
from .shown_questions import ShownQuestion, question_about_shown
from .shown_superlatives import Superlative, find_superlative
from .similar import wants_similar
from .small_talk import SmallTalk, small_talk
from .variant_change import VariantChange, find_variant_change

if TYPE_CHECKING:
    from ..catalog import Product
    from ..retrieval import Searcher, SearchQuery
    from .conversation import Conversation

__all__ = ["TurnReading"]


class TurnReading:
    """What ``text`` says, read part by part on first use and kept (see the module).

    ``conversation`` (the results on screen, the cart) and ``searcher`` (the catalog) are
    what the parts that need them read against; without them those parts find nothing.
    """

    def __init__(
        self,
        text: str,
        conversation: Conversation | None = None,
        searcher: Searcher | None = None,
        product_of: Callable[[str], Product | None] | None = None,
    ) -> None:
        self.text = text
        self.conversation = conversation
        self.searcher = searcher
        self.product_of = product_of or (searcher.product if searcher is not None else None)
        self._searches: dict[tuple[str, tuple[str, ...], str | None], SearchQuery] = {}
        self._alone: dict[str, SearchQuery] = {}
        self._constraints: dict[str, tuple[Constraint, ...]] = {}

    # ------------------------------------------------------------ from the words alone

    @cached_property
    def small_talk(self) -> SmallTalk | None:
        """A greeting, thanks, goodbye or question about the assistant, and nothing else."""
        return small_talk(self.text)

    @cached_property
    def catalog_question(self) -> bool:
        """Whether it asks what the store sells."""
        return CATALOG_QUESTION.search(self.text) is not None

    @cached_property
    def similar(self) -> str | None:
        """What is wanted something similar to ("" for the card on screen), or ``None``."""
        return wants_similar(self.text)

    @cached_property
    def reference(self) -> Reference | None:
        """A card of the results pointed at by number or position ("the second one")."""
        return find_reference(self.text)

    @cached_property
    def comparison(self) -> tuple[int, ...] | None:
        """The cards to compare ("compare the first two")."""
        return find_comparison(self.text)

    @cached_property
    def more(self) -> bool:
        """Whether it asks for more results ("any others?")."""
        return wants_more(self.text)

    @cached_property
    def superlative(self) -> Superlative | None:
        """Which card is the most or least of something ("which one is the lightest?")."""
        return find_superlative(self.text)

    @cached_property
    def fact(self) -> FactQuestion | None:
        """A fact asked about the product talked about ("is it in stock?")."""
        return find_fact_question(self.text)

    @cached_property
    def option_question(self) -> str | None:
        """The option asked about ("what sizes does it come in?")."""
        return find_option_question(self.text)

    @cached_property
    def points_by_value(self) -> bool:
        """Whether it points at a card by an option value ("the over-ear one")."""
        return THE_VALUE_ONE.match(" ".join(self.text.casefold().split())) is not None

    @cached_property
    def other_than(self) -> bool:
        """Whether it asks for another value than one it names ("any colour but red?")."""
        return asks_other_than(self.text)

    @cached_property
    def parsed(self) -> SearchQuery:
        """The rule parser's reading of the words alone, without the catalog."""
        return parse(self.text)

    # ------------------------------------------------------------ against the conversation

    @cached_property
    def option_pick(self) -> OptionPick | None:
        """A shown product's variant picked to add by its values ("add size 8")."""
        if self.conversation is None:
            return None
        return find_option_pick(self.text, self.conversation)

    @cached_property
    def quantity_change(self) -> QuantityChange | None:
        """A new quantity for a line of the cart ("make it 3")."""
        if self.conversation is None:
            return None
        return find_quantity_change(self.text, self.conversation)

    @cached_property
    def variant_change(self) -> VariantChange | None:
        """Another variant for a line of the cart ("the red one instead")."""
        if self.conversation is None:
            return None
        return find_variant_change(self.text, self.conversation, self.product_of)

    @cached_property
    def about_shown(self) -> ShownQuestion | None:
        """A question about the results on screen in the shopper's own words ("which one
        holds more water?", "how long does its battery last?")."""
        shown = self.conversation.results if self.conversation is not None else []
        if not shown or self.searcher is None:
            return None
        return question_about_shown(self.text, shown, self.searcher)

    def alone(self, text: str) -> SearchQuery:
        """``text`` (the turn, or words of it) read alone by the searcher's understander, kept
        per text; raises :class:`~cartagent.errors.ModelError` as the understander does."""
        if text not in self._alone:
            if self.searcher is None:
                raise ValueError("a reading without a searcher understands nothing")
            self._alone[text] = self.searcher.understand(text)
        return self._alone[text]

    @cached_property
    def names_constraints(self) -> bool:
        """Whether the turn says a constraint the understander reads ("soft cover, A4")."""
        return self.searcher is not None and names_constraints(self.text, self.searcher, self.alone)

    @cached_property
    def names_a_kind(self) -> bool:
        """Whether the turn names a kind of product the catalog has, in its own words."""
        return self.searcher is not None and names_a_kind(self.text, self.searcher, self.alone)

    def search(
        self,
        request: str | None = None,
        *,
        context: Sequence[str] = (),
        shown: SearchQuery | None = None,
    ) -> SearchQuery:
        """The search ``request`` (default: the turn's words) asks for, read by the searcher's
        understander (the rule parser, or a tuned model behind it) with the earlier requests
        as ``context``, as a follow-up of ``shown``, the search on screen. Kept per reading
        asked for; raises :class:`~cartagent.errors.ModelError` as the understander does.
        A new search (no context, nothing shown) that names no kind is read for the kind its
        use asks for (:meth:`~cartagent.retrieval.Searcher.read_use`)."""
        if self.searcher is None:
            raise ValueError("a reading without a searcher understands nothing")
        request = self.text if request is None else request
        key = (request, tuple(context), None if shown is None else shown.model_dump_json())
        if key not in self._searches:
            read = self.searcher.understand_turn(request, context=context, shown=shown)
            if not context and shown is None:  # a new search may say a use, not a kind
                read = self.searcher.read_use(request, read, detect(request))
            self._searches[key] = read
        return self._searches[key]

    def constraints(self, query: SearchQuery) -> tuple[Constraint, ...]:
        """Each constraint of ``query`` (the search this turn runs) with the span of the turn
        that says it and how it was read: said, glossed, or carried from an earlier turn."""
        key = query.model_dump_json()
        if key not in self._constraints:
            vocabulary = self.searcher.vocabulary if self.searcher is not None else None
            self._constraints[key] = constraints_of(query, self.text, vocabulary)
        return self._constraints[key]
