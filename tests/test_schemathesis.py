"""The OpenAPI contract, checked by schemathesis against the live ASGI app.

Every operation gets the examples, coverage and fuzzing phases with *all* schemathesis
checks (server errors, status codes, content types, response schemas and headers,
negative-data rejection, positive-data acceptance, ...), then a stateful run follows the
links where one response feeds the next request (``GET /v1/providers`` -> a provider's
instance types). Generation is deterministic (fixed seed, derandomized Hypothesis), so a
failure reproduces on every machine.

``SUANLI_SCHEMATHESIS_EXAMPLES`` sets the fuzzing examples per operation (default 100,
what CI runs; about 45 s on 2 cores).

Two additions to the stock checks: generated names are often swapped for real ones (a
preset, an accelerator, a provider) so the sizing and planning code behind name lookups
is fuzzed too, and a 400 for schema-valid input is allowed only when it comes from the
service's own checks (an unknown name), never from the decoder
(``decoder_agrees_with_schema``): the contract must not promise more than is accepted.

The admin route is exercised without credentials (the key is configured but never given to
schemathesis): the contract must hold for the 401 answers an attacker gets, and nothing a
generator sends may reload the catalog.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
from collections.abc import Callable
from typing import Any, NamedTuple

import hypothesis
import pytest
import schemathesis
from hypothesis import strategies as st
from litestar import Litestar
from litestar.testing import TestClient

from service.app import create_app
from tests.conftest import BUILTIN_PROVIDERS, app_settings

EXAMPLES = int(os.environ.get("SUANLI_SCHEMATHESIS_EXAMPLES", "100"))
SEED = 20_261_130
STATEFUL_RUNS = max(10, EXAMPLES // 4)


def _app() -> Litestar:
    """A fresh app per test: schemathesis ends an app's lifespan after each test item."""
    return create_app(app_settings(api_key="schemathesis-never-sees-this-key"))


@functools.cache
def _app_schema() -> str:
    """The document the app serves (what clients and schemathesis see)."""
    with TestClient(app=_app()) as client:
        response = client.get("/schema/openapi.json")
        assert response.status_code == 200, response.text
        return response.text


def _raw_schema() -> dict[str, Any]:
    """The app's own OpenAPI document, plus the links that connect its operations."""
    raw: dict[str, Any] = json.loads(_app_schema())
    providers_ok = raw["paths"]["/v1/providers"]["get"]["responses"]["200"]
    providers_ok.setdefault("links", {})["InstanceTypes"] = {
        "operationId": _operation_id(raw, "/v1/providers/{name}/instance-types", "get"),
        "parameters": {"path.name": "$response.body#/0/name"},
        "description": "The first listed provider's instance types.",
    }
    return raw


def _operation_id(raw: dict[str, Any], path: str, method: str) -> str:
    operation_id: str = raw["paths"][path][method]["operationId"]
    return operation_id


def _config() -> schemathesis.Config:
    return schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "generation": {
                "mode": "all",  # valid and invalid inputs
                "max-examples": EXAMPLES,
                "deterministic": True,
                "database": "none",
            },
            "checks": {
                "enabled": True,
                # Schema-valid input may still name something that does not exist (a
                # preset, an accelerator): a 400 with suggestions is the documented answer.
                # `decoder_agrees_with_schema` below keeps this from hiding real disagreement.
                # A request that contradicts itself (CUDA required, only Ascend allowed) is
                # the documented 422.
                "positive_data_acceptance": {
                    "expected-statuses": [
                        "2xx",
                        "400",
                        "401",
                        "403",
                        "404",
                        "409",
                        "422",
                        "429",
                        "5xx",
                    ]
                },
            },
            "phases": {
                "examples": {"enabled": True},
                "coverage": {"enabled": True},
                "fuzzing": {"enabled": True},
                "stateful": {"enabled": True},
            },
        }
    )


