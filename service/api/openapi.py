"""The committed OpenAPI contract (``openapi/openapi.json``) and how it is rendered.

Rendering is deterministic (sorted keys, fixed indentation) so the committed file only
changes when the API does; ``make openapi`` rewrites it and a test fails on drift.

Every component schema comes from msgspec (:func:`finish_contract`), built from the same
types the routes decode and encode with: litestar's generator drops ``msgspec.Meta``
bounds that are falsy (``gt=0``) or sit inside unions and list items, and it does not
carry field descriptions, so its schemas promised more than the decoder accepts and
described little. Descriptions are written once, on the struct fields
(``Annotated[T, msgspec.Meta(description=...)]``); nothing here patches text in.

What this module derives, and why it is derived rather than written:

* ``required``: a response struct is encoded with every field (no ``omit_defaults``), so
  every property of a schema reachable only from responses is always present and is
  listed as required; request schemas keep msgspec's rule (no default = required).
* errors: every status >= 400 of every operation refers to the one ``ErrorBody`` schema,
  the shape every error handler of the app writes (litestar's per-exception inline
  schemas are replaced).
* the ``kind`` tag of a tagged union (msgspec keeps tags out of the fields) is described
  from the struct's own docstring.
* examples: request bodies from the route's ``opt["examples"]`` (checked against its body
  type with the strict decoder), parameter examples from the parameters themselves, and a
  ``curl`` sample per operation (``x-codeSamples``).
"""

from __future__ import annotations

import json
import shlex
import typing
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

import msgspec
from litestar import Litestar, Response, Router, get
from litestar._openapi.plugin import OpenAPIPlugin
from litestar.exceptions import NotFoundException
from litestar.params import PathParameter
from litestar.serialization import encode_json

from service.runtime.errors import ErrorBody

CONTRACT_PATH = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"
_REF_TEMPLATE = "#/components/schemas/{name}"
_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})
_BASE_URL = "http://127.0.0.1:8000"


SCHEMA_PATH = "/schema"


@get("/{path:str}", include_in_schema=False, sync_to_thread=False)
def _no_such_document(path: Annotated[str, PathParameter()]) -> None:
    """litestar answers unknown ``/schema/*`` paths with an HTML page; here they get the
    one error shape, like every other route."""
    raise NotFoundException(detail=f"no such document: {SCHEMA_PATH}/{path}; the contract "
                            f"is at {SCHEMA_PATH}/openapi.json")  # fmt: skip


def schema_router() -> Router:
    """The router litestar fills with the documentation routes (``openapi_router``)."""
    return Router(SCHEMA_PATH, route_handlers=[_no_such_document], include_in_schema=False)


def openapi_document(app: Litestar) -> dict[str, Any]:
    """The document the app serves at ``/schema/openapi.json`` (aligned, see module doc)."""
    document: dict[str, Any] = app.plugins.get(OpenAPIPlugin).provide_openapi_schema()
    return document


def finish_contract(app: Litestar) -> None:
    """Turn litestar's document into the contract (see module doc); called once by
    ``create_app`` after the routes are registered."""
    document = openapi_document(app)
    handlers = list(_handlers(app))
    requests = [h.body for h in handlers if h.body is not None]
    responses = [t for h in handlers for t in h.responses]
    _set_components(document, requests, [*responses, ErrorBody])
    for handler in handlers:
        if handler.asgi_spec is not None:
            _document_asgi_route(document, handler.asgi_spec)
        elif handler.body is not None and handler.declared_body:
            for method in handler.methods:
                _set_request_body(document, handler.path, method, handler.body)
    for handler in handlers:
        for method in handler.methods:
            operation = document.get("paths", {}).get(handler.path, {}).get(method)
            if operation is not None and handler.examples:
                _add_body_examples(operation, handler.body, handler.examples)
    _document_query_structs(document, app)
    document_common_errors(document)
    _add_code_samples(document)


