"""LlamaCppModel: argument checks without a model, then the real SmolLM2 and Gemma 3 270M."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from cartagent.errors import ConfigurationError
from cartagent.llm import Message, Model, ToolCall, ToolSpec
from cartagent.llm.llama_cpp import LlamaCppModel, _schema_text, _transcript, default_threads
from cartagent.llm.packaged import packaged_model_path
from cartagent.retrieval.query import search_query_json_schema

SCHEMA = search_query_json_schema()
SEARCH_QUERY = {
    "type": "json_schema",
    "json_schema": {"name": "search_query", "schema": SCHEMA, "strict": True},
}
INSTRUCTION = Message("system", "Turn the shopper's request into a JSON search query.")
REQUEST = Message("user", "black leather boots under $80")

llm = pytest.mark.llm


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    """A file that is not a model: enough for everything that happens before loading."""
    path = tmp_path / "not-a-model.gguf"
    path.write_bytes(b"nope")
    return path


def test_the_grammar_keeps_the_schemas_property_order() -> None:
    # llama.cpp writes properties in schema order; sorting them would force an order that no
    # prompt or training example shows.
    text = _schema_text(SEARCH_QUERY)

    assert text is not None
    assert list(json.loads(text)["properties"]) == list(SCHEMA["properties"])
    assert list(SCHEMA["properties"])[:2] == ["text", "category"]


def test_a_missing_model_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no model file"):
        LlamaCppModel(tmp_path / "absent.gguf")


@pytest.mark.parametrize(
    "options",
    [{"n_ctx": 0}, {"max_tokens": 0}, {"temperature": -0.1}, {"n_threads": 0}],
)
def test_out_of_range_settings_are_configuration_errors(
    model_file: Path, options: dict[str, Any]
) -> None:
    with pytest.raises(ConfigurationError):
        LlamaCppModel(model_file, **options)


@pytest.mark.parametrize(("cores", "threads"), [(1, 1), (2, 2), (4, 4), (16, 4)])
def test_decoding_uses_the_usable_cores_up_to_four(
    monkeypatch: pytest.MonkeyPatch, cores: int, threads: int
) -> None:
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(range(cores)))
    assert default_threads() == threads


@llm
def test_a_loaded_model_decodes_on_the_default_threads() -> None:
    with LlamaCppModel(packaged_model_path("smollm2")) as model:
        model.load()
        assert model._llama is not None
        assert model._llama.context_params.n_threads == default_threads()


@pytest.mark.anyio
async def test_tools_are_refused_before_anything_is_loaded(model_file: Path) -> None:
    model = LlamaCppModel(model_file)
    spec = ToolSpec("get_order", "Show an order.", {"type": "object", "properties": {}})

    assert isinstance(model, Model)
    with pytest.raises(ConfigurationError, match="no tool calling"):
        await model.complete([REQUEST], tools=[spec])
    with pytest.raises(ConfigurationError, match="tool calls or tool results"):
        await model.complete(
            [REQUEST, Message("assistant", None, tool_calls=(ToolCall("c", "get_order", {}),))]
        )


@pytest.mark.anyio
async def test_an_unknown_response_format_is_a_configuration_error(model_file: Path) -> None:
    with pytest.raises(ConfigurationError, match="response_format type 'grammar'"):
        await LlamaCppModel(model_file).complete([REQUEST], response_format={"type": "grammar"})


@pytest.mark.anyio
async def test_a_schema_llama_cpp_cannot_follow_is_an_error_not_an_unconstrained_reply(
    model_file: Path,
) -> None:
    pytest.importorskip("llama_cpp")
    unsupported = {"type": "json_object", "schema": {"type": "wat"}}

    with pytest.raises(ConfigurationError, match="cannot turn this JSON Schema into a grammar"):
        await LlamaCppModel(model_file).complete([REQUEST], response_format=unsupported)


def test_a_base_model_reads_the_conversation_as_a_request_json_transcript() -> None:
    conversation = [
        INSTRUCTION,
        Message("user", "red mugs"),
        Message("assistant", '{"category": "mug"}'),
        REQUEST,
    ]

    assert _transcript(conversation, "JSON:") == (
        "Turn the shopper's request into a JSON search query.\n"
        "\n"
        "Request: red mugs\n"
        'JSON: {"category": "mug"}\n'
        "Request: black leather boots under $80\n"
        "JSON:"
    )


# The real models. Greedy decoding (temperature 0) keeps them deterministic.


@pytest.fixture(scope="module")
def smollm2() -> Iterator[LlamaCppModel]:
    pytest.importorskip("llama_cpp")
    with LlamaCppModel(packaged_model_path("smollm2"), n_ctx=512, max_tokens=96) as model:
        yield model


@llm
@pytest.mark.anyio
async def test_smollm2_answers_with_json_that_follows_the_search_query_schema(
    smollm2: LlamaCppModel,
) -> None:
    completion = await smollm2.complete([INSTRUCTION, REQUEST], response_format=SEARCH_QUERY)

    jsonschema.validate(json.loads(completion.message.content or ""), SCHEMA)
    assert completion.message.role == "assistant"
    assert completion.usage is not None
    assert completion.usage.input_tokens > 0
    assert 0 < completion.usage.output_tokens <= 96


@llm
@pytest.mark.anyio
async def test_smollm2_gives_the_same_answer_twice_at_temperature_zero(
    smollm2: LlamaCppModel,
) -> None:
    first = await smollm2.complete([INSTRUCTION, REQUEST], response_format=SEARCH_QUERY)
    second = await smollm2.complete([INSTRUCTION, REQUEST], response_format=SEARCH_QUERY)

    assert first == second


@llm
@pytest.mark.anyio
async def test_a_greedy_reply_carries_the_probability_of_its_least_likely_token(
    smollm2: LlamaCppModel,
) -> None:
    sure = await smollm2.complete([Message("user", "Say OK.")])
    guessing = await smollm2.complete(
        [Message("user", "Name a random eleven-letter word, then a random number.")]
    )

    assert sure.confidence is not None and guessing.confidence is not None
    assert 0 < guessing.confidence < sure.confidence <= 1
    assert guessing.confidence < 0.5
    assert not sure.truncated
    short = LlamaCppModel(packaged_model_path("smollm2"), n_ctx=512, max_tokens=2)
    with short:
        assert (await short.complete([Message("user", "Count from one to ten.")])).truncated
    warm = LlamaCppModel(packaged_model_path("smollm2"), n_ctx=512, max_tokens=8, temperature=0.7)
    with warm:
        assert (await warm.complete([Message("user", "Say OK.")])).confidence is None


@llm
@pytest.mark.anyio
async def test_a_json_object_request_without_a_schema_still_yields_a_json_object(
    smollm2: LlamaCppModel,
) -> None:
    completion = await smollm2.complete(
        [
            Message(
                "user", 'Give the colour of a ripe tomato as a JSON object with one key, "color".'
            )
        ],
        response_format={"type": "json_object"},
    )

    assert isinstance(json.loads(completion.message.content or ""), dict)


@llm
@pytest.mark.anyio
async def test_closing_frees_the_model_and_the_next_call_loads_it_again(
    smollm2: LlamaCppModel,
) -> None:
    before = await smollm2.complete([INSTRUCTION, REQUEST], response_format=SEARCH_QUERY)
    smollm2.close()
    after = await smollm2.complete([INSTRUCTION, REQUEST], response_format=SEARCH_QUERY)

    assert after == before


@pytest.fixture(scope="module")
def gemma() -> Iterator[LlamaCppModel]:
    pytest.importorskip("llama_cpp")
    path = packaged_model_path("gemma3-270m")
    with LlamaCppModel(path, chat=False, n_ctx=512, max_tokens=64) as model:
        yield model


@llm
@pytest.mark.slow
@pytest.mark.anyio
async def test_gemma_as_a_base_model_answers_schema_valid_json_through_the_grammar(
    gemma: LlamaCppModel,
) -> None:
    # A base model continues a pattern: one worked example, as the few-shot prompt gives it.
    shown = [Message("user", "red mug"), Message("assistant", '{"category": "mug"}')]
    completion = await gemma.complete([INSTRUCTION, *shown, REQUEST], response_format=SEARCH_QUERY)

    jsonschema.validate(json.loads(completion.message.content or ""), SCHEMA)
    assert completion.usage is not None
    assert completion.usage.output_tokens > 0


@llm
@pytest.mark.slow
@pytest.mark.anyio
async def test_gemma_without_a_schema_answers_one_line_of_text(gemma: LlamaCppModel) -> None:
    completion = await gemma.complete([Message("user", "What colour is a ripe tomato?")])

    assert completion.message.content
    assert "\n" not in completion.message.content
    assert completion.usage is not None
    assert completion.usage.output_tokens < 64
