"""Reading answers of ``POST /v1/recommend`` in tests: one request helper and the
readers of what the reasons say, so that a test module states only its cases."""

from __future__ import annotations

import re
from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

from service.catalog.accelerators import AcceleratorRegistry, builtin_accelerators
from service.catalog.models import AcceleratorSpec


def recommend(client: TestClient[Litestar], body: dict[str, Any], lang: str | None = None) -> Any:
    """The answer to ``body`` (in ``lang`` when given), which must be a 200."""
    response = client.post("/v1/recommend", json=body if lang is None else {**body, "lang": lang})
    assert response.status_code == 200, response.text
    return response.json()


def assumed(option: dict[str, Any], pattern: str) -> int | None:
    """The integer the first reason matching ``pattern`` states in its first group (the
    batch or concurrency an answer assumed), or ``None`` when no reason says it."""
    for reason in option["reasons"]:
        found = re.search(pattern, reason)
        if found:
            return int(found.group(1))
    return None


def builtin_spec(name: str) -> AcceleratorSpec:
    """The built-in registry's spec of accelerator ``name`` (an alias resolves too)."""
    spec = AcceleratorRegistry(builtin_accelerators()).resolve(name)
    assert spec is not None, name
    return spec
