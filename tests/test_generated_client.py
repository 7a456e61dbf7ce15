"""A client generated from the contract by a real generator calls every operation.

``openapi-python-client`` (a dev dependency) generates a typed client from the document
the app serves; the generator must not warn (a warning means an operation or a response
it could not read, which it then leaves out). The client then calls every operation of
the contract against the real service on loopback, successes and errors: every body
must parse into the documented model (a required field missing from a real answer is a
``KeyError`` in the generated ``from_dict``), and every error into ``ErrorBody``, never
``None``. Operations added later are called too, with the examples of their parameters
(the contract test makes every parameter carry one).
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from service.api import examples
from service.api.openapi import parameter_example
from tests.served import ServedApp, served

pytestmark = pytest.mark.slow

API_KEY = "generated-client-test-key-0123456789"
PACKAGE = "suanli_client"


@pytest.fixture(scope="module")
def app() -> Iterator[ServedApp]:
    with served(SUANLI_API_KEY=API_KEY) as running:
        yield running


@pytest.fixture(scope="module")
def contract(app: ServedApp) -> dict[str, Any]:
    with urllib.request.urlopen(f"{app.url}/schema/openapi.json", timeout=10) as response:
        document: dict[str, Any] = json.loads(response.read())
    return document


@pytest.fixture(scope="module")
def client_package(
    contract: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ModuleType]:
    work = tmp_path_factory.mktemp("generated")
    spec = work / "openapi.json"
    spec.write_text(json.dumps(contract), encoding="utf-8")
    config = work / "config.yml"
    config.write_text(f"package_name_override: {PACKAGE}\npost_hooks: []\n", encoding="utf-8")
    generator = Path(sys.executable).with_name("openapi-python-client")
    result = subprocess.run(
        [str(generator), "generate", "--path", str(spec), "--meta", "none",
         "--output-path", str(work / PACKAGE), "--config", str(config)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "WARNING" not in output, f"the generator could not read part of the contract:\n{output}"
    assert "Cannot parse" not in output, output
    sys.path.insert(0, str(work))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(work))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


def operation(package: ModuleType, contract: dict[str, Any], operation_id: str) -> ModuleType:
    for item in contract["paths"].values():
        for op in item.values():
            if isinstance(op, dict) and op.get("operationId") == operation_id:
                tag = _snake(op["tags"][0]).replace("-", "_")
                return importlib.import_module(
                    f"{package.__name__}.api.{tag}.{_snake(operation_id)}"
                )
    raise AssertionError(f"no operation {operation_id}")


def models(package: ModuleType) -> ModuleType:
    return importlib.import_module(f"{package.__name__}.models")


def test_every_operation_answers_through_the_generated_client(
    app: ServedApp, contract: dict[str, Any], client_package: ModuleType
) -> None:
    m = models(client_package)
    client = client_package.Client(base_url=app.url, raise_on_unexpected_status=True)
    authed = client_package.AuthenticatedClient(base_url=app.url, token=API_KEY)
    called: set[str] = set()

    def call(operation_id: str, *args: Any, via: Any = client, **kwargs: Any) -> Any:
        called.add(operation_id)
        return operation(client_package, contract, operation_id).sync_detailed(
            *args, client=via, **kwargs
        )

    health = call("healthz")
    assert health.status_code == 200
    assert health.parsed.status == "ok"
    ready = call("readyz")
    assert ready.status_code == 200
    assert isinstance(ready.parsed, m.Readiness)
    assert ready.parsed.providers == 4

    providers = call("listProviders").parsed
    assert sorted(p.name for p in providers) == ["alibaba", "huawei", "tencent", "volcengine"]
    assert all(isinstance(p, m.ProviderInfo) for p in providers)
    page = call("listInstanceTypes", "alibaba", accelerator="A100", limit=5).parsed
    assert isinstance(page, m.InstanceTypePage)
    assert page.items
    assert all("A100" in item.accelerator.name for item in page.items)
    assert page.limit == 5
    offers = call("listOffers", accelerator=["A100"], provider=["tencent"], limit=3).parsed
    assert isinstance(offers, m.OfferPage)
    assert len(offers.items) == 3
    assert offers.total >= 3
    assert all(o.provider == "tencent" and "A100" in o.accelerator.name for o in offers.items)
    accelerators = call("listAccelerators").parsed
    assert any(a.name == "A100-80GB" for a in accelerators)
    presets = call("listModels").parsed
    assert any(p.id == "qwen2.5-7b" for p in presets)

    for name, (_summary, body) in examples.ESTIMATE.items():
        answer = call("estimate", body=m.EstimateRequest.from_dict(body))
        assert answer.status_code == 200, (name, answer.content)
        assert isinstance(answer.parsed, m.EstimateResponse)
        assert answer.parsed.memory.per_device_gib > 0
    for name, (_summary, body) in examples.RECOMMEND.items():
        answer = call("recommend", body=m.RecommendRequest.from_dict(body))
        assert answer.status_code == 200, (name, answer.content)
        assert isinstance(answer.parsed, m.RecommendResponse)
        assert answer.parsed.summary
        assert answer.parsed.options, name

    reloaded = call("reloadCatalogs", via=authed)
    assert reloaded.status_code == 200
    assert isinstance(reloaded.parsed, m.ReloadResult)
    assert reloaded.parsed.status in {"reloaded", "kept_previous"}

    # Operations this test does not know by name (added later): their parameter
    # examples must make a valid call that parses.
    for path, item in contract["paths"].items():
        for op in item.values():
            op_id = op["operationId"]
            if op_id in called or "requestBody" in op:
                continue
            kwargs = {}
            for parameter in op.get("parameters", []):
                if parameter.get("required"):
                    kwargs[_snake(parameter["name"])] = parameter_example(parameter)
            answer = call(op_id, **kwargs)
            assert answer.status_code == 200, (path, answer.content)
            assert answer.parsed is not None, path
    every = {op["operationId"] for item in contract["paths"].values() for op in item.values()}
    assert called == every


def test_every_error_parses_into_error_body(
    app: ServedApp, contract: dict[str, Any], client_package: ModuleType
) -> None:
    m = models(client_package)
    client = client_package.Client(base_url=app.url)

    def call(operation_id: str, *args: Any, **kwargs: Any) -> Any:
        module = operation(client_package, contract, operation_id)
        return module.sync_detailed(*args, client=kwargs.pop("via", client), **kwargs)

    bad = {"workload": {"kind": "finetune", "model": "qwen2.5-7", "method": "qlora"}}
    answer = call("estimate", body=m.EstimateRequest.from_dict(bad))
    assert answer.status_code == 400
    assert isinstance(answer.parsed, m.ErrorBody), answer.content
    (item,) = answer.parsed.extra
    assert isinstance(item, m.ErrorItem)
    assert item.key == "workload.model"
    assert "qwen2.5-7b" in item.suggestions

    answer = call("recommend", body=m.RecommendRequest.from_dict(bad))
    assert answer.status_code == 400
    assert isinstance(answer.parsed, m.ErrorBody)
    assert answer.parsed.extra[0].key == "workload.model"

    contradiction = {**bad, "workload": {**bad["workload"], "model": "qwen2.5-7b"},
                     "constraints": {"billing": ["spot"], "interruptible": False}}  # fmt: skip
    answer = call("recommend", body=m.RecommendRequest.from_dict(contradiction))
    assert answer.status_code == 422
    assert isinstance(answer.parsed, m.ErrorBody)

    answer = call("listInstanceTypes", "alibaba", limit=0)
    assert answer.status_code == 400
    assert isinstance(answer.parsed, m.ErrorBody)
    assert answer.parsed.extra[0].key == "limit"
    assert answer.parsed.extra[0].source == "query"

    answer = call("listInstanceTypes", "nope")
    assert answer.status_code == 404
    assert isinstance(answer.parsed, m.ErrorBody)
    assert "alibaba" in answer.parsed.extra.additional_properties["known"]

    answer = call("listInstanceTypes", "alibaba", accelerator="Z9000")
    assert answer.status_code == 400
    assert isinstance(answer.parsed, m.ErrorBody)
    assert answer.parsed.extra[0].key == "accelerator"

    answer = call("listOffers", accelerator=["A1OO"])
    assert answer.status_code == 400
    assert isinstance(answer.parsed, m.ErrorBody)
    assert answer.parsed.extra[0].key == "accelerator"
    assert "A10" in answer.parsed.extra[0].suggestions

    answer = call("reloadCatalogs")
    assert answer.status_code == 401
    assert isinstance(answer.parsed, m.ErrorBody)
    assert "Bearer" in answer.parsed.detail
