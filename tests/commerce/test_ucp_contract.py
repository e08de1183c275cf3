"""The business against UCP's own REST OpenAPI (release v2026-04-08), fuzzed with schemathesis.

Every operation of ``services/shopping/rest.openapi.json`` that the business serves (checkout
sessions, catalog search, lookup and product, orders; not the cart operations, a capability it
does not offer, nor the order webhook, which it sends) gets requests generated from the spec,
valid and invalid bodies, path ids and headers, sent in-process under the path of the OpenAPI's
default server (``/ucp``, the ``api_prefix``) the way a platform sends them: its bearer token,
its ``UCP-Agent`` profile (which negotiates every capability and the fulfillment extension), a
``Request-Id`` and a fresh ``Idempotency-Key`` where the operation takes one. Those four are
never fuzzed (they are taken out of the copy of the spec schemathesis gets, as ``security``
would be, but this release declares none), or every request would stop at the door; the other
headers are. Each response must:

- not be a server error (``not_a_server_error``; an exception raised out of the app counts), and
- conform to the schema the spec documents for its status (``response_schema_conformance``).
  The release documents only the success status of each operation (200, or 201 for create);
  its transport errors (400, 401, 409, ...) have no schema there and are not checked.

Half of the path ids are real: checkout sessions in each state the API reaches with the
fulfillment extension (incomplete, out of stock, ready for complete, completed, canceled, and
whatever the fuzz creates), and for ``/orders/{id}`` the order of a completed checkout. Half of
the bodies get real values: store variants as line items, a PayPal instrument as payment, an
address the store ships to, catalog ids to look up; so happy paths run as well as refusals.
Examples are bounded and derandomized (10 per operation on SQLite, 4 on PostgreSQL; no
shrinking, no deadline), and every distinct problem of an operation is reported with a curl
command.

How the references resolve: the OpenAPI's schemas are ``$ref`` s into the shipped ``schemas/``
tree (``../../schemas/shopping/checkout.json``), whose schemas refer to each other relative to
their ``$id`` (``https://ucp.dev/schemas/...``). The copy schemathesis gets is one
self-contained bundle: each shipped schema is a component named after its path
(``response.shopping.types.line_item``) without its ``$id`` and ``$schema``, and every ``$ref``
(the OpenAPI's resolved against the file's place in the release,
``https://ucp.dev/services/shopping/``; a schema's against its ``$id``) is rewritten to a local
pointer into those components (``#/components/schemas/response.ucp/$defs/error``). Nothing is
fetched and schemathesis reads no file; a reference outside the release fails the build, and a
test checks that every pointer of the bundle lands. (A base URI or retriever would have left
the ``$id`` s to schemathesis' resolver, with a network fetch for any slip, and no way to
derive the request shapes below.)

UCP's schema references are logical pointers ("payload shape determined by negotiated
capabilities"). The copy reads them for this negotiation, and only that:

(a) Requests: the three checkout bodies point at ``checkout.json``, the response shape. The
    release derives request shapes from it through its ``ucp_request`` annotations; each body
    here is that derivation for its operation (``create``, ``update``, ``complete``, read the
    way the release's generated models do, as ``ucp/schema.py`` does, but written again here
    rather than imported) of ``fulfillment.json``'s checkout, which the negotiated extension
    composes. So positive bodies are the release's idea of a valid request, not the server's.
(b) Responses: a checkout is ``checkout.json`` in the OpenAPI, the capability-independent
    base. The base leaves unknown properties open, so the extension's ``fulfillment`` breaks
    nothing, but it would go unchecked; the copy checks checkouts against
    ``fulfillment.json``'s ``allOf`` of the base and the extension instead: stricter, never
    looser. Nothing else of the release is changed.

The OpenAPI file has no request examples (nor response examples) to replay, so the replay test
also replays examples of our own, written from the release's request schemas
(``data/ucp_request_examples.json``), one or more for every served operation with a body.
Like the spec's, each must conform to its request schema and get a success, and the answer
must conform to the response schema.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

import httpx
import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError
from schemathesis import Case, GenerationMode
from schemathesis.core.failures import FailureGroup
from schemathesis.core.result import Ok
from schemathesis.schemas import BaseSchema

from cartagent.commerce import Agents, Merchant
from cartagent.commerce.ucp import OPERATIONS as SERVED
from cartagent.protocols.ucp.schema import BASE, json_path, spec_file
from tests.commerce.conftest import in_stock, out_of_stock, tau_products
from tests.commerce.test_acp_contract import CHECKS, JSONPATH
from tests.commerce.test_ucp_checkout import (
    BASE_URL,
    PAYMENT,
    SHIPPING,
    UcpClient,
    create,
    lines,
    ready,
    serve,
)

# Property runs over every operation: out of the fast lane.
pytestmark = pytest.mark.slow

OPENAPI = "services/shopping/rest.openapi.json"
OPENAPI_URI = "https://ucp.dev/" + OPENAPI  # where the release's relative references start
PREFIX = "/ucp"  # the path of the OpenAPI's default server, https://merchant.example.com/ucp
ENDPOINT = BASE_URL + PREFIX
SCHEMAS = "#/components/schemas/"

# Examples per operation. PostgreSQL is there for backend-only failures, which show up fast.
MAX_EXAMPLES = {"sqlite": 10, "postgresql": 4}

# The platform's own headers: sent right on every call, never generated.
FIXED_HEADERS = {
    f"#/components/parameters/{name}"
    for name in ("authorization", "ucp_agent", "request_id", "idempotency_key")
}

# The request shape (the release's ``ucp_request`` key) of each checkout body, (a).
SHAPES = {"create_checkout": "create", "update_checkout": "update", "complete_checkout": "complete"}
# A checkout with the fulfillment extension, (a) and (b).
CHECKOUT = BASE + "shopping/fulfillment.json#/$defs/dev.ucp.shopping.checkout"

# Request examples that break the release's own schema, as operationId:name (none so far).
STALE_EXAMPLES: set[str] = set()


# ---------------------------------------------------------------- the bundle


def _files(folder: Traversable, at: str) -> Iterator[str]:
    for entry in folder.iterdir():
        if entry.is_dir():
            yield from _files(entry, f"{at}/{entry.name}")
        elif entry.name.endswith(".json"):
            yield f"{at}/{entry.name}"


@cache
def _release() -> dict[str, dict[str, Any]]:
    """Every schema of the shipped ``schemas/`` tree, by its ``$id``."""
    folder = resources.files("cartagent.protocols").joinpath("specs/ucp/schemas")
    documents = [spec_file(path) for path in _files(folder, "schemas")]
    return {document["$id"]: document for document in documents}


def _requested(node: Any, shape: str) -> Any:
    """``node`` as a request body of ``shape``: per property, its ``ucp_request`` directive
    (one, or one per shape) ``omit`` drops it, ``optional`` takes it out of ``required``,
    ``required`` puts it in; no directive keeps the response's rule."""
    if isinstance(node, list):
        return [_requested(item, shape) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: _requested(v, shape) for k, v in node.items() if k not in ("ucp_request", "properties")
    }
    if isinstance(node.get("properties"), dict):
        required = list(node.get("required", []))
        kept = {}
        for name, schema in node["properties"].items():
            rule = schema.get("ucp_request") if isinstance(schema, dict) else None
            rule = rule.get(shape) if isinstance(rule, dict) else rule
            if rule in ("omit", "optional"):
                required = [other for other in required if other != name]
            elif rule == "required" and name not in required:
                required.append(name)
            if rule != "omit":
                kept[name] = _requested(schema, shape)
        out["properties"] = kept
        if "required" in node or required:
            out["required"] = required
    return out


