"""litestar's per-route Prometheus series, counted by ``service.runtime.request_metrics``:
the names, labels and values the dashboard and alerts query."""

from __future__ import annotations

from collections.abc import Callable

from litestar import Litestar
from litestar.testing import TestClient

from tests.test_quality_metrics import samples

MakeClient = Callable[..., TestClient[Litestar]]
QLORA = {"workload": {"kind": "finetune", "model": "qwen2.5-7b", "method": "qlora"}}


def _labels(method: str, path: str, status: str) -> tuple[tuple[str, str], ...]:
    return tuple(
        sorted(
            {"app_name": "suanli", "method": method, "path": path, "status_code": status}.items()
        )
    )


def test_requests_are_counted_per_route_template_method_and_status(
    make_client: MakeClient,
) -> None:
    client = make_client()
    before = samples(client, "litestar_requests_total")
    client.get("/healthz")
    client.post("/v1/recommend", json=QLORA)
    client.post("/v1/recommend", json=QLORA)
    client.post("/v1/recommend", json={"workload": {"kind": "nope"}})
    client.post("/v1/admin/reload")  # admin disabled: the guard's 404
    client.get("/v1/offers/no-such-provider/no-such-offer")
    client.get("/no-such-route")  # unmatched: no route, not counted (as litestar's)
    after = samples(client, "litestar_requests_total")

    def delta(method: str, path: str, status: str) -> float:
        key = _labels(method, path, status)
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert delta("GET", "/healthz", "200") == 1
    assert delta("POST", "/v1/recommend", "200") == 2
    assert delta("POST", "/v1/recommend", "400") == 1
    assert delta("POST", "/v1/admin/reload", "404") == 1
    assert not any("/no-such-route" in dict(k)["path"] for k in after)
    assert not any(dict(k)["path"] == "/metrics" for k in after)  # scrapes are not counted


def test_durations_are_observed_and_nothing_stays_in_progress(make_client: MakeClient) -> None:
    client = make_client()
    client.post("/v1/recommend", json=QLORA)
    key = _labels("POST", "/v1/recommend", "200")
    counts = samples(client, "litestar_request_duration_seconds_count")
    sums = samples(client, "litestar_request_duration_seconds_sum")
    assert counts[key] >= 1
    assert 0 < sums[key] < 60 * counts[key]
    in_progress = samples(client, "litestar_requests_in_progress")
    assert in_progress[_labels("POST", "/v1/recommend", "200")] == 0
    assert samples(client, "litestar_requests_error_total").get(key, 0.0) == 0
