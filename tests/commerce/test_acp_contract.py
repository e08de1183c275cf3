"""The merchant against ACP's own OpenAPI document (release 2026-04-17), fuzzed with schemathesis.

Every operation of ``openapi.agentic_checkout.json`` gets requests generated from the spec,
valid and invalid bodies and path ids, sent in-process the way an agent sends them: its bearer
token, ``API-Version`` and a fresh ``Idempotency-Key`` on each POST. Those three are never
fuzzed (they are taken out of the copy of the spec schemathesis gets), or every request would
stop at the door; the other headers are. Each response must:

- not be a server error (``not_a_server_error``; an exception raised out of the app counts), and
- conform to the schema the spec documents for its status (``response_schema_conformance``).
  Statuses the spec does not document are not checked: it lists no 404 for cancel and no 400
  or 401 for get, and its only 409 is the idempotency one (with a required ``Retry-After``).

Half of the path ids name real sessions (not ready, ready, completed, canceled, and whatever
the fuzz creates), and half of the bodies get real variants, ``usd`` and the PayPal payment
data, so happy paths run as well as refusals. Examples are bounded and derandomized (15 per
operation on SQLite, 5 on PostgreSQL; no shrinking, no deadline), and every distinct problem
of an operation is reported with a curl command.

The request examples of the OpenAPI file are replayed too: one valid under the schema the
server applies must succeed; one the spec's own schema rejects must be refused with a 400
``Error`` whose ``param`` is a JSONPath to a place the schema blames.

Where the release contradicts itself, the copy handed to schemathesis is repaired (and only
there; the server is never excused):

(a) ``CheckoutSessionWithOrder``, complete's 200, is ``allOf`` a ``CheckoutSessionBase`` with
    ``additionalProperties: false`` and an object that requires ``order``: no object passes.
    Likewise get's 200 is the closed ``CheckoutSession``, so a completed session (which
    carries its ``order``) cannot be read back. The JSON Schema bundle of the same release
    lists ``order`` among the base's properties; the OpenAPI copy gets it too.
(b) ``Item`` has no ``quantity`` although its description ("... and quantity"), the RFC and
    every example carry one; the server accepts it (``acp/schema.py``), the copy too.
(c) The OpenAPI ``components`` lag the bundle the server validates with (the bundle adds
    ``order_notes`` to the request bodies, ``Address.company``, ``Error.supported_versions``
    and more). The server sends none of the additions and accepts everything the OpenAPI
    allows, so nothing needs repairing for it.
(d) Every request example predates the schema: ``items`` for ``line_items``, ``payment_data``
    as ``{token, provider}``, a ``selected_fulfillment_options`` entry nested under
    ``shipping``. :data:`STALE_EXAMPLES` names them; the replay fails once one turns valid.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError
from schemathesis import Case, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.schemas import BaseSchema
from schemathesis.specs.openapi.checks import response_schema_conformance

from cartagent.protocols.acp.schema import definitions, json_path, spec_file
from tests.commerce.conftest import AcpClient, in_stock, out_of_stock
from tests.commerce.test_acp_checkout import PAYMENT, create, ready

# Property runs over every operation: out of the fast lane.
pytestmark = pytest.mark.slow

OPENAPI = "openapi.agentic_checkout.json"
SCHEMAS = "#/components/schemas/"
CHECKS = [not_a_server_error, response_schema_conformance]

# Examples per operation. PostgreSQL is there for backend-only failures, which show up fast.
MAX_EXAMPLES = {"sqlite": 15, "postgresql": 5}

# The agent's own headers: sent right on every call, never generated.
FIXED_HEADERS = {
    f"#/components/parameters/{name}" for name in ("Authorization", "APIVersion", "IdempotencyKey")
}

# Request examples that break the release's own schema (defect (d)), as operationId:name.
STALE_EXAMPLES = {
    "createCheckoutSession:minimal",
    "createCheckoutSession:with_address",
    "createCheckoutSession:with_first_touch_attribution",
    "updateCheckoutSession:set_fulfillment_option",
    "completeCheckoutSession:basic",
    "completeCheckoutSession:with_affiliate_attribution",
}

JSONPATH = re.compile(r"\$(\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*")


@cache
def _document() -> dict[str, Any]:
    """The OpenAPI file with defects (a) and (b) repaired and the fixed headers taken out."""
    document = copy.deepcopy(spec_file(OPENAPI))
    schemas = document["components"]["schemas"]
    schemas["CheckoutSessionBase"]["properties"]["order"] = {"$ref": SCHEMAS + "Order"}
    schemas["Item"]["properties"]["quantity"] = definitions()["Item"]["properties"]["quantity"]
    # Passing the headers to each call is not enough: schemathesis drops a header that a
    # negative mutation "removed" even when the caller gives it.
    document.pop("security")
    for item in document["paths"].values():
        for value in item.values():
            parameters = value if isinstance(value, list) else value.get("parameters", [])
            parameters[:] = [p for p in parameters if p.get("$ref") not in FIXED_HEADERS]
    return document


@cache
def _schema() -> BaseSchema:
    return schemathesis.openapi.from_dict(_document())


def _operations() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in spec_file(OPENAPI)["paths"].items():
        for method, operation in item.items():
            if method != "parameters":
                yield method.upper(), path, operation


OPERATIONS = [(method, path) for method, path, _ in _operations()]
EXAMPLES = [
    (method, path, f"{operation['operationId']}:{name}", example["value"])
    for method, path, operation in _operations()
    for name, example in operation.get("requestBody", {})
    .get("content", {})
    .get("application/json", {})
    .get("examples", {})
    .items()
]


def _sessions(acp: AcpClient) -> list[str]:
    """Sessions in each state a path id can name: not ready, ready, completed, canceled."""
    waiting = create(acp, [{"id": in_stock()[0]}])
    open_ = ready(acp)
    paid = ready(acp)
    done = acp.post(f"/checkout_sessions/{paid['id']}/complete", {"payment_data": PAYMENT})
    assert done.status_code == 200, done.text
    dropped = ready(acp)
    assert acp.post(f"/checkout_sessions/{dropped['id']}/cancel", {}).status_code == 200
    return [waiting["id"], open_["id"], paid["id"], dropped["id"]]


def _make_real(body: dict[str, Any], data: st.DataObject) -> None:
    """Point a generated body at real variants, in the store's currency, paid with PayPal."""
    items = [*in_stock(3), out_of_stock()]
    lines = body.get("line_items")
    for line in lines if isinstance(lines, list) else []:
        if isinstance(line, dict) and "id" in line:
            line["id"] = data.draw(st.sampled_from(items), label="item")
    if "currency" in body:
        body["currency"] = "usd"
    if "payment_data" in body:
        body["payment_data"] = copy.deepcopy(PAYMENT)


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_operation_keeps_the_acp_contract(
    method: str, path: str, acp: AcpClient, merchant_http: TestClient, database_url: str
) -> None:
    app: FastAPI = merchant_http.app  # type: ignore[assignment]
    sessions = _sessions(acp)
    target = _schema()[path][method]
    strategy = st.one_of(
        target.as_strategy(generation_mode=GenerationMode.POSITIVE),
        target.as_strategy(generation_mode=GenerationMode.NEGATIVE),
    )
    problems: dict[str, str] = {}

    def report(key: str, case: Case[Any], headers: dict[str, str]) -> None:
        problems.setdefault(key, f"{key}\n    {case.as_curl_command(headers=headers)[:600]}")

    @settings(
        max_examples=MAX_EXAMPLES[database_url.partition(":")[0]],
        derandomize=True,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy, data=st.data())
    def check(case: Case[Any], data: st.DataObject) -> None:
        real_session = data.draw(st.booleans(), label="real session")
        if case.path_parameters and real_session:
            case.path_parameters["checkout_session_id"] = data.draw(
                st.sampled_from(sessions), label="session"
            )
        if isinstance(case.body, dict) and data.draw(st.booleans(), label="real body"):
            _make_real(case.body, data)
        headers = acp.headers(post=method == "POST")
        try:
            response = case.call(app=app, headers=headers)
        except Exception as error:  # raised out of the app: the agent gets a bare 500
            first_line = f"{type(error).__name__}: {error}".splitlines()[0]
            report(f"Unhandled exception (500): {first_line}", case, headers)
            return
        if path == "/checkout_sessions" and response.status_code == 201:
            sessions.append(response.json()["id"])
        try:
            case.validate_response(response, checks=CHECKS)
        except FailureGroup as group:
            # Keep going: a report of every distinct problem beats the first one alone.
            for failure in group.exceptions:
                lines = str(getattr(failure, "message", failure)).strip().splitlines()
                message = lines[0] if lines else ""  # a server error's message is empty
                report(f"{getattr(failure, 'title', 'Failure')}: {message[:300]}", case, headers)

    check()
    assert not problems, "\n".join(problems.values())


