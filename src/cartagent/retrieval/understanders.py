"""The query-understanding models by name: ``get_understander(name, settings)``.

``rules`` is the rule parser alone. ``smollm2`` and ``gemma3-270m`` run the packaged GGUF models
in-process through llama.cpp (SmolLM2-135M-Instruct as a chat model, Gemma 3 270M, a base
model, as plain completion), with the few-shot prompt, JSON-schema-constrained decoding,
repair, grounding and the rule parser as fallback. ``openai`` sends the same prompt to any
OpenAI-compatible server named by ``settings.llm`` (its ``base_url``, ``model``, ``api_key``,
``schema_style``: ``json_schema`` for OpenAI and vLLM, ``json_object`` for llama.cpp's server;
``prompt_style``: ``full`` few-shot, or ``short``, ``line`` or ``guided`` for a tuned adapter
served there, e.g. by vLLM). ``tuned`` is the LoRA adapter ``cartagent tune`` made for this
step (the GGUF LoRA file ``settings.adapter.search_adapter``, else the registry's ``search``
model promoted to ``production``, else the shipped one, trained on SmolLM2-135M) on the base its
card names (a packaged model or a GGUF file), folded into the base's weights on first use
(cached in cartagent's data folder: a runtime LoRA decodes about four times slower) and asked
with the prompt its card says it was trained on (the short JSON prompt; the query line, a third
of the tokens, decoded without a grammar; the guided line, which also shows the rule parser's
line; or the patch and gaps answers behind the rule parser).
``qwen2.5-coder-0.5b`` and ``qwen2.5-coder-1.5b`` are the untuned base models of the benchmark:
Qwen2.5-Coder-Instruct, joined and verified from the part packages of the ``qwen`` extra into
cartagent's data folder, as chat models with the few-shot prompt.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..plugins import GROUPS, PluginGroup
from ..settings import Settings

if TYPE_CHECKING:
    from ..llm import Model
    from .search import Understander

__all__ = ["UNDERSTANDERS", "get_understander", "model_understander"]

TUNED_MAX_LEFTOVER_WORDS = 8
"""The tuned model is asked only when the rules leave at most this many words: on its dev split
245 of 252 asked requests leave 8 or fewer and the bound costs no F1 (0.9360 -> 0.9359), while
in shoppers' conversations the longer leftovers are stories it only garbles (it dropped "HEPA
filter" from one), at its slowest."""

REGISTERED_NAME = "search"
"""The registry name `cartagent tune register` gives the search adapter by default."""


def _rules(settings: Settings) -> Understander:
    from .rules import parse

    return parse


def _packaged(name: str, *, chat: bool) -> Callable[[Settings], Understander]:
    def make(settings: Settings) -> Understander:
        from ..llm.llama_cpp import LlamaCppModel
        from ..llm.packaged import packaged_model_path

        return model_understander(LlamaCppModel(packaged_model_path(name), chat=chat))

    return make


def _qwen(name: str) -> Callable[[Settings], Understander]:
    def make(settings: Settings) -> Understander:
        from ..llm.llama_cpp import LlamaCppModel
        from ..llm.qwen import qwen_model_path

        path = qwen_model_path(name, cache_dir=settings.data_dir / "models")
        return model_understander(LlamaCppModel(path, chat=True))

    return make


def _tuned_adapter(settings: Settings) -> tuple[Path, dict[str, Any]]:
    """The adapter ``tuned`` serves and its card (how it was trained, so how it must be asked):
    the ``search_adapter`` setting if set, else the registry's ``search`` model at its
    ``production`` alias if one was promoted, else the adapter shipped with cartagent."""
    import json

    from ..llm.adapters import shipped_adapter
    from ..llm.registry import Registry

    chosen = settings.adapter
    if chosen.search_adapter is not None:
        # An adapter of one's own is asked the way its card (beside it) says it was trained.
        adapter, card = chosen.search_adapter, chosen.search_adapter.with_suffix(".json")
        return adapter, json.loads(card.read_text()) if card.is_file() else {}
    registry = Registry(chosen.registry)
    if "production" in registry.aliases(REGISTERED_NAME):
        version = registry.resolve(REGISTERED_NAME, "production")
        return version.gguf, version.lineage
    shipped = shipped_adapter("search-smollm2")
    return shipped.path, shipped.card


