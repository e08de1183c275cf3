"""The Universal Commerce Protocol (UCP): the store as a UCP business, built on release
v2026-04-08 and answering platforms at v2026-01-11 and v2026-08-25 in theirs (the protocol's
shapes, schemas, signatures and releases are :mod:`cartagent.protocols.ucp`, shared with the
agent's client).

Discovery and capability negotiation (:mod:`cartagent.protocols.ucp.profile`, platform profiles
from :mod:`.platforms`),
checkout sessions with the fulfillment extension and a PayPal payment handler, catalog search
and lookup, and orders, over REST (:func:`ucp_router`) from one transport-neutral
:class:`UcpService`::

    service = UcpService(merchant, agents, UcpSettings(base_url=url), FetchedProfiles())
    app.include_router(ucp_router(service))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_face

if TYPE_CHECKING:
    from ...protocols.ucp.profile import Negotiated, ProfileMalformed, business_profile, negotiate
    from ...protocols.ucp.schema import UCP_VERSION, VERSIONS
    from ...protocols.ucp.signatures import SignatureInvalid, verify_request
    from ..idempotency import Answer, Idempotency, KeyRules, Refusal
    from .business_keys import BusinessKeys
    from .events import VerifiedWebhook, verify_order_webhook
    from .platforms import FetchedProfiles, KnownProfiles, PlatformProfiles, ProfileUnreachable
    from .routes import ucp_router
    from .service import OPERATIONS, UcpCall, UcpPolicy, UcpService, UcpSettings

__all__ = [
    "OPERATIONS",
    "UCP_VERSION",
    "VERSIONS",
    "Answer",
    "BusinessKeys",
    "FetchedProfiles",
    "Idempotency",
    "KeyRules",
    "KnownProfiles",
    "Negotiated",
    "PlatformProfiles",
    "ProfileMalformed",
    "ProfileUnreachable",
    "Refusal",
    "SignatureInvalid",
    "UcpCall",
    "UcpPolicy",
    "UcpService",
    "UcpSettings",
    "VerifiedWebhook",
    "business_profile",
    "negotiate",
    "ucp_router",
    "verify_order_webhook",
    "verify_request",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "Answer": "..idempotency",
        "Idempotency": "..idempotency",
        "KeyRules": "..idempotency",
        "Refusal": "..idempotency",
        "VerifiedWebhook": ".events",
        "verify_order_webhook": ".events",
        "FetchedProfiles": ".platforms",
        "KnownProfiles": ".platforms",
        "PlatformProfiles": ".platforms",
        "ProfileUnreachable": ".platforms",
        "Negotiated": "...protocols.ucp.profile",
        "ProfileMalformed": "...protocols.ucp.profile",
        "business_profile": "...protocols.ucp.profile",
        "negotiate": "...protocols.ucp.profile",
        "ucp_router": ".routes",
        "UCP_VERSION": "...protocols.ucp.schema",
        "VERSIONS": "...protocols.ucp.schema",
        "OPERATIONS": ".service",
        "UcpCall": ".service",
        "UcpPolicy": ".service",
        "UcpService": ".service",
        "UcpSettings": ".service",
        "BusinessKeys": ".business_keys",
        "SignatureInvalid": "...protocols.ucp.signatures",
        "verify_request": "...protocols.ucp.signatures",
    },
)