# What msgspec (through litestar) says when it rejects a value: the decoder's words, as
# opposed to the service's own input errors (unknown names, inconsistent architecture).
_DECODER_MESSAGE = re.compile(
    r"^(Expected `|Invalid enum value|Object missing required field|Object contains unknown "
    r"field|Invalid value|JSON is malformed|Input data was truncated|Invalid UTF-8"
    r"|[a-z_]+ must be |[a-z_]+ is a list, not|the request body must be)"
)


@schemathesis.check
def decoder_agrees_with_schema(
    ctx: schemathesis.CheckContext, response: schemathesis.Response, case: schemathesis.Case[Any]
) -> bool | None:
    """A request the OpenAPI document calls valid is never refused by the decoder.

    Positive data may get a 400 only from the service's own checks (an unknown preset or
    accelerator, heads that do not divide hidden): if the decoder refuses it, the contract
    promises more than the service accepts.
    """
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 400:
        return None
    body = json.loads(response.content)
    items = body.get("extra") if isinstance(body, dict) else None
    if not isinstance(items, list) or not items:
        raise AssertionError(f"schema-valid request refused without a field: {body}")
    refused = [item for item in items if _DECODER_MESSAGE.match(str(item.get("message", "")))]
    if refused:
        raise AssertionError(f"the decoder refused schema-valid input: {refused}")
    return True


class KnownNames(NamedTuple):
    models: list[str]
    accelerators: list[str]


@functools.cache
def _known_names() -> KnownNames:
    with TestClient(app=_app()) as client:
        models = [m["id"] for m in client.get("/v1/models").json()]
        accelerators = [a["name"] for a in client.get("/v1/accelerators").json()]
    return KnownNames(models=models, accelerators=accelerators)


def flatmap_body(context: schemathesis.HookContext, body: Any) -> st.SearchStrategy[Any]:
    """Often swap generated names for real ones (a preset, an accelerator, providers).

    Random strings almost never name a preset, so without this nearly every generated
    workload stops at "unknown preset" and the sizing and planning code behind it would
    go unfuzzed. Only names that are already valid strings are swapped, so a case stays
    as valid (or as invalid) as it was generated.
    """
    if not isinstance(body, dict):
        return st.just(body)
    names = _known_names()
    providers = [list(BUILTIN_PROVIDERS[:i]) for i in range(1, len(BUILTIN_PROVIDERS) + 1)]
    return st.fixed_dictionaries(
        {
            "model": st.sampled_from([None, *names.models]),
            "accelerator": st.sampled_from([None, *names.accelerators]),
            "providers": st.sampled_from([None, *providers]),
        }
    ).map(lambda pick: _with_known_names(body, pick))


def flatmap_path_parameters(
    context: schemathesis.HookContext, path_parameters: dict[str, Any]
) -> st.SearchStrategy[dict[str, Any]]:
    """Often name a provider that exists, so instance-type pages are fuzzed, not just 404s."""
    if not isinstance(path_parameters, dict) or not _valid_name(path_parameters.get("name"), 64):
        return st.just(path_parameters)
    return st.sampled_from([None, *BUILTIN_PROVIDERS]).map(
        lambda name: path_parameters if name is None else {**path_parameters, "name": name}
    )


def flatmap_query(
    context: schemathesis.HookContext, query: dict[str, Any]
) -> st.SearchStrategy[dict[str, Any]]:
    """Often filter by an accelerator that exists (random strings are unknown names);
    ``/v1/offers`` takes a list of them."""
    if not isinstance(query, dict):
        return st.just(query)
    given = query.get("accelerator")
    if isinstance(given, list) and given and all(_valid_name(a, 64) for a in given):
        return st.sampled_from([None, *_known_names().accelerators]).map(
            lambda name: query if name is None else {**query, "accelerator": [name]}
        )
    if not _valid_name(given, 64):
        return st.just(query)
    return st.sampled_from([None, *_known_names().accelerators]).map(
        lambda name: query if name is None else {**query, "accelerator": name}
    )


def _valid_name(value: object, max_length: int) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= max_length


