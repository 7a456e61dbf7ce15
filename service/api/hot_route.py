"""Hot routes answered before litestar's router: a ``POST`` to a raw JSON route that
succeeds (``/v1/recommend``, ``/v1/estimate``).

A cached answer costs the route itself a few microseconds; litestar's router, its two
exception layers and the scope state they keep cost about as much again, on every
request. So the app's outer layer (inside the request id and the rate limit, see
``service.app.SuanliApp``) calls the route's ASGI function directly for an exact
``POST`` to one of those paths, counted in the same per-route series as the metrics middleware
(:mod:`service.runtime.request_metrics`), with the scope keys litestar would have set.

Everything that is not a plain success goes through litestar as before, so errors keep
their one shape and handlers: when the route raises before anything was sent, the
request is dispatched to litestar with the body already read replayed, and litestar's
route answers it (raising the same error again, into the exception handlers); that
attempt is not counted, litestar's is. A request whose ``Host`` header litestar would
refuse, any other method or path, and other scopes go to litestar directly.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from litestar import Litestar
from litestar._asgi.utils import is_valid_host  # the router's own check (litestar 2.25)
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from service.runtime.request_metrics import RouteSeries, route_series

RawRoute = Callable[[Any, Receive, Send], Awaitable[None]]


def hot_routes(inner: ASGIApp, app: Litestar, paths: Iterable[str], *, app_name: str) -> ASGIApp:
    """``inner`` (litestar) with successful ``POST`` requests of ``paths`` (raw ASGI
    routes of ``app``) answered by their route functions directly."""
    routes: dict[str, tuple[RawRoute, Any, RouteSeries]] = {}
    for path in paths:
        _, handler, *_ = app.asgi_router.handle_routing(path=path, method="POST")
        routes[path] = (handler.fn, handler, route_series("POST", path, app_name))
    perf_counter = time.perf_counter

    async def dispatch(scope: Scope, receive: Receive, send: Send) -> None:
        raw: Any = scope
        hot = routes.get(raw["path"]) if raw["type"] == "http" else None
        if (
            hot is None
            or raw["method"] != "POST"
            or raw.get("root_path")
            or not _host_ok(raw["headers"])
        ):
            await inner(scope, receive, send)
            return
        route, route_handler, series = hot
        raw["app"] = raw["litestar_app"] = app
        raw.setdefault("state", {})
        raw["path_params"] = {}
        raw["route_handler"] = route_handler
        raw["path_template"] = raw["path"]
        received: list[Any] = []
        status = 200
        ended = 0.0
        sent = False

        async def receive_kept() -> Any:
            message = await receive()
            received.append(message)
            return message

        async def send_observed(message: Message) -> None:
            nonlocal status, ended, sent
            event: Any = message
            sent = True
            if event["type"] == "http.response.start":
                status = event["status"]
            else:
                ended = perf_counter()
            await send(message)

        started = perf_counter()
        series.in_progress.inc()
        retry = False
        try:
            await route(raw, receive_kept, send_observed)
        except Exception:
            if sent:
                raise
            retry = True
        finally:  # counted like the middleware counts: also when cancelled (a timeout)
            series.in_progress.dec()
            if not retry:
                series.finished(status, ended - started if ended else 0.0)
        if retry:
            await inner(scope, _replay(received, receive), send)

    return dispatch


def _host_ok(headers: Any) -> bool:
    for name, value in headers:
        if name == b"host":
            return bool(is_valid_host(value))
    return True


def _replay(received: list[Any], receive: Receive) -> Receive:
    """``receive`` that first gives back the messages already received."""
    pending = list(received)

    async def replayed() -> Any:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed
