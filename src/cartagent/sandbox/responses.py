"""JSON responses rendered with orjson."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.responses import Response

JSON = "application/json"


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    content = b"" if body is None else orjson.dumps(body)
    return Response(content=content, status_code=status, media_type=JSON, headers=headers)
