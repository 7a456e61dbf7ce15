"""Structured JSON logs and request ids.

Every request gets an id (the client's ``X-Request-ID`` when it is sane, else a new one),
echoed in the response header and written in one JSON access-log line with route,
status, duration and cache result. Handlers record the cache result in
``scope["state"]["cache"]``. Log lines never include request bodies or headers, so
secrets (the admin API key, Redis passwords in URLs) cannot leak through them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, ReceiveMessage, Scope, Send

ACCESS_LOG = logging.getLogger("suanli.access")
REQUEST_ID_HEADER = "x-request-id"

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)
"""For the service's own pages (``/``): scripts, styles and images from this origin only,
no inline scripts, never framed. Inline ``<svg>`` markup needs no allowance."""
SECURITY_HEADERS: tuple[tuple[str, str], ...] = (
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
)
DOCS_PREFIX = "/schema"
"""litestar's API-docs pages load their viewers from a CDN: no CSP there."""
_OWN_HEADER_NAMES = frozenset(
    [REQUEST_ID_HEADER.encode(), *(name.encode() for name, _ in SECURITY_HEADERS)]
)
_SECURITY_RAW = tuple((name.encode(), value.encode()) for name, value in SECURITY_HEADERS)
_CSP_NAME = b"content-security-policy"
_REQUEST_ID_NAME = REQUEST_ID_HEADER.encode()
_CSP_RAW = (_CSP_NAME, CONTENT_SECURITY_POLICY.encode())


def _with_own_headers(
    headers: Iterable[tuple[bytes, bytes]], request_id: bytes, with_csp: bool
) -> list[tuple[bytes, bytes]]:
    """The response's headers with the request id and security headers set (replacing
    any the route set) and the CSP added unless the route chose its own. One pass over
    raw ASGI headers (lower-case names by the ASGI spec): this runs on every response,
    and ``MutableScopeHeaders`` rescans the list for each header it sets."""
    raw = [header for header in headers if header[0] not in _OWN_HEADER_NAMES]
    has_csp = any(name == _CSP_NAME for name, _ in raw)
    raw.append((_REQUEST_ID_NAME, request_id))
    raw.extend(_SECURITY_RAW)
    if with_csp and not has_csp:
        raw.append(_CSP_RAW)
    return raw


_SANE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")


def new_request_id() -> str:
    """A random (version 4, RFC 4122 variant) UUID in hex, the text ``uuid.uuid4().hex``
    gives, without building a ``UUID`` object (a third of the cost, on every request)."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40  # version 4
    raw[8] = raw[8] & 0x3F | 0x80  # variant 10xx
    return raw.hex()


_json = msgspec.json.Encoder()


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and any ``extra`` fields."""

    _RESERVED = frozenset(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in self._RESERVED and not key.startswith("_"):
                payload[key] = value
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return _json.encode(payload).decode()


def configure_logging(level: str) -> None:
    """Route the root logger to stderr as JSON lines (idempotent)."""
    root = logging.getLogger()
    root.setLevel(level)
    if not any(getattr(h, "_suanli", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
        handler._suanli = True  # type: ignore[attr-defined]
        root.addHandler(handler)


def request_id_middleware(app: ASGIApp, timeout_s: float | None = None) -> ASGIApp:
    """ASGI middleware: request id in and out, security headers, one access-log line per
    HTTP request, and the per-request deadline: a request still unanswered after
    ``timeout_s`` gets a 503 when the service was slow (a stuck dependency) and a 408 when
    the client was (its body had not arrived), instead of holding the connection."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return
        incoming = _header(scope, REQUEST_ID_HEADER)
        request_id = incoming if incoming and _SANE_ID.match(incoming) else new_request_id()
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status = 500

        started_response = False
        awaiting_body = False
        with_csp = not scope["path"].startswith(DOCS_PREFIX)

        async def send_with_id(message: Message) -> None:
            nonlocal status, started_response
            if message["type"] == "http.response.start":
                started_response = True
                status = message["status"]
                message["headers"] = _with_own_headers(
                    message.get("headers", ()), request_id.encode(), with_csp
                )
            await send(message)

        body_complete = False

        async def receive_watched() -> ReceiveMessage:
            nonlocal awaiting_body, body_complete
            awaiting_body = not body_complete  # waiting for the client's body, not a disconnect
            message = await receive()
            awaiting_body = False
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_complete = True
            return message

        try:
            async with asyncio.timeout(timeout_s):
                await app(scope, receive_watched, send_with_id)
        except TimeoutError:
            if status != 500 or started_response:
                raise
            status = 408 if awaiting_body else 503
            await _send_timeout(send, request_id, timeout_s or 0, client_slow=awaiting_body)
        finally:
            if ACCESS_LOG.isEnabledFor(logging.INFO):  # else the line's fields are not built
                ACCESS_LOG.info(
                    "request",
                    extra={
                        "request_id": request_id,
                        "method": scope.get("method"),
                        "route": scope.get("path"),
                        "status": status,
                        "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                        "cache": scope.get("state", {}).get("cache"),
                    },
                )

    return middleware


async def _send_timeout(
    send: Send, request_id: str, timeout_s: float, *, client_slow: bool = False
) -> None:
    if client_slow:
        status = 408
        detail = (
            f"the request body did not arrive within {timeout_s:g} s "
            "(SUANLI_REQUEST_TIMEOUT_S); send the whole body at once"
        )
        extra_headers = [(b"connection", b"close")]
    else:
        status = 503
        detail = f"request not answered within {timeout_s:g} s (SUANLI_REQUEST_TIMEOUT_S)"
        extra_headers = [(b"retry-after", b"1")]
    body = _json.encode(
        {"status_code": status, "detail": detail, "extra": {"request_id": request_id}}
    )
    headers = [
        (REQUEST_ID_HEADER.encode(), request_id.encode()),
        *extra_headers,
        *((name.encode(), value.encode()) for name, value in SECURITY_HEADERS),
    ]
    await send_json(send, status, body, headers)


async def send_json(
    send: Send, status: int, body: bytes, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    """Send a complete JSON response straight through ASGI (already-encoded ``body``)."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _header(scope: Scope, name: str) -> str | None:
    wanted = name.encode()
    for key, value in scope.get("headers", ()):
        if key.lower() == wanted:
            return bytes(value).decode("latin-1")
    return None
