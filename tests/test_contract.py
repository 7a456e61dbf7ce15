"""The contract is readable by tools: names, descriptions, examples, one error shape.

These run on the committed ``openapi/openapi.json`` (which ``test_openapi`` keeps equal
to what the app serves), so a new field without a description, an operation without an
example or an error answered in another shape fails here, on the branch that adds it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.api import examples
from service.api.openapi import CONTRACT_PATH, parameter_example
from service.runtime.errors import ErrorBody

METHODS = {"get", "put", "post", "delete", "patch"}


@pytest.fixture(scope="module")
def contract() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(CONTRACT_PATH.read_text(encoding="utf-8"))
    return document


def operations(contract: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in contract["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield path, method, operation


def test_every_property_of_every_schema_is_described(contract: dict[str, Any]) -> None:
    undescribed = [
        f"{name}.{prop}"
        for name, schema in contract["components"]["schemas"].items()
        for prop, spec in schema.get("properties", {}).items()
        if not str(spec.get("description", "")).strip()
    ]
    assert not undescribed, (
        "describe these fields on the struct with "
        f"Annotated[T, msgspec.Meta(description=...)]: {undescribed}"
    )


def test_every_schema_and_parameter_is_described(contract: dict[str, Any]) -> None:
    for name, schema in contract["components"]["schemas"].items():
        if schema.get("type") == "object":
            assert schema.get("description"), f"schema {name} needs a docstring"
    for path, method, operation in operations(contract):
        assert operation.get("summary"), f"{method} {path}"
        assert operation.get("description"), f"{method} {path}"
        for parameter in operation.get("parameters", []):
            assert parameter.get("description"), f"{method} {path} {parameter['name']}"


def test_operation_ids_are_readable_and_unique(contract: dict[str, Any]) -> None:
    ids = [op["operationId"] for _, _, op in operations(contract)]
    assert len(ids) == len(set(ids))
    for operation_id in ids:
        assert re.fullmatch(r"[a-z][a-zA-Z]*", operation_id), operation_id
        assert not operation_id.startswith(("V1", "v1")), operation_id
    assert {
        "recommend", "estimate", "listProviders", "listInstanceTypes", "listAccelerators",
        "listModels", "reloadCatalogs", "healthz", "readyz",
    } <= set(ids)  # fmt: skip


def test_every_operation_has_an_example_request(contract: dict[str, Any]) -> None:
    for path, method, operation in operations(contract):
        (sample,) = operation["x-codeSamples"]
        assert sample["source"].startswith("curl "), f"{method} {path}"
        assert "{" not in sample["source"].split("http://")[-1], f"unfilled path in {sample}"
        for parameter in operation.get("parameters", []):
            assert parameter_example(parameter) is not None, (
                f"{method} {path} {parameter['name']} has no example"
            )
        body = operation.get("requestBody")
        if body is not None:
            assert body["content"]["application/json"].get("examples"), f"{method} {path}"


@pytest.mark.parametrize("path", ["/v1/recommend", "/v1/estimate"])
def test_body_examples_cover_qlora_pretraining_and_serving(
    contract: dict[str, Any], path: str
) -> None:
    content = contract["paths"][path]["post"]["requestBody"]["content"]["application/json"]
    found = {name: example["value"]["workload"] for name, example in content["examples"].items()}
    assert found["qlora"]["kind"] == "finetune"
    assert found["qlora"]["method"] == "qlora"
    assert found["pretrain"]["kind"] == "pretrain"
    assert found["serving"]["kind"] == "inference"
    assert all(example["summary"] for example in content["examples"].values())


@pytest.mark.parametrize(
    ("path", "cases"), [("/v1/recommend", examples.RECOMMEND), ("/v1/estimate", examples.ESTIMATE)]
)
def test_every_body_example_is_answered(
    client: TestClient[Litestar], path: str, cases: dict[str, examples.Example]
) -> None:
    for name, (_summary, body) in cases.items():
        response = client.post(path, json=body)
        assert response.status_code == 200, (name, response.text)
        if path == "/v1/recommend":
            assert response.json()["options"], f"example {name} finds no option"


def test_every_error_refers_to_the_one_error_body(contract: dict[str, Any]) -> None:
    ref = "#/components/schemas/ErrorBody"
    for path, method, operation in operations(contract):
        for status, response in operation["responses"].items():
            if int(status) < 400:
                continue
            schema = response["content"]["application/json"]["schema"]
            refs = [schema.get("$ref")] + [s.get("$ref") for s in schema.get("anyOf", [])]
            assert ref in refs, f"{method} {path} {status}: {schema}"


def test_fields_always_present_are_required(contract: dict[str, Any]) -> None:
    schemas = contract["components"]["schemas"]
    for name in ("Option", "RecommendResponse", "ProviderInfo", "EstimateResponse",
                 "LivePriceState", "InstanceTypeItem", "ModelInfo", "Readiness"):  # fmt: skip
        schema = schemas[name]
        assert sorted(schema["required"]) == sorted(schema["properties"]), name
    # Error bodies leave empty details out: those are not required.
    assert sorted(schemas["ErrorBody"]["required"]) == ["detail", "status_code"]
    # Request bodies: only what has no default.
    assert schemas["RecommendRequest"]["required"] == ["workload"]


def test_every_reference_resolves(contract: dict[str, Any]) -> None:
    text = json.dumps(contract)
    names = set(contract["components"]["schemas"])
    for target in re.findall(r'"\$ref": "#/components/schemas/([^"]+)"', text):
        assert target in names, target


ERRORS = [
    ("post", "/v1/estimate", {"json": {"workload": {"kind": "finetune", "model": "nope"}}}, 400),
    ("post", "/v1/estimate", {"content": b"x=1", "headers": {"content-type": "text/plain"}}, 415),
    ("post", "/v1/estimate", {"content": b"{", "headers": {"content-type": "application/json"}},
     400),
    ("post", "/v1/recommend", {"json": {"workload": {"kind": "nope"}}}, 400),
    ("post", "/v1/recommend", {"json": {"workload": {"kind": "finetune", "model": "qwen2.5-7b"},
                                        "constraints": {"billing": ["spot"],
                                                        "interruptible": False}}}, 422),
    ("get", "/v1/providers/alibaba/instance-types?limit=0", {}, 400),
    ("get", "/v1/providers/alibaba/instance-types?accelerator=Z9", {}, 400),
    ("get", "/v1/providers/nope/instance-types", {}, 404),
    ("post", "/v1/admin/reload", {}, 404),  # no key configured: as if absent
    ("get", "/v1/nothing-here", {}, 404),
    ("delete", "/v1/models", {}, 405),
    ("get", "/v1/recommend", {}, 405),
]  # fmt: skip


@pytest.mark.parametrize(("method", "path", "kwargs", "status"), ERRORS)
def test_every_error_body_is_an_error_body(
    client: TestClient[Litestar], method: str, path: str, kwargs: dict[str, Any], status: int
) -> None:
    response = client.request(method.upper(), path, **kwargs)
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) <= {"status_code", "detail", "extra"}
    decoded = msgspec.convert(body, ErrorBody, strict=True)
    assert decoded.status_code == status
    assert decoded.detail
    if isinstance(decoded.extra, list):
        for item in body["extra"]:
            assert set(item) <= {"key", "message", "source", "suggestions"}


def test_the_docs_need_no_cdn(client: TestClient[Litestar]) -> None:
    """/schema serves the JSON document only; litestar's UIs (Swagger, ReDoc, Scalar,
    RapiDoc, Elements) load their scripts from public CDNs and are not served."""
    assert client.get("/schema").json()["openapi"].startswith("3.")
    for ui in ("swagger", "redoc", "elements", "rapidoc", "scalar", "openapi.yaml"):
        response = client.get(f"/schema/{ui}")
        assert response.status_code == 404
        assert msgspec.convert(response.json(), ErrorBody).detail.startswith("no such document")
    for page in ("/", "/static/app.js", "/static/app.css"):
        text = client.get(page).text.replace('"http://www.w3.org/2000/svg"', "")  # a name
        assert not re.search(r"https?://", text), f"{page} refers to an external resource"
