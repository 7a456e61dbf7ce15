"""One app for the whole hostile suite (building an app loads every catalog), plus the
assertions every error response must satisfy: one shape, a reason, no internals."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.app import create_app
from tests.conftest import app_settings

ESTIMATE_OK: dict[str, Any] = {
    "workload": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora"}
}
RECOMMEND_OK: dict[str, Any] = {
    "workload": {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 1e8},
    "top_k": 3,
}

# What must never leave the process: tracebacks, source paths, module file names.
_INTERNALS = re.compile(
    r"Traceback|File \"|/work/|/home/|/usr/|site-packages|\.py\b|line \d+, in ", re.I
)


@pytest.fixture(scope="package")
def hostile() -> Iterator[TestClient[Litestar]]:
    """A started app with the built-in providers and the default body limit (64 KiB)."""
    with TestClient(app=create_app(app_settings()), raise_server_exceptions=False) as client:
        yield client


def assert_no_internals(response: httpx.Response) -> None:
    leaked = _INTERNALS.search(response.text)
    assert leaked is None, f"response leaks internals ({leaked.group(0)!r}): {response.text}"
    for name, value in response.headers.items():
        assert _INTERNALS.search(value) is None, f"header {name} leaks internals: {value}"


def assert_error(
    response: httpx.Response,
    status: int,
    *,
    key: str | None = None,
    source: str | None = None,
    mentions: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The exact status, the one error shape, and a body that says which field and why.

    ``key``: the field the error must name (an ``extra`` item's ``key``); ``mentions``:
    words (case-insensitive) the detail or messages must contain.
    """
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json"), response.headers
    assert_no_internals(response)
    body: dict[str, Any] = response.json()
    assert body["status_code"] == status, body
    assert isinstance(body["detail"], str), body
    assert body["detail"], body
    extra = body.get("extra")
    if key is not None:
        assert isinstance(extra, list), body
        keys = [item["key"] for item in extra]
        assert key in keys, f"expected an error naming {key!r}, got {keys}: {body}"
        for item in extra:
            assert isinstance(item["message"], str), item
            assert item["message"], item
            assert item.get("source") in ("body", "query", "path", "header", "cookie"), item
        if source is not None:
            item = next(i for i in extra if i["key"] == key)
            assert item["source"] == source, item
    text = response.text.lower()
    for word in mentions:
        assert word.lower() in text, f"expected {word!r} in the error: {response.text}"
    return body


def error_item(body: dict[str, Any], key: str) -> dict[str, Any]:
    item: dict[str, Any] = next(i for i in body["extra"] if i["key"] == key)
    return item
