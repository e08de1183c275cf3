"""The specialists, one per domain. Adding one is a file here and one line in the tuple; a
package replaces one without editing cartagent through an entry point in the
``cartagent.specialists`` group (:data:`SPECIALIST_PLUGINS`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import ConfigurationError
from ...plugins import GROUPS, PluginGroup
from ..catalog_overview import CatalogOverview
from ..domains import Domain
from ..specialist import Specialist
from .back_office.specialist import BackOfficeSpecialist
from .checkout import CheckoutSpecialist
from .discovery import DiscoverySpecialist
from .orders import OrdersSpecialist
from .out_of_scope import OutOfScopeSpecialist
from .returns import ReturnsSpecialist
from .store_questions.specialist import StoreQuestionsSpecialist

if TYPE_CHECKING:
    from ...catalog import Product
    from ...retrieval import Embedder
    from ..remote_checkout import Shopper

__all__ = [
    "SPECIALISTS",
    "SPECIALIST_PLUGINS",
    "BackOfficeSpecialist",
    "CheckoutSpecialist",
    "DiscoverySpecialist",
    "OrdersSpecialist",
    "OutOfScopeSpecialist",
    "ReturnsSpecialist",
    "SpecialistSetup",
    "StoreQuestionsSpecialist",
    "default_specialists",
]


@dataclass(frozen=True)
class SpecialistSetup:
    """What a specialist plugin's factory is given: the assistant's set-up (as
    :func:`default_specialists` takes it) and the built-in specialist of each domain."""

    embedder: Embedder | None
    return_url: str | None
    shopper: Shopper | None
    catalog: tuple[Product, ...]
    built_in: Mapping[Domain, Specialist]


SPECIALIST_PLUGINS: PluginGroup[Callable[[SpecialistSetup], Specialist]] = PluginGroup(
    GROUPS["specialists"], {}
)
"""Specialist factories that installed packages add. Each makes a specialist for one of the
router's domains, which takes the place of the built-in one (two for one domain are refused)."""


def default_specialists(
    embedder: Embedder | None = None,
    *,
    return_url: str | None = None,
    shopper: Shopper | None = None,
    catalog: Iterable[Product] = (),
    plugins: Mapping[str, Callable[[SpecialistSetup], Specialist]] = SPECIALIST_PLUGINS,
) -> tuple[Specialist, ...]:
    """One specialist per domain. ``embedder`` ranks the store's policies (pass the
    router's to share one model); ``return_url`` is where PayPal sends a shopper back after
    approving a payment. Checkout, orders and returns answer general questions ("how long do
    refunds take?") from the same policies. With ``shopper``, checkout happens at the
    toolkit's merchant (ACP) for that shopper. ``catalog`` (the products searched) answers
    "what do you sell?". A specialist from ``plugins`` (the installed packages' by default)
    replaces the built-in one of its domain."""
    products = tuple(catalog)
    policies = StoreQuestionsSpecialist(embedder)
    built_in = (
        DiscoverySpecialist(overview=CatalogOverview.of(products)),
        CheckoutSpecialist(return_url=return_url, policies=policies, shopper=shopper),
        OrdersSpecialist(policies=policies),
        ReturnsSpecialist(policies=policies),
        BackOfficeSpecialist(),
        policies,
        OutOfScopeSpecialist(),
    )
    if not plugins:
        return built_in
    chosen: dict[Domain, Specialist] = {s.domain: s for s in built_in}
    setup = SpecialistSetup(embedder, return_url, shopper, products, dict(chosen))
    added: dict[Domain, str] = {}
    for name in plugins:
        made = plugins[name](setup)
        if made.domain in added:
            raise ConfigurationError(
                f"specialist plugins {added[made.domain]!r} and {name!r} both answer "
                f"{made.domain.value}"
            )
        added[made.domain] = name
        chosen[made.domain] = made
    return tuple(chosen.values())


SPECIALISTS: tuple[Specialist, ...] = default_specialists(plugins={})
"""The built-in specialist for every domain."""
