"""Query-understanding models by name: the rule parser, packaged GGUFs in-process, any OpenAI
endpoint, the tuned adapter."""

from __future__ import annotations

from pathlib import Path

import pytest

from cartagent.errors import ConfigurationError
from cartagent.retrieval.query import SearchQuery
from cartagent.retrieval.search import Understander
from cartagent.retrieval.understanders import UNDERSTANDERS, get_understander
from cartagent.retrieval.understanding import ModelUnderstander
from cartagent.settings import Settings
from tests.llama_server import LlamaServerProcess


def built(name: str) -> Understander:
    """The model ``name`` built with the settings the (monkeypatched) environment gives."""
    return get_understander(name, Settings.from_env())


def test_an_unknown_name_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match=r"'gpt-9': expected one of .*rules"):
        get_understander("gpt-9")


def test_every_model_name_is_offered() -> None:
    assert set(UNDERSTANDERS) == {
        "rules",
        "smollm2",
        "gemma3-270m",
        "qwen2.5-coder-0.5b",
        "qwen2.5-coder-1.5b",
        "openai",
        "tuned",
    }


def test_rules_need_no_model() -> None:
    parse = built("rules")
    assert parse("red mug").options == {"color": ["red"]}


@pytest.mark.parametrize("name", ["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
def test_qwen_is_a_chat_model_joined_into_the_data_folder(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from cartagent.llm import qwen

    asked: list[tuple[str, Path]] = []

    def joined(model: str, *, cache_dir: Path) -> Path:
        asked.append((model, cache_dir))
        path = tmp_path / "model.gguf"
        path.write_bytes(b"GGUF")
        return path

    monkeypatch.setattr(qwen, "qwen_model_path", joined)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))

    understander = built(name)

    assert isinstance(understander, ModelUnderstander)
    assert understander.model.chat  # type: ignore[attr-defined]
    assert asked == [(name, tmp_path / "data" / "cartagent" / "models")]


def test_an_openai_endpoint_must_be_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CARTAGENT_LLM_BASE_URL", raising=False)
    with pytest.raises(ConfigurationError, match="CARTAGENT_LLM_BASE_URL"):
        built("openai")


def test_an_unknown_schema_style_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARTAGENT_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("CARTAGENT_LLM_SCHEMA_STYLE", "xml")
    with pytest.raises(ConfigurationError, match="json_schema or json_object"):
        built("openai")


@pytest.mark.llm
def test_smollm2_understands_in_process() -> None:
    understander = built("smollm2")
    assert isinstance(understander, ModelUnderstander)
    with understander:
        outcome = understander.understand_sync("black leather boots under $80")
    assert isinstance(outcome.query, SearchQuery)
    # The model's own reply was used (as is or repaired), not the rule parser's fallback.
    assert outcome.source in {"model", "repaired"}, outcome.problems
    assert outcome.usage is not None and outcome.usage.output_tokens > 0
    assert outcome.timings["model"] > 0


@pytest.mark.llm
@pytest.mark.slow
def test_an_openai_compatible_llama_server_understands(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp.server")
    from cartagent.llm.packaged import packaged_model_path

    with LlamaServerProcess(packaged_model_path("smollm2")) as server:
        monkeypatch.setenv("CARTAGENT_LLM_BASE_URL", f"{server.base_url}/v1")
        monkeypatch.setenv("CARTAGENT_LLM_SCHEMA_STYLE", "json_object")
        understander = built("openai")
        assert isinstance(understander, ModelUnderstander)
        with understander:
            outcome = understander.understand_sync("red running shoes under $60")
    # the server answered under the schema: the model's reply was used (as is or repaired)
    assert outcome.source in {"model", "repaired"}, outcome.problems
    assert outcome.usage is not None and outcome.usage.output_tokens > 0


@pytest.mark.llm
def test_tuned_is_smollm2_with_the_shipped_adapter_behind_the_rule_parser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cartagent.llm.adapters import shipped_adapter

    monkeypatch.delenv("CARTAGENT_SEARCH_ADAPTER", raising=False)
    assert shipped_adapter().rules_first
    tuned = built("tuned")
    assert isinstance(tuned, ModelUnderstander)
    with tuned:
        assert tuned.model.lora_path == shipped_adapter().path  # type: ignore[attr-defined]
        read = tuned.understand_sync("red running shoes under 40 dollars")
        asked = tuned.understand_sync("red runing shoes for my grandpa under 40 dollars")
    # Every word placed: the parser's reading, the model not asked.
    assert read.source == "parser" and read.usage is None
    assert read.query.price is not None and read.query.price.max == 40
    # Words left over: the model corrects the parser's line.
    assert asked.source in ("model", "repaired"), asked.problems
    assert asked.usage is not None and asked.usage.output_tokens > 0
    assert asked.query.price is not None and asked.query.price.max == 40


def test_an_adapter_card_names_the_prompt_it_was_trained_on() -> None:
    from cartagent.llm.adapters import card_prompt_style

    assert card_prompt_style({"config": {"model": {"output": "line"}}}) == "line"
    assert card_prompt_style({"config": {"model": {"output": "json"}}}) == "short"
    assert card_prompt_style({}) == "short"


def test_an_adapter_card_says_whether_it_is_served_behind_the_rule_parser() -> None:
    from cartagent.llm.adapters import card_rules_first

    assert card_rules_first({"config": {"model": {"output": "line", "rules_first": True}}})
    assert not card_rules_first({"config": {"model": {"output": "line"}}})
    assert not card_rules_first({"config": {"model": {"rules_first": "yes"}}})
    assert not card_rules_first({})


def test_tuned_serves_the_named_adapter_else_the_promoted_one_else_the_shipped_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import json

    from cartagent.llm.adapters import shipped_adapter
    from cartagent.llm.registry import Registry
    from cartagent.retrieval.understanders import _tuned_adapter

    monkeypatch.delenv("CARTAGENT_SEARCH_ADAPTER", raising=False)
    monkeypatch.setenv("CARTAGENT_REGISTRY", str(tmp_path / "registry"))
    shipped = shipped_adapter("search-smollm2")
    assert _tuned_adapter(Settings.from_env()) == (shipped.path, shipped.card)

    version = tmp_path / "registry" / "search" / "v1"
    version.mkdir(parents=True)
    lineage = {"config": {"model": {"output": "line", "guided": True}}}
    (version / "lineage.json").write_text(json.dumps(lineage))
    assert (
        _tuned_adapter(Settings.from_env())[0] == shipped.path
    )  # registered, not promoted: not served
    Registry(tmp_path / "registry").set_alias("search", "production", 1)
    assert _tuned_adapter(Settings.from_env()) == (version / "adapter.gguf", lineage)

    own = tmp_path / "mine.gguf"
    own.write_bytes(b"GGUF")
    monkeypatch.setenv("CARTAGENT_SEARCH_ADAPTER", str(own))
    # No card beside it: the JSON prompt, not behind the rule parser.
    assert _tuned_adapter(Settings.from_env()) == (own, {})


def test_tuned_serves_an_adapter_on_the_base_its_card_names(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import json

    import cartagent.llm.llama_cpp

    served: dict[str, object] = {}

    class Recorded:
        def __init__(self, model_path: Path, **options: object) -> None:
            served.update(options, model_path=model_path)

    monkeypatch.setattr(cartagent.llm.llama_cpp, "LlamaCppModel", Recorded)
    base = tmp_path / "qwen2.5-coder-0.5b.gguf"
    base.write_bytes(b"GGUF")
    own = tmp_path / "mine.gguf"
    own.write_bytes(b"GGUF")
    card = {"base_model": str(base), "config": {"model": {"output": "gaps", "rules_first": True}}}
    own.with_suffix(".json").write_text(json.dumps(card))
    monkeypatch.setenv("CARTAGENT_SEARCH_ADAPTER", str(own))

    tuned = built("tuned")
    assert isinstance(tuned, ModelUnderstander)
    assert served["model_path"] == base and served["lora_path"] == own
    assert tuned.fills_gaps_of is not None  # rules first, as its card says

    card["base_model"] = str(tmp_path / "gone.gguf")
    own.with_suffix(".json").write_text(json.dumps(card))
    with pytest.raises(ConfigurationError, match="no such GGUF file"):
        built("tuned")


def test_an_endpoint_serving_a_tuned_adapter_is_asked_in_its_prompt_style(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import json

    import httpx

    from cartagent.llm import openai_compat

    sent: list[dict[str, object]] = []

    def reply(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        message = {"role": "assistant", "content": "wallet | material=leather"}
        return httpx.Response(200, json={"choices": [{"message": message}]})

    transport, real_client = httpx.MockTransport(reply), httpx.AsyncClient
    monkeypatch.setattr(
        openai_compat.httpx, "AsyncClient", lambda: real_client(transport=transport)
    )
    monkeypatch.setenv("CARTAGENT_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("CARTAGENT_LLM_PROMPT_STYLE", "guided")
    understander = built("openai")
    assert isinstance(understander, ModelUnderstander)
    with understander:
        outcome = understander.understand_sync("lether walet")

    assert outcome.query == SearchQuery(category="wallet", attributes={"material": ["leather"]})
    [body] = sent
    assert body["max_tokens"] == 64 and "response_format" not in body
    messages = body["messages"]
    assert isinstance(messages, list) and "Parser: " in messages[-1]["content"]

    sent.clear()
    monkeypatch.setenv("CARTAGENT_LLM_PROMPT_STYLE", "patch")  # behind the parser, its gaps
    with built("openai") as patching:
        assert patching.understand_sync("lether walet").source == "parser"  # read whole
        outcome = patching.understand_sync("wallet in cordovan")
    [body] = sent
    assert body["max_tokens"] == 24 and "Parser: wallet" in body["messages"][-1]["content"]
    assert outcome.query.category == "wallet" and outcome.query.text == "cordovan"

    monkeypatch.setenv("CARTAGENT_LLM_PROMPT_STYLE", "poem")
    with pytest.raises(ConfigurationError, match="unknown prompt style 'poem'"):
        built("openai")