def _pointer(uri: str, form: str) -> str:
    """The bundle's pointer for an absolute reference into the release, in ``form`` (the
    response schemas, or a request shape's)."""
    document, fragment = urldefrag(uri)
    assert document in _release(), f"{uri} is outside the release"
    name = document.removeprefix(BASE).removesuffix(".json").replace("/", ".")
    return f"{SCHEMAS}{form}.{name}{fragment}"


def _bundled(node: Any, base: str, form: str) -> Any:
    """``node`` with its references (relative to ``base``) pointing into the bundle."""
    if isinstance(node, list):
        return [_bundled(item, base, form) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: (
            _pointer(urljoin(base, value), form)
            if key == "$ref" and isinstance(value, str)
            else _bundled(value, base, form)
        )
        for key, value in node.items()
        if key not in ("$id", "$schema")
    }


def _served(operation: Any) -> bool:
    return isinstance(operation, dict) and operation.get("operationId") in SERVED


@cache
def _document() -> dict[str, Any]:
    """The OpenAPI file as one bundle, read for this negotiation ((a), (b)), without the
    operations the business does not serve and the fixed headers."""
    document = copy.deepcopy(spec_file(OPENAPI))
    document.pop("security", None)  # none in this release; the bearer token is fixed anyway
    document.pop("webhooks", None)
    document["paths"] = {
        path: item
        for path, item in document["paths"].items()
        if any(_served(operation) for operation in item.values())
    }
    schemas = document["components"]["schemas"] = _bundled(
        document["components"]["schemas"], OPENAPI_URI, "response"
    )
    for uri, schema in _release().items():
        schemas[_pointer(uri, "response").removeprefix(SCHEMAS)] = _bundled(schema, uri, "response")
        for shape in SHAPES.values():
            name = _pointer(uri, shape).removeprefix(SCHEMAS)
            schemas[name] = _bundled(_requested(schema, shape), uri, shape)
    schemas["checkout_response"]["oneOf"][0] = {"$ref": _pointer(CHECKOUT, "response")}  # (b)
    for item in document["paths"].values():
        for value in item.values():
            if isinstance(value, list):  # the path's own parameters: the ids, fuzzed
                continue
            value["parameters"] = [
                p for p in value.get("parameters", []) if p.get("$ref") not in FIXED_HEADERS
            ]
            request_shape = SHAPES.get(value["operationId"])
            if request_shape is not None:  # (a)
                content = value["requestBody"]["content"]["application/json"]
                content["schema"] = {"$ref": _pointer(CHECKOUT, request_shape)}
    return document


