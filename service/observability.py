"""Structured JSON logs and request ids.

Every request gets an id (the client's ``X-Request-ID`` when it is sane, else a new one),
echoed in the response header and written in one JSON access-log line with route,
status, duration and cache result. Handlers record the cache result in
``scope["state"]["cache"]``. Log lines never include request bodies or headers, so
secrets (the admin API key, Redis passwords in URLs) cannot leak through them.
"""

from __future__ import annotations

import logging
import re
import sys
import time
import uuid
from typing import Any

import msgspec
from litestar.datastructures import MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

ACCESS_LOG = logging.getLogger("suanli.access")
REQUEST_ID_HEADER = "x-request-id"
_SANE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
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


def request_id_middleware(app: ASGIApp) -> ASGIApp:
    """ASGI middleware: request id in and out, one access-log line per HTTP request."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return
        incoming = _header(scope, REQUEST_ID_HEADER)
        request_id = incoming if incoming and _SANE_ID.match(incoming) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableScopeHeaders.from_message(message)[REQUEST_ID_HEADER] = request_id
            await send(message)

        try:
            await app(scope, receive, send_with_id)
        finally:
            state = scope.get("state", {})
            ACCESS_LOG.info(
                "request",
                extra={
                    "request_id": request_id,
                    "method": scope.get("method"),
                    "route": scope.get("path"),
                    "status": status,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                    "cache": state.get("cache"),
                },
            )

    return middleware


def _header(scope: Scope, name: str) -> str | None:
    wanted = name.encode()
    for key, value in scope.get("headers", ()):
        if key.lower() == wanted:
            return bytes(value).decode("latin-1")
    return None
