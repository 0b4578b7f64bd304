"""Bodies refused before they are read, under ASGI.

Django's ASGI handler reads a whole request body (into a temporary file) before any
middleware sees the request, so a client could make uvicorn take gigabytes only to be
refused by the parser after. A body the app refuses whatever it holds (over the largest
any endpoint takes, or chunked without a Content-Length on the API) is refused from its
headers, unread, with ``Connection: close``: the server then drops what the client still
sends, and the client knows not to use the connection again.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings

from memoryhub.errors import ApiError
from memoryhub.middleware import is_api_path, length_required
from memoryhub.parsers import too_large


def early_refusal(scope: dict[str, Any]) -> ApiError | None:
    """The refusal an HTTP request's headers alone earn, or None."""
    if scope["type"] != "http":
        return None
    headers = dict(scope["headers"])  # ASGI names are lowercase bytes
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    length = headers.get(b"content-length")
    if length is not None:
        if limit is not None and length.isdigit() and int(length) > limit:
            return too_large(limit)
        return None
    if b"transfer-encoding" in headers and is_api_path(scope["path"]):
        return length_required()
    return None


async def refuse(send: Callable[[dict], Awaitable[None]], error: ApiError) -> None:
    body = json.dumps(error.as_dict()).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
