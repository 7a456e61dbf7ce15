"""What the raw ASGI JSON routes (``/v1/recommend``, ``/v1/estimate``) share: the three
request headers they read, the body read under the size limit, and the method check.

Why raw routes: a POST through litestar's request handling (kwargs, DI, guard, data
parsing, ``Response``) costs about twice a GET on the 2-core build machine; a raw handler
inside litestar keeps routing, middleware (request id, rate limit, metrics) and the
exception handlers, so errors keep the one error shape. Bodies are decoded with the same
strict rules as every JSON body (:func:`service.api.body.decode_json`).

Everything here runs on every request of those routes, so it does only what they need:
one pass over the raw headers for the three names they read (the last of a repeated
header wins, as in a dict of all of them), no decoding of the others.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from litestar.exceptions import HTTPException, MethodNotAllowedException
from litestar.types import HTTPScope, Receive, Send

_WANTED = {b"content-type": 0, b"content-length": 1, b"accept-language": 2}


class JsonHeaders(NamedTuple):
    """The request headers a JSON route reads (``None``: not sent)."""

    content_type: str | None
    content_length: str | None
    accept_language: str | None


def json_headers(scope: HTTPScope) -> JsonHeaders:
    """The headers of :class:`JsonHeaders` from the raw ASGI list (names compared in lower
    case; values decoded as latin-1, like litestar's)."""
    found: list[bytes | None] = [None, None, None]
    for name, value in scope["headers"]:
        slot = _WANTED.get(name.lower())
        if slot is not None:
            found[slot] = value
    content_type, length, language = found
    return JsonHeaders(
        None if content_type is None else content_type.decode("latin-1"),
        None if length is None else length.decode("latin-1"),
        None if language is None else language.decode("latin-1"),
    )


async def read_body(receive: Receive, content_length: str | None, limit: int) -> bytes:
    """The whole body, or 413 as soon as it is known to exceed ``limit`` bytes."""
    declared = content_length or ""
    if declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    chunks: list[bytes] = []
    size = 0
    while True:
        message: Any = await receive()
        if message["type"] == "http.disconnect":
            raise HTTPException(status_code=400, detail="client disconnected")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        if not message.get("more_body", False):
            if not chunks:
                return bytes(chunk)  # the usual case: the whole body in one message
            chunks.append(chunk)
            return b"".join(chunks)
        chunks.append(chunk)


def too_large(limit: int) -> HTTPException:
    return HTTPException(
        status_code=413, detail=f"Request body exceeds {limit} bytes (SUANLI_MAX_BODY_BYTES)"
    )


async def refuse_method(scope: HTTPScope, send: Send, allow: str) -> None:
    """Answer a request whose method is not POST: a 204 with ``Allow`` for ``OPTIONS``
    when ``allow`` lists it (what litestar answers on its own routes), else a 405."""
    if scope["method"] == "OPTIONS" and "OPTIONS" in allow:
        await send(
            {"type": "http.response.start", "status": 204, "headers": [(b"allow", allow.encode())]}
        )
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    raise MethodNotAllowedException(headers={"Allow": allow})