@cache
def _schema() -> BaseSchema:
    return schemathesis.openapi.from_dict(_document())


def _operations() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in spec_file(OPENAPI)["paths"].items():
        for method, operation in item.items():
            if _served(operation):
                yield method.upper(), path, operation


def _examples(operation: dict[str, Any]) -> dict[str, Any]:
    """An operation's JSON request examples by name (a lone ``example`` is ``example``)."""
    content = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
    found = {name: example["value"] for name, example in content.get("examples", {}).items()}
    if "example" in content:
        found["example"] = content["example"]
    return found


@cache
def _written() -> dict[str, dict[str, Any]]:
    path = Path(__file__).parent / "data" / "ucp_request_examples.json"
    examples: dict[str, dict[str, Any]] = json.loads(path.read_text("utf-8"))["examples"]
    return examples


def _our_examples(operation: dict[str, Any]) -> dict[str, Any]:
    """Our request examples of an operation by name, written from the release's schemas."""
    return _written().get(operation["operationId"], {})


OPERATIONS = [(method, path) for method, path, _ in _operations()]
EXAMPLES = [
    (method, path, f"{operation['operationId']}:{name}", example)
    for method, path, operation in _operations()
    for name, example in {**_examples(operation), **_our_examples(operation)}.items()
]


def _references(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from _references(value)
    elif isinstance(node, list):
        for value in node:
            yield from _references(value)


def test_the_bundle_resolves_every_reference_and_has_every_served_operation() -> None:
    document = _document()
    references = set(_references(document))
    assert len(references) > 100
    for reference in references:
        assert reference.startswith("#/"), reference
        target: Any = document
        for part in reference[2:].split("/"):
            assert isinstance(target, dict) and part in target, reference
            target = target[part]
    results = list(_schema().get_all_operations())
    operations = [result.ok() for result in results if isinstance(result, Ok)]
    assert len(operations) == len(results), [r for r in results if not isinstance(r, Ok)]
    # update_order is the testing surface's (ucp/testing.py), no operation of the release.
    assert {op.definition.raw["operationId"] for op in operations} == set(SERVED) - {"update_order"}


# ---------------------------------------------------------------- the fuzz


class _Platform(UcpClient):
    """A platform calling the business at :data:`ENDPOINT` (paths relative to it)."""

    def post(
        self,
        path: str,
        body: Any,
        headers: Mapping[str, str] | None = None,
        *,
        key: bool = True,
    ) -> httpx.Response:
        return super().post(PREFIX + path, body, headers, key=key)

    def put(self, path: str, body: Any, headers: Mapping[str, str] | None = None) -> httpx.Response:
        return super().put(PREFIX + path, body, headers)

    def get(self, path: str, headers: Mapping[str, str] | None = None) -> httpx.Response:
        return super().get(PREFIX + path, headers)


@pytest.fixture
def business(merchant: Merchant, agents: Agents) -> Iterator[TestClient]:
    with serve(merchant, agents, api_prefix=PREFIX) as client:
        yield client


@pytest.fixture
def platform(business: TestClient, agent_token: str) -> UcpClient:
    return _Platform(business, agent_token)


def _sessions(platform: UcpClient) -> tuple[list[str], str]:
    """Sessions in each state a path id can name (incomplete, out of stock, ready, completed,
    canceled) and the order of the completed one."""
    waiting = create(platform, lines(in_stock()[0]))
    blocked = create(platform, lines(out_of_stock()), fulfillment=SHIPPING)
    open_ = ready(platform)
    paid = ready(platform)
    done = platform.post(f"/checkout-sessions/{paid['id']}/complete", PAYMENT)
    assert done.status_code == 200 and done.json()["status"] == "completed", done.text
    dropped = ready(platform)
    canceled = platform.post(f"/checkout-sessions/{dropped['id']}/cancel", None)
    assert canceled.json()["status"] == "canceled", canceled.text
    ids = [waiting["id"], blocked["id"], open_["id"], paid["id"], dropped["id"]]
    return ids, done.json()["order"]["id"]


def _catalog_ids() -> list[str]:
    products = tau_products()[:3]
    return [*(p.id for p in products), *(p.variants[0].id for p in products), "nope"]


def _make_real(operation: str, body: dict[str, Any], data: st.DataObject) -> None:
    """Point a generated body at real things: store variants in a few units (the release sets
    no bound; the store sells at most 999), the PayPal instrument, an address the store ships
    to, catalog ids."""
    variants = [*in_stock(3), out_of_stock()]
    items = body.get("line_items")
    if items == []:
        items.append({"item": {}, "quantity": 1})
    for line in items if isinstance(items, list) else []:
        if isinstance(line, dict) and isinstance(line.get("item"), dict):
            line["item"]["id"] = data.draw(st.sampled_from(variants), label="item")
            line["quantity"] = data.draw(st.integers(1, 3), label="quantity")
    if "payment" in body:
        body["payment"] = copy.deepcopy(PAYMENT["payment"])
    if "fulfillment" in body:  # line_item_ids: required on update, optional on create
        body["fulfillment"] = {"methods": [{**SHIPPING["methods"][0], "line_item_ids": []}]}
    if operation == "lookup_catalog" and "ids" in body:
        ids = st.lists(st.sampled_from(_catalog_ids()), min_size=1, max_size=4)
        body["ids"] = data.draw(ids, label="ids")
    if operation == "get_product" and "id" in body:
        body["id"] = data.draw(st.sampled_from(_catalog_ids()), label="id")


def _summary(failure: Exception, response: Any) -> str:
    """A failure in a line: its title and the first line of its message (a server error has
    none: its status and body instead)."""
    lines = str(getattr(failure, "message", "") or "").strip().splitlines()
    detail = lines[0] if lines else f"[{response.status_code}] {response.text}"
    return f"{getattr(failure, 'title', None) or type(failure).__name__}: {detail[:300]}"


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_operation_keeps_the_ucp_contract(
    method: str, path: str, platform: UcpClient, business: TestClient, database_url: str
) -> None:
    app: FastAPI = business.app  # type: ignore[assignment]
    sessions, order = _sessions(platform)
    target = _schema()[path][method]
    operation = SERVED[target.definition.raw["operationId"]]
    real_ids = [order] if operation.name == "get_order" else sessions
    strategy = st.one_of(
        target.as_strategy(generation_mode=GenerationMode.POSITIVE),
        target.as_strategy(generation_mode=GenerationMode.NEGATIVE),
    )
    problems: dict[str, str] = {}

    def report(key: str, case: Case[Any], headers: dict[str, str]) -> None:
        curl = case.as_curl_command(headers=headers, base_url=ENDPOINT)
        problems.setdefault(key, f"{key}\n    {curl[:600]}")

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
        real_id = data.draw(st.booleans(), label="real id")
        if case.path_parameters and real_id:
            case.path_parameters["id"] = data.draw(st.sampled_from(real_ids), label="id")
        if isinstance(case.body, dict) and data.draw(st.booleans(), label="real body"):
            _make_real(operation.name, case.body, data)
        headers = platform.headers(key=operation.mutating)
        try:
            response = case.call(app=app, base_url=ENDPOINT, headers=headers)
        except Exception as error:  # raised out of the app: the platform gets a bare 500
            first_line = f"{type(error).__name__}: {error}".splitlines()[0]
            report(f"Unhandled exception (500): {first_line}", case, headers)
            return
        if operation.name == "create_checkout" and response.status_code == 201:
            sessions.append(response.json()["id"])
        try:
            case.validate_response(response, checks=CHECKS)
        except FailureGroup as group:
            # Keep going: a report of every distinct problem beats the first one alone.
            for failure in group.exceptions:
                report(_summary(failure, response), case, headers)

    check()
    assert not problems, "\n".join(problems.values())


# ---------------------------------------------------------------- request examples


def _blamed(method: str, path: str, body: Any) -> set[str]:
    """JSONPaths of every place ``body`` breaks the operation's request schema in the bundle
    (for a missing property, its own path too)."""
    document = _document()
    content = document["paths"][path][method.lower()]["requestBody"]["content"]
    schema = {**content["application/json"]["schema"], "components": document["components"]}
    paths: set[str] = set()

    def visit(errors: Iterable[ValidationError]) -> None:
        for error in errors:
            at = tuple(error.absolute_path)
            paths.add(json_path(at))
            if error.validator == "required" and isinstance(error.instance, dict):
                missing = [key for key in error.validator_value if key not in error.instance]
                paths.update(json_path((*at, key)) for key in missing)
            visit(error.context or ())

    visit(Draft202012Validator(schema, format_checker=FormatChecker()).iter_errors(body))
    return paths


def _with_real_items(value: Any, variant: str) -> Any:
    """``value`` with the ``item`` of each of its line items naming a real variant."""
    if isinstance(value, dict):
        out = {key: _with_real_items(inner, variant) for key, inner in value.items()}
        if isinstance(out.get("item"), dict) and "id" in out["item"]:
            out["item"] = {**out["item"], "id": variant}
        return out
    if isinstance(value, list):
        return [_with_real_items(inner, variant) for inner in value]
    return value


def test_every_served_operation_with_a_body_has_a_request_example() -> None:
    with_body = {op["operationId"] for _, _, op in _operations() if "requestBody" in op}
    assert with_body == {name.partition(":")[0] for _, _, name, _ in EXAMPLES}


@pytest.mark.parametrize(
    ("method", "path", "name", "example"), EXAMPLES, ids=[name for _, _, name, _ in EXAMPLES]
)
def test_request_examples_get_the_answer_their_schema_calls_for(
    method: str,
    path: str,
    name: str,
    example: dict[str, Any],
    platform: UcpClient,
    business: TestClient,
) -> None:
    body = _with_real_items(example, in_stock()[0])
    case = _schema()[path][method].Case(
        path_parameters={"id": ready(platform)["id"]} if "{" in path else {},
        body=body,
        media_type="application/json",
    )
    operation = SERVED[name.partition(":")[0]]
    headers = platform.headers(key=operation.mutating)
    response = case.call(app=business.app, base_url=ENDPOINT, headers=headers)
    case.validate_response(response, checks=CHECKS)
    blamed = _blamed(method, path, body)
    if name not in STALE_EXAMPLES:
        assert not blamed, f"the example {name} breaks its schema at {sorted(blamed)}"
        assert 200 <= response.status_code < 300, response.text
        assert response.json()["ucp"]["status"] == "success", response.text
        return
    assert blamed, f"the example {name} is valid now: take it out of STALE_EXAMPLES"
    assert response.status_code == 400, response.text
    error = response.json()
    assert JSONPATH.fullmatch(error["path"]), error
    assert error["path"] in blamed, (error, sorted(blamed))
