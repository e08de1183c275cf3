"""Product pictures that are files of the catalog: ``GET /api/products/{id}/image``.

A catalog names a picture by an https address (the page loads it from there) or by a path
relative to its own folder; this route serves the second kind. No key is needed (an ``<img>``
sends none, and a product's picture is as public as the shop). Only a file that the product
names, inside the catalog's folder after every link is followed, with a picture suffix and at
most :data:`MAX_PICTURE_BYTES`, is ever read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

from ..catalog import PICTURE_TYPES, Product, is_web_address
from .failures import NOT_FOUND

__all__ = ["MAX_PICTURE_BYTES", "pictures_router"]

MAX_PICTURE_BYTES = 5 * 1024 * 1024
MAX_PRODUCT_ID = 200
HEADERS = {
    "Cache-Control": "public, max-age=3600",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'",
}


def picture_file(root: Path, product: Product | None) -> Path | None:
    """The file of ``product``'s picture under ``root``, or ``None`` where it has none there
    (no picture, an address, a file that is missing, too big, or outside ``root``)."""
    if product is None or product.image is None or is_web_address(product.image):
        return None
    folder = root.resolve()
    path = (folder / product.image).resolve()
    if not path.is_relative_to(folder) or path.suffix.lower() not in PICTURE_TYPES:
        return None
    try:
        if not path.is_file() or path.stat().st_size > MAX_PICTURE_BYTES:
            return None
    except OSError:
        return None
    return path


def pictures_router(root: Path, product: Callable[[str], Product | None]) -> APIRouter:
    """The route over the catalog folder ``root``; ``product(id)`` finds a product."""
    router = APIRouter(prefix="/api")

    @router.get(
        "/products/{product_id}/image",
        response_class=FileResponse,
        responses={404: {"description": "The product has no picture file here."}},
        tags=["web app"],
    )
    async def picture(product_id: str) -> FileResponse:
        """A product's picture from the catalog's folder (no key needed)."""
        found = product(product_id) if len(product_id) <= MAX_PRODUCT_ID else None
        path = picture_file(root, found)
        if path is None:
            raise HTTPException(404, NOT_FOUND)
        return FileResponse(path, media_type=PICTURE_TYPES[path.suffix.lower()], headers=HEADERS)

    return router
