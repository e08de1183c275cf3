"""The query-understanding models the command line offers, by ``--model`` name.

``rules`` is the rule parser alone. ``smollm2`` and ``gemma3-270m`` run the packaged GGUF models
in-process through llama.cpp (SmolLM2-135M-Instruct as a chat model, Gemma 3 270M, a base
model, as plain completion), with the few-shot prompt, JSON-schema-constrained decoding,
repair, grounding and the rule parser as fallback. ``openai`` sends the same prompt to any
OpenAI-compatible server named by ``CARTAGENT_LLM_BASE_URL`` (and ``CARTAGENT_LLM_MODEL``,
``CARTAGENT_LLM_API_KEY``, ``CARTAGENT_LLM_SCHEMA_STYLE``: ``json_schema`` for OpenAI and vLLM,
``json_object`` for llama.cpp's server; ``CARTAGENT_LLM_PROMPT_STYLE``: ``full`` few-shot, or
``short``, ``line`` or ``guided`` for a tuned adapter served there, e.g. by vLLM).
``tuned`` is SmolLM2-135M with the LoRA adapter
``cartagent tune`` made for this step (the GGUF LoRA file named by ``CARTAGENT_SEARCH_ADAPTER``,
else the registry's ``search`` model promoted to ``production``, else the shipped one), folded
into the base's weights on first use (cached in cartagent's data folder: a runtime LoRA decodes
about four times slower) and asked with the prompt its card says it was trained on (the short
JSON prompt; the query line, a third of the tokens, decoded without a grammar; or the guided
line, which also shows the rule parser's line).
``qwen2.5-coder-0.5b`` and ``qwen2.5-coder-1.5b`` are the untuned base models of the benchmark:
Qwen2.5-Coder-Instruct, joined and verified from the part packages of the ``qwen`` extra into
cartagent's data folder, as chat models with the few-shot prompt.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import ConfigurationError

if TYPE_CHECKING:
    from ..llm import Model
    from ..retrieval.search import Understander

__all__ = ["UNDERSTANDERS", "model_option", "model_understander", "understander_for"]

REGISTERED_NAME = "search"
"""The registry name `cartagent tune register` gives the search adapter by default."""


def _rules() -> Understander:
    from ..retrieval.rules import parse

    return parse


def _packaged(name: str, *, chat: bool) -> Callable[[], Understander]:
    def make() -> Understander:
        from ..llm.llama_cpp import LlamaCppModel
        from ..llm.packaged import packaged_model_path

        return model_understander(LlamaCppModel(packaged_model_path(name), chat=chat))

    return make


def _qwen(name: str) -> Callable[[], Understander]:
    def make() -> Understander:
        from ..llm.llama_cpp import LlamaCppModel
        from ..llm.qwen import qwen_model_path
        from ..settings import _data_dir

        path = qwen_model_path(name, cache_dir=_data_dir() / "models")
        return model_understander(LlamaCppModel(path, chat=True))

    return make


def _tuned_adapter() -> tuple[Path, dict[str, Any]]:
    """The adapter ``--model tuned`` serves and its card (how it was trained, so how it must be
    asked): ``CARTAGENT_SEARCH_ADAPTER`` if set, else the registry's ``search`` model at its
    ``production`` alias if one was promoted, else the adapter shipped with cartagent."""
    import json

    from ..llm.adapters import shipped_adapter
    from ..settings import AdapterSettings
    from ..tuning.registry import Registry

    settings = AdapterSettings.from_env()
    if settings.search_adapter is not None:
        # An adapter of one's own is asked the way its card (beside it) says it was trained.
        adapter, card = settings.search_adapter, settings.search_adapter.with_suffix(".json")
        return adapter, json.loads(card.read_text()) if card.is_file() else {}
    registry = Registry(settings.registry)
    if "production" in registry.aliases(REGISTERED_NAME):
        version = registry.resolve(REGISTERED_NAME, "production")
        return version.gguf, version.lineage
    shipped = shipped_adapter("search-smollm2")
    return shipped.path, shipped.card


def _tuned() -> Understander:
    from ..llm.adapters import card_prompt_style, card_rules_first
    from ..llm.llama_cpp import LlamaCppModel
    from ..llm.packaged import packaged_model_path
    from ..retrieval.prompt import answer_tokens, check_style
    from ..retrieval.understanding import ModelUnderstander
    from ..settings import _data_dir

    adapter, card = _tuned_adapter()
    style = card_prompt_style(card)
    model = LlamaCppModel(
        packaged_model_path("smollm2"),
        chat=True,
        lora_path=adapter,
        merge_cache=_data_dir() / "models",
        max_tokens=answer_tokens(style),
    )
    return ModelUnderstander(model, style=check_style(style), rules_first=card_rules_first(card))


def _openai() -> Understander:
    from ..llm.openai_compat import OpenAICompatibleModel
    from ..retrieval.prompt import answer_tokens, check_style
    from ..retrieval.understanding import ModelUnderstander
    from ..settings import LLMEndpointSettings

    settings = LLMEndpointSettings.from_env()
    if settings.base_url is None:
        raise ConfigurationError(
            "--model openai needs CARTAGENT_LLM_BASE_URL, e.g. http://127.0.0.1:8080/v1"
        )
    if settings.schema_style not in ("json_schema", "json_object"):
        raise ConfigurationError(
            f"CARTAGENT_LLM_SCHEMA_STYLE={settings.schema_style!r}: "
            "expected json_schema or json_object"
        )
    style = check_style(settings.prompt_style)
    model = OpenAICompatibleModel(
        settings.base_url,
        settings.model,
        api_key=settings.api_key,
        schema_style="json_object" if settings.schema_style == "json_object" else "json_schema",
        # A tuned adapter is bounded like the in-process one: no runaway generations.
        extra_body=None if style == "full" else {"max_tokens": answer_tokens(style)},
    )
    if style == "full":
        return model_understander(model)
    return ModelUnderstander(model, style=style)


def model_understander(model: Model) -> Understander:
    """``model`` behind the understanding pipeline (prompt, constraints, repair, fallback)."""
    from ..retrieval.understanding import ModelUnderstander

    return ModelUnderstander(model)


UNDERSTANDERS: dict[str, Callable[[], Understander]] = {
    "rules": _rules,
    "smollm2": _packaged("smollm2", chat=True),
    "gemma3-270m": _packaged("gemma3-270m", chat=False),
    "qwen2.5-coder-0.5b": _qwen("qwen2.5-coder-0.5b"),
    "qwen2.5-coder-1.5b": _qwen("qwen2.5-coder-1.5b"),
    "openai": _openai,
    "tuned": _tuned,
}
"""Query-understanding models by ``--model`` name; each entry builds one when called."""


def understander_for(name: str) -> Understander:
    """The ``--model`` named ``name``, built; a setting it lacks is a usage error."""
    try:
        return UNDERSTANDERS[name]()
    except ConfigurationError as error:
        raise click.UsageError(f"--model {name}: {error}") from None


model_option = click.option(
    "--model",
    type=click.Choice(sorted(UNDERSTANDERS)),
    default="rules",
    show_default=True,
    help="How requests are understood: rules, or a small language model (smollm2, "
    "gemma3-270m in-process; qwen2.5-coder-0.5b, qwen2.5-coder-1.5b in-process from the qwen "
    "extra; tuned: SmolLM2 with cartagent's LoRA adapter; openai: the server in "
    "CARTAGENT_LLM_BASE_URL).",
)
"""The ``--model`` option every command that understands requests takes."""
