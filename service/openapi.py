"""The committed OpenAPI contract (``openapi/openapi.json``) and how it is rendered.

Rendering is deterministic (sorted keys, fixed indentation) so the committed file only
changes when the API does; ``make openapi`` rewrites it and a test fails on drift.

Request bodies are documented by msgspec itself (:func:`align_request_schemas`): litestar's
generator drops ``msgspec.Meta`` bounds that are falsy (``gt=0``, ``ge=0``) and every bound
inside a union or a list item (``str | ModelSpec``, ``list[Name]``), so the contract
promised more than the decoder accepts. msgspec's own JSON Schema comes from the same
types the decoder validates with, so the two cannot disagree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
from litestar import Litestar
from litestar._openapi.plugin import OpenAPIPlugin
from litestar.serialization import encode_json

from service.settings import Settings

CONTRACT_PATH = Path(__file__).resolve().parent.parent / "openapi" / "openapi.json"
_REF_TEMPLATE = "#/components/schemas/{name}"


def openapi_document(app: Litestar) -> dict[str, Any]:
    """The document the app serves at ``/schema/openapi.json`` (aligned, see module doc)."""
    document: dict[str, Any] = app.plugins.get(OpenAPIPlugin).provide_openapi_schema()
    return document


def document_asgi_routes(app: Litestar) -> None:
    """Document raw ASGI routes (litestar leaves them out of the schema) from the spec
    they carry in ``opt["openapi"]``: body and response schemas come from msgspec, the
    same types the route decodes and encodes with."""
    from service.errors import ErrorBody

    document = openapi_document(app)
    for route in app.routes:
        handler = getattr(route, "route_handler", None)  # ASGI routes have exactly one
        if handler is not None:
            spec = handler.opt.get("openapi")
            if spec is None:
                continue
            body, answer = spec["body"], spec["response"]
            _, components = msgspec.json.schema_components(
                [body, answer, ErrorBody], ref_template=_REF_TEMPLATE
            )
            document.setdefault("components", {}).setdefault("schemas", {}).update(components)
            responses: dict[str, Any] = {
                "200": {
                    "description": "Request fulfilled, document follows",
                    "headers": {
                        name: {"description": text, "schema": {"type": "string"}}
                        for name, text in spec.get("response_headers", {}).items()
                    },
                    "content": {"application/json": {"schema": _ref(answer)}},
                }
            }
            for status, text in spec.get("statuses", {}).items():
                responses[status] = {
                    "description": text,
                    "content": {"application/json": {"schema": _ref(ErrorBody)}},
                }
            document.setdefault("paths", {}).setdefault(spec["path"], {})[spec["method"]] = {
                "operationId": spec["operation_id"],
                "tags": spec["tags"],
                "summary": spec["summary"],
                "description": spec["description"],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _ref(body)}},
                },
                "responses": responses,
                "deprecated": False,
            }


def _ref(kind: type) -> dict[str, str]:
    return {"$ref": _REF_TEMPLATE.format(name=kind.__name__)}


def align_request_schemas(app: Litestar) -> None:
    """Replace the component schemas of every JSON request body (and the structs they
    contain) by msgspec's, in the document the app serves; and document the body of
    handlers that decode it themselves (``opt={"body": Type}``)."""
    declared: dict[tuple[str, str], type[msgspec.Struct]] = {}
    body_types: set[type[msgspec.Struct]] = set()
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            data = handler.parsed_fn_signature.parameters.get("data")
            body = handler.opt.get("body")
            if body is None and data is not None:
                body = data.annotation
            if isinstance(body, type) and issubclass(body, msgspec.Struct):
                body_types.add(body)
                if data is None:
                    for method in getattr(handler, "http_methods", ()):
                        declared[(route.path, method.lower())] = body
    if not body_types:
        return
    ordered = sorted(body_types, key=lambda t: t.__name__)
    _, components = msgspec.json.schema_components(ordered, ref_template=_REF_TEMPLATE)
    document = openapi_document(app)
    document.setdefault("components", {}).setdefault("schemas", {}).update(components)
    for (path, method), body in declared.items():
        operation = document.get("paths", {}).get(path, {}).get(method)
        if operation is not None:
            operation["requestBody"] = {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {"$ref": _REF_TEMPLATE.format(name=body.__name__)}
                    }
                },
            }


def document_query_structs(app: Litestar) -> None:
    """Document the query string of handlers that parse it whole into a struct
    (``opt={"query": Struct}``, see :mod:`service.api.query`): one parameter per field,
    from msgspec's JSON Schema of the struct the parser converts into."""
    from service.api.query import query_parameters

    document = openapi_document(app)
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            kind = handler.opt.get("query")
            if kind is None:
                continue
            for method in getattr(handler, "http_methods", ()):
                operation = document.get("paths", {}).get(route.path, {}).get(method.lower())
                if operation is not None:
                    operation["parameters"] = query_parameters(kind, _REF_TEMPLATE)


_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})
_COMMON_ERRORS = {
    "400": "The request is invalid; `extra` names each field (`key`), why, and for unknown "
    "names the closest valid ones (`suggestions`).",
    "413": "The body is larger than SUANLI_MAX_BODY_BYTES.",
    "415": "The body is not `application/json`.",
    "429": "Too many requests from this client; retry after `Retry-After` seconds.",
    "500": "Unexpected server error; `extra.request_id` identifies it in the logs.",
    "503": "Not answered within SUANLI_REQUEST_TIMEOUT_S (a stuck dependency); retry.",
}


def document_common_errors(app: Litestar) -> None:
    """Document, on every operation, the statuses the app itself can add to what the
    handler declares: 500 and 503 (request deadline) everywhere, 429 from the rate
    limiter on /v1 routes, 400 where there are parameters or a body, 413 and 415 where
    there is a body."""
    from service.errors import ErrorBody

    document = openapi_document(app)
    _, components = msgspec.json.schema_components([ErrorBody], ref_template=_REF_TEMPLATE)
    document.setdefault("components", {}).setdefault("schemas", {}).update(components)
    content = {"application/json": {"schema": {"$ref": _REF_TEMPLATE.format(name="ErrorBody")}}}
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if method not in _METHODS:
                continue
            statuses = ["500", "503"]
            if path.startswith("/v1/"):
                statuses.append("429")
            if operation.get("parameters") or operation.get("requestBody"):
                statuses.append("400")
            if operation.get("requestBody"):
                statuses += ["413", "415"]
            responses = operation.setdefault("responses", {})
            for status in statuses:
                response: dict[str, Any] = {
                    "description": _COMMON_ERRORS[status],
                    "content": content,
                }
                if status == "429":
                    response["headers"] = {
                        "Retry-After": {
                            "description": "Seconds until the client's window resets.",
                            "schema": {"type": "integer", "minimum": 0},
                        }
                    }
                responses.setdefault(status, response)


def render_openapi() -> str:
    from service.app import create_app

    app = create_app(Settings())
    schema = json.loads(encode_json(openapi_document(app)))
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