def _blamed(name: str, body: Any) -> set[str]:
    """JSONPaths of every place ``body`` breaks ``$defs[name]`` (a missing property's own)."""
    schema = {"$defs": definitions(), "$ref": f"#/$defs/{name}"}
    paths: set[str] = set()

    def visit(errors: Iterable[ValidationError]) -> None:
        for error in errors:
            path = tuple(error.absolute_path)
            paths.add(json_path(path))
            if error.validator == "required" and isinstance(error.instance, dict):
                paths.update(
                    json_path((*path, key))
                    for key in error.validator_value
                    if key not in error.instance
                )
            visit(error.context or ())

    visit(Draft202012Validator(schema, format_checker=FormatChecker()).iter_errors(body))
    return paths


def _request_schema(method: str, path: str) -> str:
    operation = spec_file(OPENAPI)["paths"][path][method.lower()]
    ref: str = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    return ref.removeprefix(SCHEMAS)


def _with_item(value: Any, item: str) -> Any:
    """``value`` with its placeholder item ids (``item_123``) naming a real variant."""
    if isinstance(value, dict):
        return {key: _with_item(inner, item) for key, inner in value.items()}
    if isinstance(value, list):
        return [_with_item(inner, item) for inner in value]
    if isinstance(value, str) and re.fullmatch(r"item_\d+", value):
        return item
    return value


