"""Hostile paths, query parameters and headers on the read routes."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.conftest import BUILTIN_PROVIDERS
from tests.hostile.conftest import RECOMMEND_OK, assert_error, assert_no_internals, error_item

TYPES = "/v1/providers/{}/instance-types"


@pytest.mark.parametrize("name", ["aws", "Alibaba", "alibaba ", "%00", "%2e%2e", "a" * 64])
def test_unknown_provider_in_path_is_404_naming_the_known_ones(
    hostile: TestClient[Litestar], name: str
) -> None:
    response = hostile.get(TYPES.format(name))
    body = assert_error(response, 404, mentions=("unknown provider",))
    for known in BUILTIN_PROVIDERS:
        assert known in body["detail"], body


def test_overlong_provider_name_is_400_naming_the_path_param(
    hostile: TestClient[Litestar],
) -> None:
    response = hostile.get(TYPES.format("a" * 65))
    assert_error(response, 400, key="name", source="path")


def test_path_traversal_is_404(hostile: TestClient[Litestar]) -> None:
    for path in ("/v1/providers/../../etc/passwd", "/v1/%2e%2e/%2e%2e/etc/passwd", "/v1//"):
        response = hostile.get(path)
        assert response.status_code == 404, (path, response.status_code)
        assert_no_internals(response)


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=-1", "limit"),
        ("limit=abc", "limit"),
        ("limit=1e3", "limit"),
        ("limit=" + "9" * 400, "limit"),
        ("offset=-5", "offset"),
        ("offset=99999999999999999999", "offset"),
        ("max_price=0", "max_price"),
        ("max_price=-1", "max_price"),
        ("max_price=nan", "max_price"),
        ("max_price=inf", "max_price"),
        ("max_price=1e308", "max_price"),
        ("min_accelerator_memory_gib=-1", "min_accelerator_memory_gib"),
        ("min_accelerators=1000000", "min_accelerators"),
        ("billing=free", "billing"),
        ("cpu_only=maybe", "cpu_only"),
        ("region=" + "r" * 65, "region"),
        ("accelerator=" + "A" * 65, "accelerator"),
    ],
)
def test_bad_query_params_are_400_naming_the_param(
    hostile: TestClient[Litestar], query: str, param: str
) -> None:
    response = hostile.get(TYPES.format("alibaba") + "?" + query)
    assert_error(response, 400, key=param, source="query")


def test_unknown_accelerator_filter_is_400_with_suggestions(
    hostile: TestClient[Litestar],
) -> None:
    response = hostile.get(TYPES.format("alibaba") + "?accelerator=A101")
    body = assert_error(response, 400, key="accelerator", source="query")
    assert error_item(body, "accelerator")["suggestions"], body


def test_repeated_scalar_query_param_is_400_or_uses_one_value(
    hostile: TestClient[Litestar],
) -> None:
    response = hostile.get(TYPES.format("alibaba") + "?limit=5&limit=abc")
    if response.status_code == 200:
        assert response.json()["limit"] in (5,), response.text
    else:
        assert_error(response, 400, key="limit", source="query")


def test_unknown_query_params_are_refused_not_ignored(hostile: TestClient[Litestar]) -> None:
    """Nothing a user sent is ignored: ``?acelerator=A100`` used to list every type."""
    response = hostile.get(TYPES.format("alibaba") + "?limit=2&frobnicate=1")
    assert_error(response, 400, key="frobnicate", source="query")


def test_unknown_route_is_404_json(hostile: TestClient[Litestar]) -> None:
    for path in ("/v2/recommend", "/v1/recommend/", "/v1/admin", "/" + "x" * 5000):
        response = hostile.get(path)
        assert response.status_code in (404, 405), (path, response.status_code)
        assert_no_internals(response)
        assert response.json()["status_code"] == response.status_code


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/recommend"),
        ("PUT", "/v1/estimate"),
        ("DELETE", "/v1/providers"),
        ("POST", "/v1/providers"),
        ("PATCH", "/healthz"),
    ],
)
def test_wrong_method_is_405_with_allow(
    hostile: TestClient[Litestar], method: str, path: str
) -> None:
    response = hostile.request(method, path, json=RECOMMEND_OK)
    assert_error(response, 405)
    assert response.headers.get("allow"), response.headers


@pytest.mark.parametrize(
    "value",
    [
        "abc\r\nSet-Cookie: pwned=1",
        "abc\nX-Evil: 1",
        "x" * 65,
        "../../etc/passwd",
        "<script>",
        "id with spaces",
        "",
        "é-unicode",
    ],
)
def test_hostile_request_id_is_replaced_not_echoed(
    hostile: TestClient[Litestar], value: str
) -> None:
    """Only ids of 1-64 safe characters are echoed; anything else gets a fresh id, so a
    client cannot inject headers or markup into responses or logs through it."""
    raw = value.encode("utf-8")
    response = hostile.get("/healthz", headers=[(b"x-request-id", raw)])
    assert response.status_code == 200
    echoed = response.headers["x-request-id"]
    assert echoed != value
    assert len(echoed) == 32
    assert all(c in "0123456789abcdef" for c in echoed), echoed
    assert "set-cookie" not in response.headers
    assert "x-evil" not in response.headers


def test_sane_request_id_is_echoed_on_errors_too(hostile: TestClient[Litestar]) -> None:
    response = hostile.post("/v1/recommend", json={}, headers={"X-Request-ID": "req-42.a:b_c"})
    assert response.status_code == 400
    assert response.headers["x-request-id"] == "req-42.a:b_c"


def test_oversized_accept_language_is_400(hostile: TestClient[Litestar]) -> None:
    response = hostile.post(
        "/v1/recommend", json=RECOMMEND_OK, headers={"Accept-Language": "en," * 200}
    )
    # an Accept-Language that cannot be read leaves the answer's default language (zh),
    # so the refusal is told in it
    assert_error(response, 400, key="accept_language", source="header", mentions=("≤ 256",))


def test_garbage_accept_language_falls_back(hostile: TestClient[Litestar]) -> None:
    response = hostile.post(
        "/v1/recommend", json=RECOMMEND_OK, headers={"Accept-Language": ";;;q=xx,,*"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["lang"] == "zh"
