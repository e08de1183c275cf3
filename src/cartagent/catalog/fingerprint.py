"""A product's content fingerprint: equal fingerprints mean nothing an index reads changed.

Incremental index builds compare fingerprints to find the products to re-index (and, for dense
retrieval, re-embed); every build engine (local or Spark) must compute them with this function.
"""

from __future__ import annotations

import hashlib

from .product import Product

__all__ = ["content_hash"]


def content_hash(product: Product) -> str:
    """32 hex characters of SHA-256 over the product's canonical JSON (field order is fixed)."""
    return hashlib.sha256(product.model_dump_json().encode()).hexdigest()[:32]
