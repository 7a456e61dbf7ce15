"""Fault isolation: provider plugins that raise, hang or return malformed rows, failed
reloads, and a real Redis that is unreachable at startup, killed mid-load or slow.

Every scenario asserts the same promise: the service keeps answering correct 200s from
what still works, says what is missing (``GET /v1/providers``, ``warnings``, metrics,
``/readyz``) and recovers by itself.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import redis
from litestar import Litestar
from litestar.testing import TestClient

from service.app import create_app
from tests.conftest import BUILTIN_PROVIDERS, RedisServer, app_settings
from tests.fault_plugins import (
    FakeProvider,
    FlakyProvider,
    HangingProvider,
    NegativePriceProvider,
    NegativeSpecsProvider,
    NonFiniteSpecsProvider,
    ProviderPlugin,
    RaisingProvider,
    RaisingRegistrationPlugin,
    WrongTypesProvider,
    plugin_manager,
)

MakeClient = Callable[..., TestClient[Litestar]]
KEY = "fault-test-admin-key"
RECOMMEND = {
    "workload": {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 1e8},
    "top_k": 5,
    "lang": "en",
}


@pytest.fixture
def fault_client() -> Iterator[Callable[..., TestClient[Litestar]]]:
    """Start apps with the built-in providers plus in-process fault plugins."""
    clients: list[TestClient[Litestar]] = []
    hanging: list[HangingProvider] = []

    def factory(*plugins: object, **settings: Any) -> TestClient[Litestar]:
        app_config = app_settings(**settings)
        for plugin in plugins:
            hanging.extend(
                p for p in getattr(plugin, "providers", ()) if isinstance(p, HangingProvider)
            )
        app = create_app(app_config, plugin_manager=plugin_manager(app_config, *plugins))
        client = TestClient(app=app, raise_server_exceptions=False)
        client.__enter__()
        clients.append(client)
        return client

    yield factory
    for provider in hanging:
        provider.release.set()
    for client in clients:
        client.__exit__(None, None, None)


def _providers(client: TestClient[Litestar]) -> dict[str, dict[str, Any]]:
    response = client.get("/v1/providers")
    assert response.status_code == 200
    return {p["name"]: p for p in response.json()}


def _failures_metric(client: TestClient[Litestar], provider: str) -> float:
    text = client.get("/metrics").text
    match = re.search(
        rf'^suanli_provider_failures_total\{{provider="{re.escape(provider)}"\}} (\S+)$',
        text,
        re.M,
    )
    return float(match.group(1)) if match else 0.0


def _assert_builtins_answer(client: TestClient[Litestar]) -> dict[str, Any]:
    infos = _providers(client)
    for name in BUILTIN_PROVIDERS:
        assert infos[name]["status"] == "loaded", infos[name]
    response = client.post("/v1/recommend", json=RECOMMEND)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["options"], body["warnings"]
    assert {o["provider"] for o in body["options"]} <= set(BUILTIN_PROVIDERS)
    assert client.get("/readyz").status_code == 200
    return body


# --- provider plugins ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider_cls", "error_part"),
    [
        (RaisingProvider, "exploded on purpose"),
        (WrongTypesProvider, "Expected `int | null`, got `str`"),
        (NegativeSpecsProvider, "vcpus"),
        (NonFiniteSpecsProvider, "memory_gib"),
        (NegativePriceProvider, "price_per_hour"),
    ],
)
def test_faulty_provider_is_dropped_with_warning_and_metric(
    fault_client: MakeClient, provider_cls: type[FakeProvider], error_part: str
) -> None:
    name = f"faulty-{provider_cls.__name__.lower()}"
    before = 0.0
    client = fault_client(ProviderPlugin(provider_cls(name)))
    info = _providers(client)[name]
    assert info["status"] == "failed", info
    assert error_part in (info["error"] or ""), info
    assert info["instance_types"] == 0
    assert _failures_metric(client, name) >= before + 1
    body = _assert_builtins_answer(client)
    assert any(name in w for w in body["warnings"]), body["warnings"]
    assert all(o["provider"] != name for o in body["options"])
    assert all((o["price_per_hour"] or 0) >= 0 for o in body["options"])


def test_hanging_provider_times_out_and_the_others_answer(fault_client: MakeClient) -> None:
    started = time.monotonic()
    client = fault_client(
        ProviderPlugin(HangingProvider("hanging", hang_s=30)), provider_timeout_s=0.5
    )
    assert time.monotonic() - started < 10, "startup waited for the hung provider"
    info = _providers(client)["hanging"]
    assert info["status"] == "failed"
    assert "timed out after 0.5s" in info["error"]
    body = _assert_builtins_answer(client)
    assert any("hanging" in w and "timed out" in w for w in body["warnings"])
    assert _failures_metric(client, "hanging") >= 1


def test_many_hanging_providers_cannot_starve_the_healthy_ones(fault_client: MakeClient) -> None:
    """More hung providers than loader threads: the healthy providers must still load,
    and the whole load stays bounded by about one timeout, not one per provider."""
    hung = [HangingProvider(f"hanging-{i}", hang_s=30) for i in range(6)]
    started = time.monotonic()
    client = fault_client(ProviderPlugin(*hung), provider_timeout_s=0.5)
    elapsed = time.monotonic() - started
    infos = _providers(client)
    assert {infos[p.name]["status"] for p in hung} == {"failed"}
    _assert_builtins_answer(client)
    assert elapsed < 3.0, f"catalog load took {elapsed:.1f}s for a 0.5s provider timeout"


def test_a_plugin_whose_registration_hook_raises_does_not_hide_the_others(
    fault_client: MakeClient,
) -> None:
    client = fault_client(RaisingRegistrationPlugin())
    _assert_builtins_answer(client)


def test_failed_reload_keeps_the_previous_catalog(fault_client: MakeClient) -> None:
    """Only one provider, and it fails on reload: the service keeps serving the catalog
    it had (never an empty one) and says so."""
    flaky = FlakyProvider("flaky", good_calls=1)
    client = fault_client(ProviderPlugin(flaky), plugins=(), api_key=KEY)
    assert _providers(client)["flaky"]["status"] == "loaded"
    before = client.get("/readyz").json()
    assert before["providers"] == 1

    response = client.post("/v1/admin/reload", headers={"Authorization": f"Bearer {KEY}"})
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["status"] == "kept_previous"
    assert result["fingerprint"] == before["catalog_fingerprint"]
    assert result["providers"] == ["flaky"]
    assert result["offers"] > 0
    assert any("flaky" in e and "went away" in e for e in result["errors"]), result

    assert flaky.calls == 2
    assert _providers(client)["flaky"]["status"] == "loaded"
    after = client.get("/readyz")
    assert after.status_code == 200
    assert after.json()["catalog_fingerprint"] == before["catalog_fingerprint"]
    options = client.post("/v1/recommend", json=RECOMMEND).json()["options"]
    assert options
    assert {o["provider"] for o in options} == {"flaky"}


def test_reload_where_one_provider_fails_keeps_the_rest(fault_client: MakeClient) -> None:
    flaky = FlakyProvider("flaky", good_calls=1)
    client = fault_client(ProviderPlugin(flaky), api_key=KEY)
    response = client.post("/v1/admin/reload", headers={"Authorization": f"Bearer {KEY}"})
    assert response.status_code == 200
    result = response.json()
    assert set(BUILTIN_PROVIDERS) <= set(result["providers"])
    assert any("flaky" in e for e in result["errors"]), result
    _assert_builtins_answer(client)


def test_reload_recovers_a_provider_that_failed_at_startup(fault_client: MakeClient) -> None:
    class RecoveringProvider(FakeProvider):
        def instance_types(self) -> Any:
            self.calls += 1
            if self.calls == 1:
                raise RuntimeError("first load fails on purpose")
            return (self.row,)

    provider = RecoveringProvider("recovering")
    client = fault_client(ProviderPlugin(provider), api_key=KEY)
    assert _providers(client)["recovering"]["status"] == "failed"
    response = client.post("/v1/admin/reload", headers={"Authorization": f"Bearer {KEY}"})
    assert response.json()["status"] == "reloaded"
    assert _providers(client)["recovering"]["status"] == "loaded"


# --- Redis ---------------------------------------------------------------------------------


def _recommend_cache(client: TestClient[Litestar], body: dict[str, Any]) -> str:
    response = client.post("/v1/recommend", json=body)
    assert response.status_code == 200, response.text
    return response.headers["x-suanli-cache"]


def _until(predicate: Callable[[], bool], timeout_s: float, step_s: float = 0.25) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step_s)
    return predicate()


@pytest.mark.redis
def test_redis_unreachable_at_startup_then_recovers(
    redis_server: RedisServer, make_client: MakeClient
) -> None:
    redis_server.stop()
    started = time.monotonic()
    client = make_client(redis_url=redis_server.url, redis_timeout_s=0.2)
    assert time.monotonic() - started < 10

    assert client.get("/healthz").status_code == 200
    ready = client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["redis"] == "down"
    assert ready.json()["reasons"] == ["shared store unreachable"]  # no host or port
    assert client.get("/v1/providers").status_code == 200
    assert _recommend_cache(client, RECOMMEND) == "miss"
    assert _recommend_cache(client, RECOMMEND) in ("miss", "hit")  # memory only if any

    redis_server.start()
    assert _until(lambda: client.get("/readyz").status_code == 200, 10)
    body = {**RECOMMEND, "top_k": 4}
    # The breaker of the response cache retries within its longest pause (8 s).
    assert _until(lambda: _recommend_cache(client, body) == "hit", 12, step_s=0.5)
    keys = redis.Redis(port=redis_server.port).keys("suanli_recommend:*")
    assert keys, "the answer was not written to Redis after recovery"


@pytest.mark.redis
def test_redis_killed_during_a_burst_all_answers_200(
    redis_server: RedisServer, make_client: MakeClient
) -> None:
    client = make_client(redis_url=redis_server.url, redis_timeout_s=0.2)
    bodies = [{**RECOMMEND, "top_k": k} for k in range(1, 9)]
    statuses: list[int] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        response = client.post("/v1/recommend", json=bodies[i % len(bodies)])
        with lock:
            statuses.append(response.status_code)

    with ThreadPoolExecutor(max_workers=8) as pool:
        futures = [pool.submit(one, i) for i in range(40)]
        time.sleep(0.05)
        redis_server.stop()
        futures += [pool.submit(one, i) for i in range(40, 80)]
        for future in futures:
            future.result(timeout=60)
    assert len(statuses) == 80
    assert set(statuses) == {200}, sorted(set(statuses))
    assert client.get("/readyz").status_code == 503
    redis_server.start()
    assert _until(lambda: client.get("/readyz").status_code == 200, 10)


@pytest.mark.redis
def test_slow_redis_keeps_answers_fast(redis_server: RedisServer, make_client: MakeClient) -> None:
    """A frozen Redis: the socket timeout turns every call into a fast miss.

    ``CLIENT PAUSE <ms> ALL`` freezes every client's commands like ``DEBUG SLEEP`` does,
    but works on a stock Redis 7, where ``DEBUG`` is disabled (``enable-debug-command``).
    """
    timeout_s = 0.2
    frozen_s = 4.0
    client = make_client(redis_url=redis_server.url, redis_timeout_s=timeout_s)
    assert _recommend_cache(client, RECOMMEND) == "miss"
    assert _recommend_cache(client, RECOMMEND) == "hit"

    blocker = redis.Redis(port=redis_server.port)
    frozen_at = time.monotonic()
    blocker.execute_command("CLIENT", "PAUSE", str(int(frozen_s * 1000)), "ALL")  # type: ignore[no-untyped-call]
    try:
        ready = client.get("/readyz")
        assert ready.status_code == 503, ready.text
        assert ready.json()["redis"] == "down"
        durations = []
        for k in range(1, 7):
            started = time.monotonic()
            response = client.post("/v1/recommend", json={**RECOMMEND, "top_k": k})
            durations.append(time.monotonic() - started)
            assert response.status_code == 200, response.text
            assert response.headers["x-suanli-cache"] == "miss"
        assert time.monotonic() - frozen_at < frozen_s, "Redis woke up before the checks ended"
        # A request pays at most the socket timeout on get and set; then the breaker opens.
        assert max(durations) < 2 * timeout_s + 1.0, durations
    finally:
        blocker.close()
    assert _until(lambda: client.get("/readyz").status_code == 200, 10)
    assert _until(lambda: _recommend_cache(client, RECOMMEND) == "hit", 12, step_s=0.5)


@pytest.mark.redis
def test_admin_reload_with_redis_down_still_reloads(
    redis_server: RedisServer, make_client: MakeClient
) -> None:
    """A dead Redis must not turn a successful local reload into a 500 — and the answer
    says the other workers were not told, instead of claiming "reloaded"."""
    client = make_client(redis_url=redis_server.url, redis_timeout_s=0.2, api_key=KEY)
    redis_server.stop()
    response = client.post("/v1/admin/reload", headers={"Authorization": f"Bearer {KEY}"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "partially_applied"
    assert body["not_applied"] == [
        "other workers: the shared store is unreachable, they were not told"
    ]
