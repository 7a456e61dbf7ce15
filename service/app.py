"""``create_app``: the one place that wires settings, plugins, stores, catalog and routes.

``granian --factory service.app:create_app`` calls it with no argument (settings from the
environment); tests pass explicit settings and, when they need to, a plugin manager.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator
from typing import Any

from litestar import Litestar, Request, Response
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.openapi.spec import Contact
from litestar.plugins.prometheus import PrometheusController
from litestar.stores.registry import StoreRegistry
from litestar.types import (
    ASGIApp,
    ControllerRouterHandler,
    LifeSpanReceive,
    LifeSpanScope,
    LifeSpanSend,
    Receive,
    Scope,
    Send,
)

from service import web
from service.api import estimate, recommend
from service.api.admin import AdminController
from service.api.body import in_chinese, validation_detail
from service.api.estimate import estimate_route
from service.api.health import HealthController
from service.api.hot_route import hot_routes
from service.api.models import ModelsController
from service.api.offers import OffersController
from service.api.openapi import finish_contract, schema_router
from service.api.providers import ProvidersController
from service.api.recommend import recommend_route
from service.api.state import STATE_KEY, Suanli, provide_suanli
from service.catalog.accelerators import AcceleratorRegistry
from service.catalog.aggregate import CatalogService
from service.catalog.live.discovery import discover_live_jobs
from service.catalog.live.monitor import LivePriceMonitor
from service.catalog.live.schedule import run_refresh_schedule
from service.catalog.live.store import PriceSnapshotStore
from service.catalog.overrides import load_overrides
from service.hooks.loader import PluginManager, collect, get_plugin_manager
from service.runtime.cache import RequestCache, StoreFactory
from service.runtime.catalog_sync import Board, CatalogSync, FileBoard, LocalBoard, RedisBoard
from service.runtime.collector import tune_for_serving
from service.runtime.errors import ErrorLang, InputError, error_lang
from service.runtime.metrics import CATALOG_RELOADS, watch_live_prices
from service.runtime.observability import configure_logging, request_id_middleware
from service.runtime.ratelimit import RateLimiter
from service.runtime.request_metrics import request_metrics
from service.runtime.settings import Settings, check_settings, load_settings, parse_client_keys
from service.sizing.presets import ModelRegistry

log = logging.getLogger(__name__)

VERSION = "0.1.0"
RATE_LIMITER_KEY = "rate_limiter"
METRICS_APP_NAME = "suanli"
"""``app_name`` label of the per-route request series."""
SHUTDOWN_STEP_S = 2.0


def create_app(
    settings: Settings | None = None, plugin_manager: PluginManager | None = None
) -> Litestar:
    """Build the application. Raises ``SettingsError``/``OverrideError`` on bad config."""
    settings = settings or load_settings()
    check_settings(settings)
    configure_logging(settings.log_level)
    pm = plugin_manager or get_plugin_manager(allow=settings.plugins)
    overrides = load_overrides(settings.price_overrides) if settings.price_overrides else ()

    stores = StoreFactory(settings.redis_url, settings.redis_timeout_s, settings.cache_max_bytes)
    shared = stores.namespace("health") if stores.shared else None
    # Without Redis the local store cannot fail: no breaker between it and each request.
    recommend_store = (
        stores.namespace("recommend") if stores.shared else stores.primary("recommend")
    )
    limiter = RateLimiter(
        settings.rate_limit_per_minute,
        redis=stores.redis,
        breaker=stores.breaker,
        trusted_proxies=settings.trusted_proxies,
        client_keys=parse_client_keys(settings.client_keys),
    )
    live_jobs = discover_live_jobs(pm)
    monitor = LivePriceMonitor(
        PriceSnapshotStore(stores.namespace("prices")),
        {job.name: job.source for job in live_jobs},
        settings.live_price_ttl_s,
    )
    watch_live_prices(
        [job.name for job in live_jobs],
        age_s=lambda name: monitor.info(name).age_s,
        failures=lambda name: monitor.info(name).consecutive_failures,
    )
    board: Board
    if stores.redis is not None:
        board = RedisBoard(stores.redis)
    elif settings.sync_dir:
        board = FileBoard(settings.sync_dir)
    else:
        board = LocalBoard()
    catalog = CatalogService(
        pm.hook.suanli_register_providers,
        overrides,
        settings.provider_timeout_s,
        price_layer=monitor.price_layer,
        price_estimates=settings.price_estimates,
    )
    suanli = Suanli(
        settings=settings,
        accelerators=AcceleratorRegistry(collect(pm.hook.suanli_register_accelerators())),
        models=ModelRegistry(collect(pm.hook.suanli_register_models())),
        catalog=catalog,
        cache=RequestCache(
            recommend_store, "recommend", settings.cache_ttl_s, verify=stores.shared
        ),
        shared_store=shared,
        sync=CatalogSync(
            board, settings.refresh_interval_s, fingerprint=lambda: catalog.snapshot.fingerprint
        ),
        plugin_report=list(pm.report),
        live_prices=monitor,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        sync = suanli.sync
        with contextlib.suppress(Exception):  # Redis down at start-up: the watch retries
            # Before loading: a change published while this worker loads is seen next tick.
            sync.seen = await sync.current()
        await monitor.load()
        await asyncio.to_thread(_initial_load, suanli)
        tune_for_serving()  # this worker's young generation (see service.runtime.collector)
        tasks = []
        with contextlib.suppress(Exception):
            await sync.report()
        tasks.append(
            asyncio.create_task(sync.watch(lambda: _reload(suanli, monitor), monitor.changed))
        )
        stop = asyncio.Event()
        if settings.live_prices:
            tasks.append(
                asyncio.create_task(
                    run_refresh_schedule(
                        live_jobs,
                        PriceSnapshotStore(stores.primary("prices")),
                        stop,
                        interval_s=settings.live_price_ttl_s / 2,
                        timeout_s=settings.provider_timeout_s * 6,
                        on_published=lambda: _prices_published(suanli, monitor),
                    )
                )
            )
        try:
            yield
        finally:
            # Shutdown must end even when Redis is stuck: every step is bounded.
            stop.set()
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks, timeout=SHUTDOWN_STEP_S)
            for step in (sync.leave, stores.close):
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(step(), SHUTDOWN_STEP_S)

    routes = _routes()
    lifespans: list[Any] = [lifespan]
    if settings.mcp:
        from service.clients.backend import LocalBackend
        from service.mcp.server import McpMount

        mount = McpMount(LocalBackend(suanli), settings.host, settings.max_body_bytes)
        routes.append(mount.route)
        lifespans.append(mount.lifespan)

    # litestar's Prometheus series per route, without its per-request label lookups.
    middleware: list[Any] = [request_metrics(app_name=METRICS_APP_NAME, exclude="/metrics")]

    app = SuanliApp(
        route_handlers=routes,
        dependencies={"suanli": Provide(provide_suanli, sync_to_thread=False)},
        middleware=middleware,
        lifespan=lifespans,
        stores=StoreRegistry(
            stores={"recommend": recommend_store},
            default_factory=stores.namespace,
        ),
        exception_handlers={
            InputError: _input_error_handler,
            HTTPException: _http_error_handler,
            Exception: _unexpected_error_handler,
        },
        openapi_config=OpenAPIConfig(
            title="Suanli (算力)",
            version=VERSION,
            description=(
                "Which cloud server to rent for a deep-learning job on Alibaba Cloud, "
                "Tencent Cloud, Huawei Cloud (incl. Ascend) and Volcano Engine — and what "
                "it costs. Memory in GiB (2^30 bytes), money in CNY."
            ),
            contact=Contact(name="Suanli"),
            use_handler_docstrings=True,
            # Only the JSON document (at /schema and /schema/openapi.json): litestar's
            # documentation UIs load their scripts from public CDNs, blank offline.
            render_plugins=[JsonRenderPlugin(path=["/", "/openapi.json"])],
            openapi_router=schema_router(),
        ),
        request_max_body_size=settings.max_body_bytes,
        debug=False,
        logging_config=None,
    )
    app.state[STATE_KEY] = suanli
    app.state[RATE_LIMITER_KEY] = limiter
    finish_contract(app)
    return app


class SuanliApp(Litestar):
    """Litestar with the request-id / access-log layer *outside* routing, so 404s, 405s
    and errors raised before a handler runs get a request id and a log line too (app
    middleware only wraps matched routes)."""

    async def __call__(
        self,
        scope: Scope | LifeSpanScope,
        receive: Receive | LifeSpanReceive,
        send: Send | LifeSpanSend,
    ) -> None:
        await self._outer(scope, receive, send)  # type: ignore[arg-type]

    @functools.cached_property
    def _outer(self) -> ASGIApp:
        settings: Settings = self.state[STATE_KEY].settings
        limiter: RateLimiter = self.state[RATE_LIMITER_KEY]
        inner: ASGIApp = hot_routes(
            super().__call__, self, (recommend.PATH, estimate.PATH), app_name=METRICS_APP_NAME
        )
        if limiter.active:  # before routing: a refused request costs no parsing
            inner = limiter.middleware(inner)
        return request_id_middleware(inner, settings.request_timeout_s)


class MetricsController(PrometheusController):
    """``/metrics`` in Prometheus text format: an operations endpoint, not part of the
    JSON API contract (it would be documented as ``application/json`` otherwise)."""

    include_in_schema = False


def _routes() -> list[ControllerRouterHandler]:
    return [
        HealthController,
        ProvidersController,
        OffersController,
        estimate_route,
        ModelsController,
        recommend_route,
        AdminController,
        MetricsController,
        *web.routes(),
    ]


async def _reload(suanli: Suanli, monitor: LivePriceMonitor) -> None:
    """Reload after another replica (or the price job) published a change."""
    await monitor.load()
    overrides = None
    if suanli.settings.price_overrides:
        overrides = load_overrides(suanli.settings.price_overrides)
    await asyncio.to_thread(suanli.catalog.load, overrides)


async def _prices_published(suanli: Suanli, monitor: LivePriceMonitor) -> None:
    """This process refreshed live prices: use them here, and tell the other replicas."""
    await _reload(suanli, monitor)
    await suanli.publish_catalog_change()


def _initial_load(suanli: Suanli) -> None:
    snapshot = suanli.catalog.load()
    CATALOG_RELOADS.labels(trigger="startup", outcome="ok" if snapshot.providers else "empty").inc()
    log.info(
        "catalog loaded",
        extra={
            "fingerprint": snapshot.fingerprint,
            "providers": [p.name for p in snapshot.providers],
            "offers": len(snapshot.offers),
        },
    )


def _error_body(status: int, detail: str, extra: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"status_code": status, "detail": detail}
    if extra is not None:
        body["extra"] = extra
    return body


def _error_lang(request: Request[Any, Any, Any]) -> ErrorLang:
    """The language an error is told in: the body's ``lang`` (a route that read it
    leaves it in the scope's state), else ``Accept-Language``, else English."""
    declared = request.scope.get("state", {}).get("lang")
    return error_lang(declared, request.headers.get("accept-language"))