class _Handler(msgspec.Struct, frozen=True, kw_only=True):
    """What the contract needs to know of one documented route handler."""

    path: str
    methods: list[str]
    body: Any
    declared_body: bool
    """The handler reads its body itself (``opt["body"]``): litestar did not document it."""
    responses: list[Any]
    examples: Mapping[str, tuple[str, dict[str, Any]]]
    asgi_spec: dict[str, Any] | None = None


def _handlers(app: Litestar) -> Iterator[_Handler]:
    for route in app.routes:
        asgi = getattr(route, "route_handler", None)  # ASGI routes have exactly one
        if asgi is not None:
            spec = asgi.opt.get("openapi")
            if spec is not None:
                yield _Handler(
                    path=spec["path"],
                    methods=[spec["method"]],
                    body=spec["body"],
                    declared_body=True,
                    responses=[spec["response"]],
                    examples=spec.get("examples", {}),
                    asgi_spec=spec,
                )
            continue
        for handler in getattr(route, "route_handlers", ()):
            if not handler.resolve_include_in_schema():
                continue
            data = handler.parsed_fn_signature.parameters.get("data")
            body = handler.opt.get("body") or (data.annotation if data is not None else None)
            returned = handler.parsed_fn_signature.return_type.annotation
            if typing.get_origin(returned) is Response:
                returned = typing.get_args(returned)[0]
            responses = [] if returned in (None, type(None), bytes) else [returned]
            responses += [spec.data_container for spec in (handler.responses or {}).values()]
            yield _Handler(
                path=_openapi_path(route.path),
                methods=sorted(m.lower() for m in handler.http_methods),
                body=body,
                declared_body=data is None and body is not None,
                responses=responses,
                examples=handler.opt.get("examples", {}),
            )


def _openapi_path(path: str) -> str:
    """``/v1/providers/{name:str}/x`` -> ``/v1/providers/{name}/x``."""
    return "/".join(
        part.split(":")[0] + "}" if part.startswith("{") else part for part in path.split("/")
    )


def _set_components(document: dict[str, Any], requests: list[Any], responses: list[Any]) -> None:
    """Replace litestar's component schemas by msgspec's; mark always-present response
    fields required; describe tag fields."""
    _, request_components = msgspec.json.schema_components(requests, ref_template=_REF_TEMPLATE)
    _, components = msgspec.json.schema_components(
        [*requests, *responses], ref_template=_REF_TEMPLATE
    )
    structs = {cls.__name__: cls for cls in _structs([*requests, *responses])}
    for name, schema in components.items():
        cls = structs.get(name)
        if cls is None:
            continue
        _describe_tag(schema, cls)
        _hoist_descriptions(schema)
        if name not in request_components and not cls.__struct_config__.omit_defaults:
            schema["required"] = sorted(schema.get("properties", {}))
    document.setdefault("components", {}).setdefault("schemas", {}).update(components)


def _structs(types: Iterable[Any]) -> Iterator[type[msgspec.Struct]]:
    """Every struct class reachable from ``types``."""
    seen: set[type] = set()
    stack: list[Any] = list(msgspec.inspect.multi_type_info(list(types)))
    while stack:
        info = stack.pop()
        if isinstance(info, msgspec.inspect.StructType):
            if info.cls in seen:
                continue
            seen.add(info.cls)
            yield info.cls
            stack.extend(field.type for field in info.fields)
        elif isinstance(info, msgspec.inspect.UnionType):
            stack.extend(info.types)
        elif isinstance(info, msgspec.inspect.Metadata):
            stack.append(info.type)
        elif isinstance(info, msgspec.inspect.DictType):
            stack.extend((info.key_type, info.value_type))
        elif isinstance(
            info,
            msgspec.inspect.ListType
            | msgspec.inspect.SetType
            | msgspec.inspect.FrozenSetType
            | msgspec.inspect.VarTupleType,
        ):
            stack.append(info.item_type)


