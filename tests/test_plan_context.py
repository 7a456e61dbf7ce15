"""The planner's context is per app (issue 12): two apps in one process — tests, or an
embedding that serves two catalogs — each keep their own, so neither plans with the
other's snapshot nor rebuilds its context because the other answered a miss."""

from __future__ import annotations

from collections.abc import Callable

from litestar import Litestar
from litestar.testing import TestClient

from service.api.recommend import _context
from service.api.state import STATE_KEY, Suanli

BODY = {"workload": {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 1e7}}


def suanli_of(client: TestClient[Litestar]) -> Suanli:
    suanli: Suanli = client.app.state[STATE_KEY]
    return suanli


def test_two_apps_keep_their_own_planner_context(
    make_client: Callable[..., TestClient[Litestar]],
) -> None:
    one, two = suanli_of(make_client()), suanli_of(make_client())
    fresh = frozenset[str]()  # no live price stale (the route passes the same object)
    assert one.catalog.snapshot is not two.catalog.snapshot
    first = _context(one, one.catalog.snapshot, fresh)
    other = _context(two, two.catalog.snapshot, fresh)
    again = _context(one, one.catalog.snapshot, fresh)
    assert again is first  # the other app's miss did not evict it
    assert first.snapshot is one.catalog.snapshot
    assert other.snapshot is two.catalog.snapshot
    assert other.memo is two.placements
    assert first.memo is one.placements


def test_each_app_answers_from_its_own_context(
    make_client: Callable[..., TestClient[Litestar]],
) -> None:
    clients = [make_client(), make_client()]
    for client in clients + clients:
        response = client.post("/v1/recommend", json=BODY, headers={"accept-language": "en"})
        assert response.status_code == 200
    for client in clients:
        context = suanli_of(client).last_context
        assert context is not None
        assert context.snapshot is suanli_of(client).catalog.snapshot
