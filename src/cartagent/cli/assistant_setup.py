"""The options `cartagent chat` and `cartagent serve` share, and the assistant they build.

Payments go to the PayPal endpoint named by ``--paypal`` (``CARTAGENT_PAYPAL_BASE_URL``):
``sandbox``, ``live`` or any URL; by default the local cartagent sandbox
(``CARTAGENT_SANDBOX_HOST``/``PORT``, started by ``cartagent sandbox`` or ``cartagent serve``)
with its demo merchant's credentials.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .search import load_catalog, locate_catalog
from .settings import data_folder, option_or, run_settings
from .understanders import model_option, understander_for

if TYPE_CHECKING:
    from ..assistant import Assistant
    from ..assistant.remote_checkout import Shopper
    from ..paypal import AsyncPayPalClient
    from ..shopping import ShopClient

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["AssistantOptions", "assistant_options", "build_assistant", "default_db"]


def default_db() -> str:
    return f"sqlite:///{data_folder() / 'chat.db'}"


@dataclass(frozen=True)
class AssistantOptions:
    model: str
    db_url: str | None
    catalog_path: str | None
    paypal_url: str | None
    client_id: str | None
    client_secret: str | None


PAYPAL_OPTIONS = (
    click.option(
        "--paypal",
        "paypal_url",
        default=None,
        help="PayPal for payments: live, sandbox or a URL; default: the local sandbox  "
        "[env var: CARTAGENT_PAYPAL_BASE_URL].",
    ),
    click.option(
        "--client-id",
        default=None,
        help="PayPal client id; default: the local sandbox's demo merchant  "
        "[env var: CARTAGENT_PAYPAL_CLIENT_ID].",
    ),
    click.option("--client-secret", help="[env var: CARTAGENT_PAYPAL_CLIENT_SECRET]"),
)
"""Where payments go (see :func:`paypal_endpoint`), for every command that takes them."""


def paypal_options(command: F) -> F:
    """``--paypal``, ``--client-id`` and ``--client-secret`` on ``command``, which receives
    them with the run's PayPal settings filled in where they were not given."""

    @functools.wraps(command)  # keeps the command's own options (``__click_params__``)
    def wrapped(
        *, paypal_url: str | None, client_id: str | None, client_secret: str | None, **kwargs: Any
    ) -> Any:
        paypal = run_settings().paypal
        return command(
            paypal_url=option_or(paypal_url, paypal.base_url),
            client_id=option_or(client_id, paypal.client_id),
            client_secret=option_or(client_secret, paypal.client_secret),
            **kwargs,
        )

    for decorate in reversed(PAYPAL_OPTIONS):
        wrapped = decorate(wrapped)
    return wrapped  # type: ignore[return-value]


def assistant_options(command: F) -> F:
    """Add the assistant's options; the command receives them as ``options``."""
    decorators = [
        model_option,
        click.option(
            "--db",
            "db_url",
            default=None,
            help="SQLAlchemy URL of the conversation store: sqlite:///path.db or "
            "postgresql://user@host/db; default: chat.db in cartagent's data folder.",
        ),
        click.option(
            "--catalog",
            "catalog_path",
            default=None,
            help="A products file or a tau-bench retail folder; default: the tau-bench store.",
        ),
    ]

    @functools.wraps(command)  # keeps the command's own options (``__click_params__``)
    def wrapped(**kwargs: Any) -> Any:
        names = AssistantOptions.__dataclass_fields__
        options = AssistantOptions(**{n: kwargs.pop(n) for n in names})
        return command(options=options, **kwargs)

    wrapped = paypal_options(wrapped)
    for decorate in reversed(decorators):
        wrapped = decorate(wrapped)
    return wrapped  # type: ignore[return-value]


def paypal_endpoint(
    paypal_url: str | None, client_id: str | None, client_secret: str | None
) -> tuple[str, str, str]:
    """Base URL, client id and secret: the local sandbox's demo merchant unless ``--paypal``."""
    from .mcp import resolve_base_url

    local = run_settings().sandbox
    if paypal_url is None:
        return (
            local.base_url,
            client_id or local.client_id,
            client_secret or local.client_secret,
        )
    if not client_id or not client_secret:
        raise click.UsageError(
            "--paypal needs --client-id and --client-secret "
            "(or CARTAGENT_PAYPAL_CLIENT_ID and CARTAGENT_PAYPAL_CLIENT_SECRET)"
        )
    return resolve_base_url(paypal_url), client_id, client_secret