def _input_error_handler(request: Request[Any, Any, Any], exc: InputError) -> Response[Any]:
    lang = _error_lang(request)
    item: dict[str, Any] = {"key": exc.field, "message": exc.message_in(lang),
                            "source": exc.source}  # fmt: skip
    if exc.suggestions:
        item["suggestions"] = list(exc.suggestions)
    detail = validation_detail(f"{request.method} {request.url.path}", lang)
    return Response(_error_body(exc.status_code, detail, [item]), status_code=exc.status_code)


def _http_error_handler(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    headers = dict(exc.headers or {})
    detail, extra = exc.detail, exc.extra or None
    if exc.status_code in (400, 422) and _error_lang(request) == "zh":
        detail, extra = in_chinese(detail, extra)
    if exc.status_code == 413:  # one wording on every route (raw ASGI ones say the same)
        limit = request.app.state[STATE_KEY].settings.max_body_bytes
        detail = f"Request body exceeds {limit} bytes (SUANLI_MAX_BODY_BYTES)"
        return Response(_error_body(413, detail), status_code=413, headers=headers)
    if exc.status_code == 429 and "Retry-After" not in headers:
        # litestar's limiter sends RateLimit-Reset (seconds) but not the standard header.
        headers["Retry-After"] = str(headers.get("RateLimit-Reset", 60))
    return Response(
        _error_body(exc.status_code, detail, extra), status_code=exc.status_code, headers=headers
    )


def _unexpected_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """Log the traceback server-side; the client gets no internals, only the request id."""
    request_id = request.scope.get("state", {}).get("request_id")
    log.exception("unhandled error", extra={"request_id": request_id, "route": request.url.path})
    return Response(
        _error_body(500, "Internal server error", {"request_id": request_id}), status_code=500
    )
