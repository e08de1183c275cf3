"""Query understanding by a language model: checked, repaired, grounded, cached, with a fallback.

``ModelUnderstander(model)`` asks a :class:`~cartagent.llm.Model` for a :class:`SearchQuery` as
JSON (the prompt and response format of :mod:`cartagent.retrieval.prompt`) and never trusts it:

1. the reply is validated; invalid JSON goes through
   :func:`~cartagent.retrieval.output_repair.repair` (code fences, chatter, trailing commas,
   truncated output, common wrong shapes);
2. :func:`~cartagent.retrieval.grounding.ground` removes structured values the shopper's words
   do not support (hallucinations, injected constraints; the rule is documented there);
3. when the model fails, is unsure (its reply's ``confidence`` under ``min_confidence``), or
   nothing usable is left, the fallback (the rule parser) answers;
4. good answers are kept in an optional :class:`~cartagent.retrieval.cache.SemanticCache`.

With ``rules_first=True`` the fallback reads the request first, and the model is asked only
when that reading leaves words it could not place (its ``text``): on the tuning set's dev split
a reading that places every word is exact every time (246 of 246), one that leaves words only a
quarter of the time, so the model is spent where the rules are weak. Its answer then only fills
the gaps of the rules' reading, with values the leftover words say
(:func:`~cartagent.retrieval.merging.fill_gaps`; ``combine="replace"`` takes the model's answer
whole instead), so it cannot undo what they read right.

It is awaited (:meth:`ModelUnderstander.understand`) or called like any ``Understander``
(``understander(request, context=...)``): the sync call runs the coroutine on ONE long-lived
event loop in a background thread (an anyio blocking portal), so clients inside the model (an
HTTP connection pool, say) stay bound to a single loop whichever thread calls.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import weakref
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any, Literal

import anyio.to_thread
from anyio.from_thread import BlockingPortal, start_blocking_portal
from opentelemetry import context as otel_context
from pydantic import ValidationError

from ..errors import ConfigurationError
from ..llm import Model, Usage
from .cache import SemanticCache
from .chat_words import only_chat
from .grounding import ground
from .merging import fill_gaps
from .output_repair import UnrepairableOutput, repair
from .prompt import (
    PATCH_STYLES,
    RESPONSE_FORMAT,
    Example,
    PromptStyle,
    answers_in_line,
    check_style,
    understanding_messages,
)
from .query import SearchQuery
from .query_line import parse_gaps_line, parse_query_line
from .rules import MAX_CONTEXT_TURNS, MAX_REQUEST_CHARS, cut_request, parse
from .search import Understander
from .spans import stage

__all__ = ["Combine", "ModelUnderstander", "Source", "UnderstanderStats", "Understanding"]

Source = Literal["model", "repaired", "rules", "parser", "cache"]
Combine = Literal["fill", "replace"]

_MAX_PROBLEM_CHARS = 200


@dataclass(frozen=True)
class Understanding:
    """How a request was understood, and by which path.

    ``source``: ``model`` (the reply was valid and grounded as it was), ``repaired`` (the reply
    had to be fixed, or grounding removed something; ``problems`` say what), ``rules`` (the
    fallback answered: empty request, model error or unusable reply), ``parser`` (rules first:
    the rules placed every word, the model was not asked) or ``cache``.
    ``timings`` holds milliseconds per stage run (``parser``, ``cache``, ``model``, ``repair``,
    ``fallback``);
    ``usage`` the model's token counts when it reported them.
    """

    query: SearchQuery
    source: Source
    problems: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)
    usage: Usage | None = None


@dataclass
class UnderstanderStats:
    """Counts of a :class:`ModelUnderstander`'s calls by outcome (``skipped``: empty requests;
    ``parser_only``: rules first, and the rules placed every word; ``too_long``: rules first,
    and the rules left more words than the model is asked about; ``chat_only``: rules first,
    and the words the rules left only chat (:func:`~.chat_words.only_chat`); ``unsure``:
    fallbacks because the model's confidence was under the gate)."""

    calls: int = 0
    parser_only: int = 0
    model_ok: int = 0
    repaired: int = 0
    fallbacks: int = 0
    cache_hits: int = 0
    skipped: int = 0
    too_long: int = 0
    chat_only: int = 0
    unsure: int = 0