def paypal_client(options: AssistantOptions) -> AsyncPayPalClient:
    from ..paypal import AsyncPayPalClient

    url, client_id, secret = paypal_endpoint(
        options.paypal_url, options.client_id, options.client_secret
    )
    return AsyncPayPalClient(client_id, secret, base_url=url)


def build_assistant(
    options: AssistantOptions,
    client: AsyncPayPalClient | None,
    *,
    return_url: str | None = None,
    merchant: ShopClient | None = None,
    shopper: Shopper | None = None,
) -> Assistant:
    """The assistant on the options' model, catalog and conversation store, paying through
    ``client`` (no payments when ``None``); PayPal sends shoppers back to ``return_url``
    after they approve a payment (see :class:`~cartagent.assistant.specialists.
    CheckoutSpecialist`). With ``merchant`` and ``shopper`` it shops at that ACP merchant:
    its product feed is the catalog and checkouts are the merchant's."""
    from ..assistant import Assistant, ConversationStore, EmbeddingRouter, ModelRouter, Router
    from ..assistant import language as language_model
    from ..assistant.specialists import default_specialists
    from ..assistant.toolkit import assistant_toolkit
    from ..errors import CheckoutError
    from ..retrieval import ModelUnderstander, catalog_searcher, minilm_model_dir
    from .embedders import ROUTER_EMBEDDER, make_embedder

    try:
        minilm_model_dir()
    except FileNotFoundError as error:
        raise click.UsageError(f"the router needs the MiniLM embedder: {error}") from None
    understand = understander_for(options.model)
    if merchant is not None:
        try:
            products = merchant.products()
        except CheckoutError as error:
            raise click.UsageError(f"the merchant's product feed: {error}") from None
    else:
        products = load_catalog(locate_catalog(options.catalog_path))
    embedder = make_embedder(ROUTER_EMBEDDER)
    # Hybrid search, its vectors cached by the catalog's content; the router's embedder too.
    searcher = catalog_searcher(
        products, understand, cache=run_settings().data_dir / "cache", embedder=lambda: embedder
    )
    embedded = EmbeddingRouter(embedder)
    embedded.warm_up()
    language_model.warm_up()  # the shopper's language, told on every turn
    warm_model = getattr(understand, "warm_up", None)
    if callable(warm_model):
        warm_model()  # an in-process model loads at start, not on the first turn
    if searcher.uses is not None:
        searcher.uses.warm_up()  # the kinds read from uses in English (other languages: lazily)
    router: Router = embedded
    capable = None
    if options.model == "openai" and isinstance(understand, ModelUnderstander):
        capable = understand.model
        router = ModelRouter(capable, fallback=embedded)
    store = ConversationStore.open(options.db_url or default_db())
    toolkit = None if client is None else assistant_toolkit(client, merchant=merchant)
    specialists = default_specialists(
        embedded.embedder, return_url=return_url, shopper=shopper, catalog=products
    )
    return Assistant(
        router, store, searcher=searcher, model=capable, toolkit=toolkit, specialists=specialists
    )


DEMO_BUYER = {
    "name": "Ada Lovelace",
    "email": "ada@example.com",
    "line_one": "1 Analytical Way",
    "city": "San Francisco",
    "state": "CA",
    "postal_code": "94102",
    "country": "US",
    "payment_token": "BA-CARTAGENT-DEMO",
}


def load_shopper(path: Path | None) -> Shopper:
    """The shopper from a TOML file (see ``cartagent chat --buyer``), else the demo buyer."""
    import tomllib

    from ..addresses import Address
    from ..assistant.remote_checkout import Shopper

    data: dict[str, Any] = dict(DEMO_BUYER)
    if path is not None:
        try:
            data = tomllib.loads(path.read_text())
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise click.UsageError(f"{path}: {error}") from None
    missing = [key for key in DEMO_BUYER if not isinstance(data.get(key), str) or not data[key]]
    if missing:
        raise click.UsageError(f"{path}: missing or empty: {', '.join(missing)}")
    address = Address(
        name=data["name"],
        line_one=data["line_one"],
        line_two=str(data.get("line_two", "")),
        city=data["city"],
        state=data["state"],
        country=data["country"].upper(),
        postal_code=data["postal_code"],
    )
    return Shopper(address=address, email=data["email"], payment_token=data["payment_token"])
