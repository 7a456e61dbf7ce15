"""The committed contract (openapi/openapi.json) matches what the app serves."""

from __future__ import annotations

import json

from litestar import Litestar
from litestar.testing import TestClient

from service.api.openapi import CONTRACT_PATH, render_openapi
from service.app import create_app
from service.runtime.settings import Settings


def test_committed_contract_matches_the_app() -> None:
    committed = CONTRACT_PATH.read_text(encoding="utf-8")
    assert render_openapi(create_app(Settings())) == committed, (
        "openapi/openapi.json is stale: run `make openapi`"
    )


def test_served_schema_is_the_contract(client: TestClient[Litestar]) -> None:
    served = client.get("/schema/openapi.json").json()
    assert served == json.loads(CONTRACT_PATH.read_text(encoding="utf-8"))


def test_every_operation_documents_its_errors() -> None:
    contract = json.loads(CONTRACT_PATH.read_text(encoding="utf-8"))
    for path, item in contract["paths"].items():
        for method, operation in item.items():
            codes = set(operation["responses"])
            takes_input = operation.get("parameters") or operation.get("requestBody")
            if path.startswith("/v1/") and takes_input:
                assert "400" in codes, f"{method.upper()} {path} does not document 400"


def test_every_api_route_is_in_the_contract() -> None:
    contract = json.loads(CONTRACT_PATH.read_text(encoding="utf-8"))
    operations = {(path, method) for path, item in contract["paths"].items() for method in item}
    assert {
        ("/v1/recommend", "post"),  # a raw ASGI route, documented by service.api.openapi
        ("/v1/estimate", "post"),
        ("/v1/providers", "get"),
        ("/v1/providers/{name}/instance-types", "get"),
        ("/v1/accelerators", "get"),
        ("/v1/models", "get"),
        ("/v1/admin/reload", "post"),
        ("/healthz", "get"),
        ("/readyz", "get"),
    } <= operations
    recommend = contract["paths"]["/v1/recommend"]["post"]
    assert recommend["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/RecommendRequest"
    )
    assert "X-Suanli-Cache" in recommend["responses"]["200"]["headers"]


def test_every_json_body_is_decoded_strictly(client: TestClient[Litestar]) -> None:
    """Every operation of the contract that takes a JSON body refuses an unknown field
    with a 400 naming it: a litestar handler with a ``data`` body through the strict
    guard (which it must carry), a raw ASGI route through ``decode_json``."""
    from service.api.body import strict_json_body

    app = client.app
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            if "data" in handler.parsed_fn_signature.parameters:
                assert strict_json_body in handler.resolve_guards(), handler
    contract = json.loads(CONTRACT_PATH.read_text(encoding="utf-8"))
    with_body = [
        (path, method)
        for path, item in contract["paths"].items()
        for method, operation in item.items()
        if "requestBody" in operation
    ]
    assert {("/v1/recommend", "post"), ("/v1/estimate", "post")} <= set(with_body)
    for path, method in with_body:
        workload = {"kind": "finetune", "model": "llama-2-7b"}
        response = client.request(method, path, json={"workload": workload, "wrokload": 1})
        assert response.status_code == 400, (path, response.text)
        keys = [item["key"] for item in response.json()["extra"]]
        assert keys == ["wrokload"], (path, keys)
