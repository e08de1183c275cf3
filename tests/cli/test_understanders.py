"""``--model`` on the command line: settings it lacks are usage errors; the CLI prints what a
model understood."""

from __future__ import annotations

import pytest

from cartagent.retrieval.query import SearchQuery


def test_the_cli_reports_a_missing_endpoint_as_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from click.testing import CliRunner

    from cartagent.cli.search import understand

    monkeypatch.delenv("CARTAGENT_LLM_BASE_URL", raising=False)
    result = CliRunner().invoke(understand, ["--model", "openai", "red mug"])
    assert result.exit_code == 2
    assert "--model openai: " in result.output and "CARTAGENT_LLM_BASE_URL" in result.output


@pytest.mark.parametrize("name", ["smollm2", "gemma3-270m"])
def test_an_untuned_model_is_built_with_one_warning_line_on_stderr(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    from click.testing import CliRunner

    from cartagent.cli import understanders
    from cartagent.cli.search import understand
    from cartagent.retrieval.rules import parse

    monkeypatch.setattr(understanders, "get_understander", lambda *_: parse)
    result = CliRunner().invoke(understand, ["--model", name, "red mug"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [understanders.untuned_warning(name)]
    warning = result.stderr
    assert "not tuned" in warning and "slow on CPU" in warning and "--model rules" in warning


@pytest.mark.parametrize("name", ["rules", "tuned", "openai"])
def test_the_rules_and_tuned_models_warn_of_nothing(name: str) -> None:
    from cartagent.cli.understanders import untuned_warning

    assert untuned_warning(name) is None


@pytest.mark.llm
def test_the_cli_prints_what_smollm2_understood() -> None:
    import orjson
    from click.testing import CliRunner

    from cartagent.cli.search import understand

    result = CliRunner().invoke(understand, ["--model", "smollm2", "red mug under $20"])
    assert result.exit_code == 0, result.output
    assert SearchQuery.model_validate(orjson.loads(result.stdout.splitlines()[-1]))


@pytest.mark.slow
def test_understand_reuses_cached_answers_and_reports_the_hit_rate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import socket
    import threading

    import orjson
    import uvicorn
    from click.testing import CliRunner
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from cartagent.cli.search import understand

    asked: list[str] = []

    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        asked.append(body["messages"][-1]["content"])
        answer = {"category": "mug", "options": {"color": ["red"]}}
        message = {"role": "assistant", "content": orjson.dumps(answer).decode()}
        return JSONResponse({"choices": [{"message": message}]})

    app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("CARTAGENT_LLM_BASE_URL", f"http://127.0.0.1:{sock.getsockname()[1]}/v1")
        result = CliRunner().invoke(
            understand,
            ["--model", "openai", "--cache"],
            input="red mug\nred mug\nRed mug\n",
        )
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert [SearchQuery.model_validate_json(line).category for line in lines] == ["mug"] * 3
    assert len(asked) == 1  # the repeats came from the cache
    assert "cache 2/3 hits (67%)" in result.stderr
