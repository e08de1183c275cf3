"""The ``--model`` registry: the rule parser, packaged GGUFs in-process, any OpenAI endpoint."""

from __future__ import annotations

import pytest

from cartagent.child_process import LlamaServerProcess
from cartagent.cli.understanders import UNDERSTANDERS
from cartagent.errors import ConfigurationError
from cartagent.retrieval.query import SearchQuery
from cartagent.retrieval.understanding import ModelUnderstander


def test_every_model_name_is_offered() -> None:
    assert set(UNDERSTANDERS) == {"rules", "smollm2", "gemma3-270m", "openai"}


def test_rules_need_no_model() -> None:
    parse = UNDERSTANDERS["rules"]()
    assert parse("red mug").options == {"color": ["red"]}


def test_an_openai_endpoint_must_be_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CARTAGENT_LLM_BASE_URL", raising=False)
    with pytest.raises(ConfigurationError, match="CARTAGENT_LLM_BASE_URL"):
        UNDERSTANDERS["openai"]()


def test_an_unknown_schema_style_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARTAGENT_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("CARTAGENT_LLM_SCHEMA_STYLE", "xml")
    with pytest.raises(ConfigurationError, match="json_schema or json_object"):
        UNDERSTANDERS["openai"]()


@pytest.mark.llm
def test_smollm2_understands_in_process() -> None:
    understander = UNDERSTANDERS["smollm2"]()
    assert isinstance(understander, ModelUnderstander)
    with understander:
        outcome = understander.understand_sync("black leather boots under $80")
    assert isinstance(outcome.query, SearchQuery)
    assert outcome.source in {"model", "repaired", "rules"}
    assert outcome.timings["model"] > 0


@pytest.mark.llm
@pytest.mark.slow
def test_an_openai_compatible_llama_server_understands(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp.server")
    from cartagent.llm.packaged import packaged_model_path

    with LlamaServerProcess(packaged_model_path("smollm2")) as server:
        monkeypatch.setenv("CARTAGENT_LLM_BASE_URL", f"{server.base_url}/v1")
        monkeypatch.setenv("CARTAGENT_LLM_SCHEMA_STYLE", "json_object")
        understander = UNDERSTANDERS["openai"]()
        assert isinstance(understander, ModelUnderstander)
        with understander:
            outcome = understander.understand_sync("red running shoes under $60")
    # the server answered under the schema: the model's reply was used (as is or repaired)
    assert outcome.source in {"model", "repaired"}, outcome.problems
    assert outcome.usage is not None and outcome.usage.output_tokens > 0


def test_the_cli_reports_a_missing_endpoint_as_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from click.testing import CliRunner

    from cartagent.cli.search import understand

    monkeypatch.delenv("CARTAGENT_LLM_BASE_URL", raising=False)
    result = CliRunner().invoke(understand, ["--model", "openai", "red mug"])
    assert result.exit_code == 2
    assert "--model openai: " in result.output and "CARTAGENT_LLM_BASE_URL" in result.output


@pytest.mark.llm
def test_the_cli_prints_what_smollm2_understood() -> None:
    import orjson
    from click.testing import CliRunner

    from cartagent.cli.search import understand

    result = CliRunner().invoke(understand, ["--model", "smollm2", "red mug under $20"])
    assert result.exit_code == 0, result.output
    assert SearchQuery.model_validate(orjson.loads(result.output.splitlines()[-1]))