@pytest.mark.parametrize(
    ("method", "path", "name", "example"), EXAMPLES, ids=[name for _, _, name, _ in EXAMPLES]
)
def test_the_specs_request_examples_get_the_answer_its_schema_calls_for(
    method: str,
    path: str,
    name: str,
    example: dict[str, Any],
    acp: AcpClient,
    merchant_http: TestClient,
) -> None:
    body = _with_item(example, in_stock()[0])
    case = _schema()[path][method].Case(
        path_parameters={"checkout_session_id": ready(acp)["id"]} if "{" in path else {},
        body=body,
        media_type="application/json",
    )
    response = case.call(app=merchant_http.app, headers=acp.headers(post=method == "POST"))
    case.validate_response(response, checks=CHECKS)
    blamed = _blamed(_request_schema(method, path), body)
    if name not in STALE_EXAMPLES:
        assert not blamed, f"the spec's example {name} breaks its schema at {sorted(blamed)}"
        assert 200 <= response.status_code < 300, response.text
        return
    assert blamed, f"the spec's example {name} is valid now: take it out of STALE_EXAMPLES"
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["type"] == "invalid_request"
    assert JSONPATH.fullmatch(error["param"]), error
    assert error["param"] in blamed, (error, sorted(blamed))


def test_the_specs_response_examples_fit_their_schemas() -> None:
    document = _document()
    responses = [
        *document["components"]["responses"].values(),
        *(
            response
            for item in document["paths"].values()
            for operation in item.values()
            if isinstance(operation, dict)
            for response in operation["responses"].values()
        ),
    ]
    found = [
        (content["schema"], name, example["value"])
        for response in responses
        for content in response.get("content", {}).values()
        for name, example in content.get("examples", {}).items()
    ]
    assert found
    for schema, name, value in found:
        validator = Draft202012Validator(
            {**schema, "components": document["components"]}, format_checker=FormatChecker()
        )
        assert not [error.message for error in validator.iter_errors(value)], name
