"""Shared fixtures: real apps, real Redis servers, real plugin loading.

Redis: ``SUANLI_TEST_REDIS_URL`` when set, else a private ``redis-server`` started on a
free port. When neither is possible a Redis test skips with the reason, unless
``SUANLI_REQUIRE_REDIS=1`` (set by ``.ci/run``), which turns that skip into a failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from litestar import Litestar
from litestar.testing import TestClient

from service.app import create_app
from service.catalog.aggregate import CatalogService, CatalogSnapshot
from service.hooks.loader import get_plugin_manager
from service.hooks.registries import default_accelerator_registry, default_model_registry
from service.planning.memo import PlanCache
from service.planning.recommend import PlanContext
from service.runtime.settings import Settings

# The example third-party plugin (examples/provider-example) is pip-installed into
# .test-plugins/ by `make test`: on sys.path for the tests only, never for `make run`.
TEST_PLUGINS = Path(__file__).resolve().parent.parent / ".test-plugins"
if TEST_PLUGINS.is_dir() and str(TEST_PLUGINS) not in sys.path:
    sys.path.insert(0, str(TEST_PLUGINS))  # before any plugin scan

BUILTIN_PROVIDERS = ("alibaba", "tencent", "huawei", "volcengine")


def builtin_plan_context(
    snapshot: CatalogSnapshot | None = None, memo: PlanCache | None = None
) -> PlanContext:
    """The planner's context over the four built-in providers, loaded through the real
    plugin path (or over ``snapshot``, for tests that plan on a synthetic catalog)."""
    if snapshot is None:
        pm = get_plugin_manager(allow=BUILTIN_PROVIDERS)
        snapshot = CatalogService(pm.hook.suanli_register_providers).load()
    return PlanContext(
        snapshot=snapshot,
        accelerators=default_accelerator_registry(BUILTIN_PROVIDERS),
        models=default_model_registry(),
        memo=memo,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def redis_unavailable(reason: str) -> None:
    """Skip, or fail when the run requires Redis (CI)."""
    if os.environ.get("SUANLI_REQUIRE_REDIS") == "1":
        pytest.fail(f"Redis required (SUANLI_REQUIRE_REDIS=1) but unavailable: {reason}")
    pytest.skip(f"no Redis for this test: {reason}")


class RedisServer:
    """A private ``redis-server`` process that a test may stop and start again."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            redis_unavailable("redis-server binary not found on PATH")
        self.binary = binary or "redis-server"
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="suanli-redis-")
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--dir", self.dir,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2)
        for _ in range(100):
            try:
                if client.ping():
                    return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server on port {self.port} did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A private Redis this test may kill and restart."""
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.dir, ignore_errors=True)


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A Redis URL with a clean database: the CI one, or a private server."""
    url = os.environ.get("SUANLI_TEST_REDIS_URL")
    if url:
        client = redis.Redis.from_url(url, socket_connect_timeout=1)
        try:
            client.flushdb()
        except redis.RedisError as exc:
            redis_unavailable(f"SUANLI_TEST_REDIS_URL={url} does not answer: {exc}")
        yield url
        client.flushdb()
        return
    server = RedisServer()
    server.start()
    try:
        yield server.url
    finally:
        server.stop()
        shutil.rmtree(server.dir, ignore_errors=True)


def app_settings(**overrides: object) -> Settings:
    """Settings for tests: only the built-in providers, no rate limit unless asked."""
    base: dict[str, object] = {"plugins": BUILTIN_PROVIDERS, "rate_limit_per_minute": 0}
    base.update(overrides)
    return Settings(**base)  # type: ignore[arg-type]


@contextlib.contextmanager
def started_clients() -> Iterator[Callable[[Litestar], TestClient[Litestar]]]:
    """``start(app)``: a started test client over ``app`` (lifespan run, catalog loaded);
    every client started is closed when the block ends, whatever the test did."""
    clients: list[TestClient[Litestar]] = []

    def start(app: Litestar) -> TestClient[Litestar]:
        client = TestClient(app=app)
        client.__enter__()
        clients.append(client)
        return client

    try:
        yield start
    finally:
        for client in clients:
            client.__exit__(None, None, None)


@pytest.fixture
def make_client() -> Iterator[Callable[..., TestClient[Litestar]]]:
    """Factory of started test clients over real apps; all are closed at teardown."""
    with started_clients() as start:
        yield lambda **settings: start(create_app(app_settings(**settings)))


@pytest.fixture
def client(make_client: Callable[..., TestClient[Litestar]]) -> TestClient[Litestar]:
    return make_client()


REPO_ROOT = Path(__file__).resolve().parent.parent