def _hoist_descriptions(schema: dict[str, Any]) -> None:
    """``Annotated[T, Meta(description=...)] | None``: msgspec writes the description on
    the ``T`` member of the ``anyOf``; lift it to the property, where readers (and
    generators) look for it."""
    for prop in schema.get("properties", {}).values():
        if "description" in prop or "anyOf" not in prop:
            continue
        texts = {m["description"] for m in prop["anyOf"] if "description" in m}
        if len(texts) == 1:
            prop["description"] = texts.pop()


def _describe_tag(schema: dict[str, Any], cls: type[msgspec.Struct]) -> None:
    config = cls.__struct_config__
    if config.tag_field is None:
        return
    prop = schema.get("properties", {}).get(config.tag_field)
    if prop is not None and "description" not in prop:
        first = (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ").replace("``", "`")
        prop["description"] = f"`{config.tag}` selects this kind. {first}".strip()


def _ref(kind: type) -> dict[str, str]:
    return {"$ref": _REF_TEMPLATE.format(name=kind.__name__)}


def _json_content(kind: type) -> dict[str, Any]:
    return {"application/json": {"schema": _ref(kind)}}


def _set_request_body(document: dict[str, Any], path: str, method: str, body: type) -> None:
    operation = document.get("paths", {}).get(path, {}).get(method)
    if operation is not None:
        operation["requestBody"] = {"required": True, "content": _json_content(body)}


def _document_asgi_route(document: dict[str, Any], spec: dict[str, Any]) -> None:
    """Raw ASGI routes are left out by litestar: document one from the spec it carries
    in ``opt["openapi"]`` (its body and response types are in the components)."""
    responses: dict[str, Any] = {
        "200": {
            "description": "Request fulfilled, document follows",
            "headers": {
                name: {"description": text, "schema": {"type": "string"}}
                for name, text in spec.get("response_headers", {}).items()
            },
            "content": _json_content(spec["response"]),
        }
    }
    for status, text in spec.get("statuses", {}).items():
        responses[status] = {"description": text, "content": _json_content(ErrorBody)}
    document.setdefault("paths", {}).setdefault(spec["path"], {})[spec["method"]] = {
        "operationId": spec["operation_id"],
        "tags": spec["tags"],
        "summary": spec["summary"],
        "description": spec["description"],
        "requestBody": {"required": True, "content": _json_content(spec["body"])},
        "responses": responses,
        "deprecated": False,
    }


def _add_body_examples(
    operation: dict[str, Any], body: Any, examples: Mapping[str, tuple[str, dict[str, Any]]]
) -> None:
    """Each example is decoded strictly into the route's body type first: a stale
    example is a start-up error, never a wrong document."""
    content = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if content is None:
        raise ValueError(f"examples given for operation {operation.get('operationId')} "
                         "that takes no JSON body")  # fmt: skip
    documented: dict[str, Any] = {}
    for name, (summary, value) in examples.items():
        msgspec.convert(value, body, strict=True)
        documented[name] = {"summary": summary, "value": value}
    content["examples"] = documented


def _document_query_structs(document: dict[str, Any], app: Litestar) -> None:
    """Document the query string of handlers that parse it whole into a struct
    (``opt={"query": Struct}``, see :mod:`service.api.query`): one parameter per field,
    from msgspec's JSON Schema of the struct the parser converts into."""
    from service.api.query import query_parameters

    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            kind = handler.opt.get("query")
            if kind is None:
                continue
            for method in getattr(handler, "http_methods", ()):
                path = _openapi_path(route.path)
                operation = document.get("paths", {}).get(path, {}).get(method.lower())
                if operation is not None:
                    operation["parameters"] = query_parameters(kind, _REF_TEMPLATE)


_COMMON_ERRORS = {
    "400": "The request is invalid; `extra` names each field (`key`), why, and for unknown "
    "names the closest valid ones (`suggestions`).",
    "413": "The body is larger than SUANLI_MAX_BODY_BYTES.",
    "415": "The body is not `application/json`.",
    "429": "Too many requests from this client; retry after `Retry-After` seconds.",
    "500": "Unexpected server error; `extra.request_id` identifies it in the logs.",
    "503": "Not answered within SUANLI_REQUEST_TIMEOUT_S (a stuck dependency); retry.",
}


def document_common_errors(document: dict[str, Any]) -> None:
    """Document, on every operation, the statuses the app itself can add to what the
    handler declares: 500 and 503 (request deadline) everywhere, 429 from the rate
    limiter on /v1 routes, 400 where there are parameters or a body, 413 and 415 where
    there is a body. Every error status refers to ``ErrorBody``; a 503 the handler
    documents with its own body (``/readyz``) may also be the deadline's ``ErrorBody``."""
    error = _json_content(ErrorBody)
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
                response: dict[str, Any] = {"description": _COMMON_ERRORS[status]}
                if status == "429":
                    response["headers"] = {
                        "Retry-After": {
                            "description": "Seconds until the client's window resets.",
                            "schema": {"type": "integer", "minimum": 0},
                        }
                    }
                responses.setdefault(status, response)
            for status, response in responses.items():
                if not status.isdigit() or int(status) < 400:
                    continue
                own = response.get("content", {}).get("application/json", {}).get("schema", {})
                if own.get("$ref", "").endswith("/ErrorBody") or "$ref" not in own:
                    response["content"] = error
                else:
                    response["content"] = {
                        "application/json": {"schema": {"anyOf": [own, _ref(ErrorBody)]}}
                    }


def _add_code_samples(document: dict[str, Any]) -> None:
    """A ``curl`` line per operation: the first body example, or the parameters'."""
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if method not in _METHODS:
                continue
            url = _BASE_URL + _example_path(path, operation.get("parameters", []))
            parts = ["curl", "-sS"]
            if method != "get":
                parts += ["-X", method.upper()]
            examples = (
                operation.get("requestBody", {})
                .get("content", {})
                .get("application/json", {})
                .get("examples", {})
            )
            if examples:
                body = next(iter(examples.values()))["value"]
                parts += ["-H", "Content-Type: application/json", "-d", json.dumps(body)]
            source = " ".join(shlex.quote(part) for part in [*parts, url])
            if path.startswith("/v1/admin/"):
                # double quotes: the shell expands the key from the environment
                source += ' -H "Authorization: Bearer $SUANLI_API_KEY"'
            operation["x-codeSamples"] = [{"lang": "Shell", "label": "curl", "source": source}]


def _example_path(path: str, parameters: list[dict[str, Any]]) -> str:
    query = []
    for parameter in parameters:
        value = parameter_example(parameter)
        if value is None:
            continue
        if parameter.get("in") == "path":
            path = path.replace("{" + parameter["name"] + "}", str(value))
        elif parameter.get("in") == "query":
            values = value if isinstance(value, list) else [value]  # repeated: a=x&a=y
            query += [f"{parameter['name']}={json.dumps(v).strip(chr(34))}" for v in values]
    return path + ("?" + "&".join(query) if query else "")


def parameter_example(parameter: dict[str, Any]) -> Any:
    """A parameter's example value: its ``examples``, ``example`` or its schema's
    ``examples`` (``msgspec.Meta(examples=...)`` on a query struct field); ``None``."""
    for example in (parameter.get("examples") or {}).values():
        return example.get("value")
    if "example" in parameter:
        return parameter["example"]
    for value in parameter.get("schema", {}).get("examples", []):
        return value
    return None


def render_openapi(app: Litestar) -> str:
    """The committed file's text for ``app`` (``create_app(Settings())`` for the contract;
    the caller builds it, because this module is part of what ``create_app`` wires)."""
    schema = json.loads(encode_json(openapi_document(app)))
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