def _describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= _MAX_PROBLEM_CHARS else text[: _MAX_PROBLEM_CHARS - 3] + "..."


def _stop_portal(manager: AbstractContextManager[BlockingPortal]) -> None:
    with contextlib.suppress(RuntimeError):  # already stopped, or on the portal's own thread
        manager.__exit__(None, None, None)


def _accepts_max_tokens(model: Model) -> bool:
    try:
        parameters = inspect.signature(model.complete).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "max_tokens" or p.kind is p.VAR_KEYWORD for p in parameters)


class ModelUnderstander:
    """An ``Understander`` backed by a language model, with repair, grounding and a fallback.

    ``fallback`` answers when the model fails or its reply is unusable (default: the rule
    parser). ``cache`` keeps model answers for requests seen again. ``style`` and ``examples``
    shape the prompt (:func:`~cartagent.retrieval.prompt.understanding_messages`).
    ``max_tokens``, when set, is passed to ``model.complete``, which must accept it.
    ``rules_first=True`` answers with the fallback's reading when it leaves no word unplaced
    (no ``text``), or only chat ("ok then", "bitte"), and asks the model only otherwise;
    ``combine`` says what becomes of that answer: ``"fill"`` (the default) fills the gaps of
    the fallback's reading with it, ``"replace"`` takes it whole.
    The ``patch`` style (the model answers only what the parser's reading lacks) needs
    ``rules_first=True`` and ``combine="fill"``.
    ``constrained=False`` asks without the JSON Schema (no grammar): for a model tuned to
    answer in the schema, whose grammar costs more time than it saves repairs; its output is
    then bounded by ``max_tokens`` and still validated, repaired and grounded.
    ``max_leftover_words`` (rules first only) keeps the fallback's reading, without asking, when
    it leaves more words than that: a long story the model was never trained on, where its
    prompt costs the most.
    ``min_confidence`` (0 to 1) keeps the fallback's reading when the model's reply reports a
    ``confidence`` under it (a token the model chose with less than that probability); a model
    that reports none is not gated.

    The sync call runs on a background event loop started on first use; :meth:`close` (or
    leaving a ``with`` block) stops it. The model itself is not closed.
    """

    def __init__(
        self,
        model: Model,
        *,
        fallback: Understander = parse,
        cache: SemanticCache | None = None,
        style: PromptStyle = "full",
        examples: Sequence[Example] | None = None,
        max_tokens: int | None = None,
        constrained: bool = True,
        rules_first: bool = False,
        combine: Combine = "fill",
        min_confidence: float | None = None,
        max_leftover_words: int | None = None,
    ) -> None:
        check_style(style)
        if max_leftover_words is not None and (max_leftover_words < 1 or not rules_first):
            raise ConfigurationError(
                "max_leftover_words must be at least 1 and needs rules_first=True, not "
                f"{max_leftover_words}"
            )
        self._max_leftover_words = max_leftover_words
        if min_confidence is not None and not 0 <= min_confidence <= 1:
            raise ConfigurationError(f"min_confidence must be 0 to 1, not {min_confidence}")
        self._min_confidence = min_confidence
        self._options: dict[str, Any] = {}
        if max_tokens is not None:
            if max_tokens < 1:
                raise ConfigurationError(f"max_tokens must be at least 1, not {max_tokens}")
            if not _accepts_max_tokens(model):
                name = type(model).__name__
                raise ConfigurationError(
                    f"{name}.complete takes no max_tokens; set the limit on the model instead"
                )
            self._options["max_tokens"] = max_tokens
        self.model = model
        self.cache = cache
        # The line notation has no JSON Schema: a model tuned to it decodes freely.
        self._response_format = (
            RESPONSE_FORMAT if constrained and not answers_in_line(style) else None
        )
        self._fallback = fallback
        self._max_tokens = max_tokens
        self._constrained = constrained
        self._rules_first = rules_first
        if combine not in ("fill", "replace"):
            raise ConfigurationError(f"combine must be 'fill' or 'replace', not {combine!r}")
        if style in PATCH_STYLES and not (rules_first and combine == "fill"):
            # A patch is only what the parser's reading lacks: it means nothing on its own.
            raise ConfigurationError(f"the {style} style needs rules_first=True and combine='fill'")
        self._combine: Combine = combine
        self._style: PromptStyle = style
        self._examples = examples
        self._stats = UnderstanderStats()
        self._lock = threading.Lock()
        self._portal: BlockingPortal | None = None
        self._stopper: weakref.finalize[Any, Any] | None = None
        self._closed = False

    def warm_up(self) -> None:
        """Load the model now, when it can be loaded ahead (an in-process llama.cpp model): the
        first shopper's turn then does not wait for it."""
        load = getattr(self.model, "load", None)
        if callable(load):
            load()

    @property
    def fills_gaps_of(self) -> Understander | None:
        """The understander whose reading this one answers with, its gaps filled by the model
        (rules first, ``combine="fill"``): the fallback; None when the model reads requests
        whole."""
        return self._fallback if self._rules_first and self._combine == "fill" else None

    def with_cache(self, cache: SemanticCache | None) -> ModelUnderstander:
        """A new understander asking the same model the same way, with ``cache``."""
        return ModelUnderstander(
            self.model,
            fallback=self._fallback,
            cache=cache,
            style=self._style,
            examples=self._examples,
            max_tokens=self._max_tokens,
            constrained=self._constrained,
            rules_first=self._rules_first,
            combine=self._combine,
            min_confidence=self._min_confidence,
            max_leftover_words=self._max_leftover_words,
        )

    @property
    def stats(self) -> UnderstanderStats:
        """A snapshot of the counts so far."""
        with self._lock:
            return replace(self._stats)

    def _count(self, name: str) -> None:
        with self._lock:
            setattr(self._stats, name, getattr(self._stats, name) + 1)

    async def understand(self, request: str, *, context: Sequence[str] = ()) -> Understanding:
        """Understand ``request`` after the earlier requests in ``context`` (oldest first).

        Never raises because of the model: its errors and unusable replies make the fallback
        answer, with the reason in ``problems``.
        """
        self._count("calls")
        turns = tuple(t for t in context if isinstance(t, str) and t.strip())[-MAX_CONTEXT_TURNS:]
        if not isinstance(request, str) or not request.strip():
            self._count("skipped")
            return Understanding(SearchQuery(), "rules")
        problems: list[str] = []
        if len(request) > MAX_REQUEST_CHARS:
            request = cut_request(request)
            problems.append(f"request cut to {MAX_REQUEST_CHARS} characters")
        timings: dict[str, float] = {}
        reading: SearchQuery | None = None
        if self._rules_first:
            with stage("parser", timings):
                reading = self._fallback(request, context=turns)
            if not reading.text:
                self._count("parser_only")
                return Understanding(reading, "parser", tuple(problems), timings)
            if only_chat(reading.text):
                self._count("chat_only")
                return Understanding(reading, "parser", tuple(problems), timings)
            left = len(reading.text.split())
            if self._max_leftover_words is not None and left > self._max_leftover_words:
                self._count("too_long")
                problems.append(
                    f"not asked: {left} words left over, more than {self._max_leftover_words}"
                )
                return Understanding(reading, "parser", tuple(problems), timings)
        cached = await self._cached("get", (request, turns), problems, timings)
        if cached is not None:
            self._count("cache_hits")
            return Understanding(cached, "cache", tuple(problems), timings)
        answer, usage = await self._ask(request, turns, problems, timings)
        if answer is None:
            self._count("fallbacks")
            if reading is None:
                with stage("fallback", timings):
                    reading = self._fallback(request, context=turns)
            return Understanding(reading, "rules", tuple(problems), timings, usage)
        query, source = answer
        if reading is not None and self._combine == "fill":
            query = fill_gaps(reading, query)
        self._count("model_ok" if source == "model" else "repaired")
        await self._cached("put", (request, turns, query), problems, timings)
        return Understanding(query, source, tuple(problems), timings, usage)

    async def _cached(
        self,
        operation: Literal["get", "put"],
        args: tuple[Any, ...],
        problems: list[str],
        timings: dict[str, float],
    ) -> SearchQuery | None:
        """Run a cache lookup or store off the event loop (embedding takes milliseconds)."""
        if self.cache is None:
            return None
        run: Callable[..., SearchQuery | None] = getattr(self.cache, operation)
        try:
            with stage("cache", timings):
                return await anyio.to_thread.run_sync(run, *args)
        except Exception as exc:  # the cache only saves time; a broken one must not cost answers
            problems.append(f"cache failed: {_describe(exc)}")
            return None

    async def _ask(
        self, request: str, turns: tuple[str, ...], problems: list[str], timings: dict[str, float]
    ) -> tuple[tuple[SearchQuery, Source] | None, Usage | None]:
        messages = understanding_messages(
            request, turns, examples=self._examples, style=self._style
        )
        try:
            with stage("model", timings):
                completion = await self.model.complete(
                    messages, response_format=self._response_format, **self._options
                )
        except Exception as exc:  # a failing model must not fail the search: rules answer
            problems.append(f"model failed: {_describe(exc)}")
            return None, None
        if completion.truncated and answers_in_line(self._style):
            # A line answer is a few tokens: one cut at the bound is a runaway, and its first
            # segments may still parse into a query nobody asked for.
            tokens = completion.usage.output_tokens if completion.usage else "its"
            problems.append(f"model ran away: stopped at {tokens} tokens, its bound")
            return None, completion.usage
        gate, confidence = self._min_confidence, completion.confidence
        if gate is not None and confidence is not None and confidence < gate:
            self._count("unsure")
            problems.append(f"model unsure: confidence {confidence:.2f} < {gate:.2f}")
            return None, completion.usage
        text = completion.message.content or ""
        with stage("repair", timings):
            return self._read(text, request, turns, problems), completion.usage

    def _read(
        self, text: str, request: str, turns: tuple[str, ...], problems: list[str]
    ) -> tuple[SearchQuery, Source] | None:
        source: Source = "model"
        try:
            query = self._parse(text)
        except (ValidationError, ValueError):
            try:
                query, notes = repair(text, request)
            except UnrepairableOutput as exc:
                problems.append(f"unusable model output: {exc}")
                return None
            problems.extend(notes)
            source = "repaired"
        query, removed = ground(query, request, turns)
        if removed:
            problems.extend(removed)
            source = "repaired"
        if query.is_empty() and self._style not in PATCH_STYLES:  # an empty patch: none missing
            problems.append("the model's query is empty")
            return None
        return query, source

    def _parse(self, text: str) -> SearchQuery:
        if answers_in_line(self._style) and not text.lstrip().startswith("{"):
            line = text.strip().splitlines()[0] if text.strip() else ""
            return parse_gaps_line(line) if self._style == "gaps" else parse_query_line(line)
        return SearchQuery.model_validate_json(text)

    # ------------------------------------------------------------------------------ sync

    def __call__(self, request: str, *, context: Sequence[str] = ()) -> SearchQuery:
        """The ``Understander`` protocol: :meth:`understand_sync`'s query."""
        return self.understand_sync(request, context=context).query

    def understand_sync(self, request: str, *, context: Sequence[str] = ()) -> Understanding:
        """:meth:`understand` from synchronous code (any thread but the background loop's)."""
        portal = self._running_portal()
        # The loop's thread has its own context: carry the caller's span over so the stages
        # nest under it.
        return portal.call(self._understand_in, request, tuple(context), otel_context.get_current())

    async def _understand_in(
        self, request: str, context: tuple[str, ...], parent: otel_context.Context
    ) -> Understanding:
        token = otel_context.attach(parent)
        try:
            return await self.understand(request, context=context)
        finally:
            otel_context.detach(token)

    def _running_portal(self) -> BlockingPortal:
        with self._lock:
            if self._closed:
                raise RuntimeError("this ModelUnderstander is closed")
            if self._portal is None:
                manager = start_blocking_portal(name="cartagent-understanding")
                self._portal = manager.__enter__()
                # Also at interpreter exit: an unstopped portal thread blocks shutdown.
                self._stopper = weakref.finalize(self, _stop_portal, manager)
            return self._portal

    def close(self) -> None:
        """Stop the background event loop (if it started); later calls raise RuntimeError."""
        with self._lock:
            self._closed = True
            stopper, self._stopper, self._portal = self._stopper, None, None
        if stopper is not None:
            stopper()

    def __enter__(self) -> ModelUnderstander:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
