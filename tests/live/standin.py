"""A loopback HTTP server that plays a cloud price API for the official SDK clients.

Each provider module in this package supplies an ``answer(request) -> Reply`` function
that builds its response from the SDK's own response model classes (so the payload has
exactly the shape the SDK deserializes). The server records every request, which lets
tests count retries, and can be scripted to answer the next N calls of an action with
a fault (throttling, 5xx, malformed payload) before answering normally again.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    action: str
    at: float
    """``time.monotonic()`` on arrival: lets a test measure the client's back-off."""

    def json(self) -> dict[str, object]:
        loaded: dict[str, object] = json.loads(self.body or b"{}")
        return loaded

    def form(self) -> dict[str, str]:
        return dict(parse_qsl(self.body.decode()))


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes | dict[str, object] | list[object] = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"

    def encoded(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        return json.dumps(self.body, ensure_ascii=False, default=_number).encode()


def _number(value: object) -> float:
    """SDK models hold amounts as ``Decimal``; on the wire they are JSON numbers."""
    if isinstance(value, Decimal):
        return float(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


Answer = Callable[[Request], Reply]
ActionOf = Callable[[str, str, dict[str, str], dict[str, str]], str]


class StandIn:
    """The server; use :func:`serve` to run one for the duration of a test."""

    def __init__(self, answer: Answer, action_of: ActionOf) -> None:
        self.answer = answer
        self.action_of = action_of
        self.requests: list[Request] = []
        self._faults: dict[str, deque[Reply]] = defaultdict(deque)
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self.server.daemon_threads = True

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def fail_next(self, action: str, *replies: Reply) -> None:
        """Answer the next ``len(replies)`` calls of ``action`` with these replies."""
        with self._lock:
            self._faults[action].extend(replies)

    def calls(self, action: str | None = None) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if action is None or r.action == action]

    def _dispatch(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            queue = self._faults.get(request.action)
            fault = queue.popleft() if queue else None
        return fault if fault is not None else self.answer(request)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                url = urlsplit(self.path)
                query = dict(parse_qsl(url.query))
                headers = {k.lower(): v for k, v in self.headers.items()}
                action = standin.action_of(self.command, url.path, query, headers)
                request = Request(
                    self.command, url.path, query, headers, body, action, time.monotonic()
                )
                reply = standin._dispatch(request)
                payload = reply.encoded()
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(payload)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

            do_GET = _handle
            do_POST = _handle

            def log_message(self, format: str, *args: object) -> None:
                return  # keep pytest output clean

        return Handler


@contextmanager
def serve(answer: Answer, action_of: ActionOf) -> Iterator[StandIn]:
    standin = StandIn(answer, action_of)
    thread = threading.Thread(
        target=standin.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield standin
    finally:
        standin.server.shutdown()
        standin.server.server_close()
        thread.join(timeout=5)