def _tuned(settings: Settings) -> Understander:
    from ..llm.adapters import card_prompt_style, card_rules_first
    from ..llm.llama_cpp import LlamaCppModel
    from ..llm.packaged import gguf_base
    from .prompt import answer_tokens, check_style
    from .understanding import ModelUnderstander

    adapter, card = _tuned_adapter(settings)
    style = card_prompt_style(card)
    model = LlamaCppModel(
        gguf_base(str(card.get("base_model") or "smollm2")),
        chat=True,
        lora_path=adapter,
        merge_cache=settings.data_dir / "models",
        merged_type=settings.adapter.merged_type,
        max_tokens=answer_tokens(style),
    )
    rules_first = card_rules_first(card)
    return ModelUnderstander(
        model,
        style=check_style(style),
        rules_first=rules_first,
        max_leftover_words=TUNED_MAX_LEFTOVER_WORDS if rules_first else None,
    )


def _openai(settings: Settings) -> Understander:
    from ..llm.openai_compat import OpenAICompatibleModel
    from .prompt import PATCH_STYLES, answer_tokens, check_style
    from .understanding import ModelUnderstander

    endpoint = settings.llm
    if endpoint.base_url is None:
        raise ConfigurationError(
            "--model openai needs CARTAGENT_LLM_BASE_URL, e.g. http://127.0.0.1:8080/v1"
        )
    if endpoint.schema_style not in ("json_schema", "json_object"):
        raise ConfigurationError(
            f"CARTAGENT_LLM_SCHEMA_STYLE={endpoint.schema_style!r}: "
            "expected json_schema or json_object"
        )
    style = check_style(endpoint.prompt_style)
    model = OpenAICompatibleModel(
        endpoint.base_url,
        endpoint.model,
        api_key=endpoint.api_key,
        schema_style="json_object" if endpoint.schema_style == "json_object" else "json_schema",
        # A tuned adapter is bounded like the in-process one: no runaway generations.
        extra_body=None if style == "full" else {"max_tokens": answer_tokens(style)},
    )
    if style == "full":
        return model_understander(model)
    if style in PATCH_STYLES:  # a patch fills the parser's gaps: it is asked behind the parser
        return ModelUnderstander(
            model, style=style, rules_first=True, max_leftover_words=TUNED_MAX_LEFTOVER_WORDS
        )
    return ModelUnderstander(model, style=style)


def model_understander(model: Model) -> Understander:
    """``model`` behind the understanding pipeline (prompt, constraints, repair, fallback)."""
    from .understanding import ModelUnderstander

    return ModelUnderstander(model)


UNDERSTANDERS: PluginGroup[Callable[[Settings], Understander]] = PluginGroup(
    GROUPS["understanders"],
    {
        "rules": _rules,
        "smollm2": _packaged("smollm2", chat=True),
        "gemma3-270m": _packaged("gemma3-270m", chat=False),
        "qwen2.5-coder-0.5b": _qwen("qwen2.5-coder-0.5b"),
        "qwen2.5-coder-1.5b": _qwen("qwen2.5-coder-1.5b"),
        "openai": _openai,
        "tuned": _tuned,
    },
)
"""Query-understanding models by name; each entry builds one from the settings. A package adds
one with an entry point in the ``cartagent.understanders`` group (:mod:`cartagent.plugins`)."""


def get_understander(name: str, settings: Settings | None = None) -> Understander:
    """The query-understanding model ``name`` (one of :data:`UNDERSTANDERS`), built.

    ``settings`` says where the models, adapters and the OpenAI-compatible endpoint are
    (default: the built-in defaults, no environment). Raises :class:`ConfigurationError` for
    an unknown name or a setting the model lacks.
    """
    make = UNDERSTANDERS.get(name)
    if make is None:
        raise ConfigurationError(f"{name!r}: expected one of {', '.join(sorted(UNDERSTANDERS))}")
    return make(settings if settings is not None else Settings.defaults())