def _with_known_names(body: dict[str, Any], pick: dict[str, Any]) -> dict[str, Any]:
    body = copy.deepcopy(body)
    workload, placement = body.get("workload"), body.get("placement")
    constraints = body.get("constraints")
    accelerator = pick["accelerator"]
    if pick["model"] and isinstance(workload, dict) and _valid_name(workload.get("model"), 128):
        workload["model"] = pick["model"]
    if (
        accelerator
        and isinstance(placement, dict)
        and _valid_name(placement.get("accelerator"), 128)
    ):
        placement["accelerator"] = accelerator
    if not isinstance(constraints, dict):
        return body
    providers, wanted = constraints.get("providers"), constraints.get("accelerators")
    if (
        pick["providers"]
        and isinstance(providers, list)
        and all(_valid_name(p, 64) for p in providers)
    ):
        constraints["providers"] = pick["providers"][: len(providers)]
    if (
        accelerator
        and isinstance(wanted, list)
        and wanted
        and all(_valid_name(a, 64) for a in wanted)
    ):
        constraints["accelerators"] = [accelerator]
    return body


def _schema(app: Litestar | None = None) -> Any:
    loaded = schemathesis.openapi.from_dict(_raw_schema(), config=_config())
    loaded.app = app
    loaded.location = "/schema/openapi.json"
    loaded.hook(flatmap_body)
    loaded.hook(flatmap_path_parameters)
    loaded.hook(flatmap_query)
    return loaded


schema = _schema()


@pytest.fixture
def contract_app() -> Litestar:
    """One app per operation: schemathesis ends the app's lifespan after each test item."""
    return _app()


@schema.parametrize()  # type: ignore[untyped-decorator]
@hypothesis.settings(
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    print_blob=True,
)
def test_api_contract(case: schemathesis.Case[Any], contract_app: Litestar) -> None:
    case.call_and_validate(app=contract_app)


def test_stateful_links() -> None:
    """Follow the links: the provider names ``GET /v1/providers`` returns must each be a
    valid ``{name}`` for the instance-types route (200, never 404)."""
    workflow = _schema(_app()).as_state_machine()
    workflow.run(
        settings=hypothesis.settings(
            max_examples=STATEFUL_RUNS,
            stateful_step_count=6,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(hypothesis.HealthCheck),
        )
    )


def test_links_resolve_to_instance_types(
    make_client: Callable[..., TestClient[Litestar]],
) -> None:
    """The link is real: every provider that loaded has a 200 instance-types page."""
    client = make_client()
    providers = client.get("/v1/providers").json()
    loaded = [p["name"] for p in providers if p["status"] == "loaded"]
    assert loaded
    for name in loaded:
        page = client.get(f"/v1/providers/{name}/instance-types", params={"limit": 1})
        assert page.status_code == 200, (name, page.text)
        assert page.json()["total"] > 0


# --- what the contract must document ----------------------------------------------------

ERROR_FIELDS = {"status_code", "detail"}


def _resolve(raw: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = raw
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def _v1_operations(raw: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op)
        for path, item in raw["paths"].items()
        if path.startswith("/v1/")
        for method, op in item.items()
        if method in {"get", "post", "put", "patch", "delete"}
    ]


@pytest.mark.parametrize(
    ("path", "method"),
    [(p, m) for p, m, _ in _v1_operations(_raw_schema())],
)
def test_every_status_the_app_can_return_is_documented(path: str, method: str) -> None:
    """400 for bad input, 413 for oversized bodies and 415 for non-JSON bodies on POST
    routes that take one, 429 from the rate limiter on every /v1 route, 500 as the last
    resort — each documented with the one error shape."""
    raw = _raw_schema()
    op = raw["paths"][path][method]
    expected = {"429", "500"}
    if op.get("parameters") or op.get("requestBody"):
        expected.add("400")
    if op.get("requestBody"):
        expected |= {"413", "415"}
    documented = set(op["responses"])
    missing = expected - documented
    assert not missing, f"{method.upper()} {path} does not document {sorted(missing)}"
    for status in sorted(expected):
        response = _resolve(raw, op["responses"][status])
        content = response.get("content", {})
        assert "application/json" in content, (path, status, response)
        body_schema = _resolve(raw, content["application/json"]["schema"])
        assert set(body_schema.get("properties", {})) >= ERROR_FIELDS, (path, status)
