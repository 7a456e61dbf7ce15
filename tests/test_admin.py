"""Admin routes: closed without a key, bearer-token protected with one, and the key
never leaks into a response or a log line."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from litestar import Litestar
from litestar.testing import TestClient

MakeClient = Callable[..., TestClient[Litestar]]
KEY = "s3cr3t-admin-key-0123456789abcdef"
RELOAD = "/v1/admin/reload"


def test_without_a_configured_key_admin_routes_do_not_exist(make_client: MakeClient) -> None:
    client = make_client(api_key=None)
    for headers in ({}, {"Authorization": f"Bearer {KEY}"}, {"Authorization": "Bearer "}):
        response = client.post(RELOAD, headers=headers)
        assert response.status_code == 404, response.text
        assert response.json()["status_code"] == 404


def test_empty_configured_key_keeps_admin_closed(make_client: MakeClient) -> None:
    client = make_client(api_key="")
    assert client.post(RELOAD, headers={"Authorization": "Bearer "}).status_code == 404
    assert client.post(RELOAD, headers={"Authorization": "Bearer"}).status_code == 404


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Bearer",
        "Bearer ",
        "Bearer wrong-key",
        f"Bearer {KEY}x",
        f"Bearer {KEY[:-1]}",
        f"Basic {KEY}",
        KEY,
        f"Token {KEY}",
        f"Bearer {KEY.upper()}",
        "Bearer " + "x" * 10_000,
    ],
)
def test_missing_or_wrong_key_is_401(make_client: MakeClient, authorization: str | None) -> None:
    client = make_client(api_key=KEY)
    headers = {} if authorization is None else {"Authorization": authorization}
    response = client.post(RELOAD, headers=headers)
    assert response.status_code == 401, response.text
    assert response.headers["www-authenticate"].startswith("Bearer")
    body = response.json()
    assert body["status_code"] == 401
    assert "Authorization: Bearer" in body["detail"]
    assert KEY not in response.text
    assert KEY not in str(response.headers)


def test_non_latin1_authorization_header_is_401(make_client: MakeClient) -> None:
    client = make_client(api_key=KEY)
    response = client.post(
        RELOAD,
        headers=[(b"authorization", "Bearer ключ".encode())],
    )
    assert response.status_code == 401


def test_right_key_reloads(make_client: MakeClient) -> None:
    client = make_client(api_key=KEY)
    before = client.get("/readyz").json()["catalog_fingerprint"]
    response = client.post(RELOAD, headers={"Authorization": f"Bearer {KEY}"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "reloaded"
    assert body["previous_fingerprint"] == before
    assert body["fingerprint"] == before  # same data, same fingerprint
    assert sorted(body["providers"]) == ["alibaba", "huawei", "tencent", "volcengine"]
    assert body["offers"] > 0
    assert body["errors"] == []
    assert KEY not in response.text


def test_bearer_scheme_is_case_insensitive(make_client: MakeClient) -> None:
    client = make_client(api_key=KEY)
    response = client.post(RELOAD, headers={"Authorization": f"bearer {KEY}"})
    assert response.status_code == 200


def test_reload_only_accepts_post(make_client: MakeClient) -> None:
    client = make_client(api_key=KEY)
    response = client.get(RELOAD, headers={"Authorization": f"Bearer {KEY}"})
    assert response.status_code == 405


def test_admin_is_documented_with_its_statuses(make_client: MakeClient) -> None:
    client = make_client(api_key=KEY)
    spec = client.get("/schema/openapi.json").json()
    responses = spec["paths"][RELOAD]["post"]["responses"]
    assert {"200", "401", "404"} <= set(responses), sorted(responses)


def test_key_never_appears_in_logs(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client = make_client(api_key=KEY)
    client.post(RELOAD, headers={"Authorization": f"Bearer {KEY}"})
    client.post(RELOAD, headers={"Authorization": f"Bearer {KEY}-wrong"})
    client.post(RELOAD, headers={"Authorization": f"Bearer {KEY[:8]}"})
    client.get("/readyz")
    client.get("/v1/providers")
    assert caplog.records, "expected access-log lines"
    access = [r for r in caplog.records if r.name == "suanli.access"]
    assert {getattr(r, "status", None) for r in access} >= {200, 401}
    for record in caplog.records:
        rendered = record.getMessage() + " " + repr(vars(record))
        assert KEY not in rendered, f"API key leaked into log {record.name}: {rendered}"
        assert KEY[:8] not in rendered, f"API key prefix leaked into log {record.name}"


def test_settings_repr_masks_the_key(make_client: MakeClient) -> None:
    client = make_client(api_key=KEY)
    from service.api.state import STATE_KEY

    settings = client.app.state[STATE_KEY].settings
    assert KEY not in repr(settings)
    assert KEY not in str(settings)
