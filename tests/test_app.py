"""The HTTP foundation: health, readiness, routing errors, providers, plugin loading."""

from __future__ import annotations

import gc
from collections.abc import Callable

from litestar import Litestar
from litestar.testing import TestClient

from service.runtime.collector import YOUNG_THRESHOLD
from tests.conftest import BUILTIN_PROVIDERS

MakeClient = Callable[..., TestClient[Litestar]]


def test_healthz_is_200(client: TestClient[Litestar]) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_ready_without_redis(client: TestClient[Litestar]) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ready"
    assert body["redis"] == "not_configured"
    assert body["providers"] == len(BUILTIN_PROVIDERS)
    assert len(body["catalog_fingerprint"]) == 16


def test_unknown_route_is_404_json(client: TestClient[Litestar]) -> None:
    response = client.get("/v1/nope")
    assert response.status_code == 404
    assert response.json()["status_code"] == 404


def test_wrong_method_is_405(client: TestClient[Litestar]) -> None:
    response = client.delete("/healthz")
    assert response.status_code == 405


def test_malformed_json_is_400(client: TestClient[Litestar]) -> None:
    response = client.post(
        "/v1/estimate", content=b'{"workload": ', headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert "malformed" in response.json()["detail"].lower()


def test_request_id_is_echoed_or_generated(client: TestClient[Litestar]) -> None:
    echoed = client.get("/healthz", headers={"X-Request-ID": "abc-123"})
    assert echoed.headers["x-request-id"] == "abc-123"
    generated = client.get("/healthz", headers={"X-Request-ID": "bad id with spaces"})
    assert generated.headers["x-request-id"] != "bad id with spaces"
    assert len(generated.headers["x-request-id"]) == 32


def test_providers_lists_the_builtin_clouds(client: TestClient[Litestar]) -> None:
    body = client.get("/v1/providers").json()
    loaded = {p["name"]: p for p in body if p["status"] == "loaded"}
    assert set(loaded) == set(BUILTIN_PROVIDERS)
    for info in loaded.values():
        assert info["instance_types"] > 0
        assert info["regions"], info["name"]
        assert info["currency"] == "CNY"
        assert info["as_of"]
    excluded = {p["name"] for p in body if p["status"] == "excluded"}
    assert "example" in excluded  # installed in the test env, not in the allow-list


def test_third_party_plugin_loads_through_its_entry_point(make_client: MakeClient) -> None:
    client = make_client(plugins=(*BUILTIN_PROVIDERS, "example"))
    body = {p["name"]: p for p in client.get("/v1/providers").json()}
    assert body["example"]["status"] == "loaded"
    assert body["example"]["instance_types"] == 1
    assert body["example"]["display_name"].startswith("Example reseller")


def test_allow_list_excludes_a_plugin(make_client: MakeClient) -> None:
    client = make_client(plugins=("tencent",))
    body = {p["name"]: p["status"] for p in client.get("/v1/providers").json()}
    assert body["tencent"] == "loaded"
    assert body["example"] == "excluded"
    assert body["alibaba"] == "excluded"


def test_broken_plugin_is_listed_as_failed_and_the_rest_serve(make_client: MakeClient) -> None:
    client = make_client(plugins=(*BUILTIN_PROVIDERS, "example-broken"))
    body = {p["name"]: p for p in client.get("/v1/providers").json()}
    assert body["example-broken"]["status"] == "failed"
    assert "import failed on purpose" in body["example-broken"]["error"]
    assert all(body[name]["status"] == "loaded" for name in BUILTIN_PROVIDERS)
    assert client.get("/readyz").status_code == 200


def test_a_started_worker_collects_its_young_generation_less_often(
    make_client: MakeClient,
) -> None:
    """Serving raises only the young generation's threshold (service.runtime.collector);
    the older generations keep CPython's."""
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        make_client()
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    finally:
        gc.set_threshold(*saved)
