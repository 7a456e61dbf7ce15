"""Strict query strings: a msgspec struct is a route's whole query, parsed and documented.

Why not litestar's per-parameter ``QueryParameter``: it ignores parameters it does not
know (a typo such as ``?acelerator=A100`` silently lists everything), and bounds would
live in two places (the handler signature and the code that builds the query for the CLI
and the MCP tools). Here one ``msgspec.Struct`` (fields annotated with
``msgspec.Meta(description=...)`` and bounds) is the single source of truth:

* :func:`parse_query` turns ``(name, value)`` pairs into the struct, strictly: an unknown
  name is a 400 with the closest known names, a scalar given twice is a 400 (nothing a
  user sent is ignored), ``true``/``false`` are the only booleans, integers are digits;
* :func:`query_parameters` writes the OpenAPI ``parameters`` from msgspec's own JSON
  Schema of the same struct, so the contract and the parser cannot disagree.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any, TypeVar

import msgspec
from msgspec import inspect as mi

from service.api.body import zh_message
from service.api.fields import suggest_parameters
from service.api.refusals import BOUND, bound_refusal
from service.runtime.errors import InputError, closest

S = TypeVar("S", bound=msgspec.Struct)

_INTEGER = re.compile(r"^-?[0-9]{1,18}$")
_NUMBER = re.compile(r"^-?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]{1,3})?$")
_AT_PATH = re.compile(r"^(?P<message>.*) - at `\$\.(?P<field>[A-Za-z_][A-Za-z0-9_]*)")


def _unwrap(kind: mi.Type) -> mi.Type:
    """The type under ``Annotated`` metadata and the non-null member of ``T | None``
    (query strings have no null)."""
    while True:
        if isinstance(kind, mi.Metadata):
            kind = kind.type
            continue
        if isinstance(kind, mi.UnionType):
            members = [t for t in kind.types if not isinstance(t, mi.NoneType)]
            if len(members) == 1:
                kind = members[0]
                continue
        return kind


def _is_list(kind: mi.Type) -> bool:
    return isinstance(_unwrap(kind), mi.ListType | mi.SetType | mi.FrozenSetType | mi.TupleType)


def _item_type(kind: mi.Type) -> mi.Type:
    inner = _unwrap(kind)
    if isinstance(inner, mi.ListType | mi.SetType | mi.FrozenSetType):
        return _unwrap(inner.item_type)
    return inner


def _not_a(name: str, raw: str, expected: str, expected_zh: str) -> InputError:
    """The 400 for a value that does not read as the parameter's type, in one shape for
    every scalar type: what was expected and what was sent."""
    return InputError(
        name,
        f"expected {expected}, got {raw!r}",
        source="query",
        zh=f"{expected_zh}，实际为 {raw!r}",
    )


def _scalar(name: str, raw: str, kind: mi.Type) -> object:
    """A query string value as the JSON value the struct expects, or a 400 naming it."""
    if isinstance(kind, mi.BoolType):
        if raw in ("true", "false"):
            return raw == "true"
        raise _not_a(name, raw, "true or false", "应为 true 或 false")
    if isinstance(kind, mi.IntType):
        if _INTEGER.match(raw):
            return int(raw)
        raise _not_a(name, raw, "an integer", "应为整数")
    if isinstance(kind, mi.FloatType):
        if _NUMBER.match(raw) and math.isfinite(float(raw)):
            return float(raw)
        raise _not_a(name, raw, "a number", "应为数字")
    if isinstance(kind, mi.LiteralType) and raw not in kind.values:
        allowed = [str(v) for v in kind.values]
        raise InputError(
            name,
            f"expected one of {', '.join(allowed)}; got {raw!r}",
            closest(raw, allowed),
            source="query",
            zh=f"应为 {'、'.join(allowed)} 之一，实际为 {raw!r}",
        )
    return raw


def unknown_parameter(name: str, known: Iterable[str]) -> InputError:
    """The 400 for a query parameter the route does not take, with the closest ones."""
    return InputError(
        name,
        f"unknown query parameter {name!r}",
        suggest_parameters(name, known),
        source="query",
        zh=f"未知查询参数 {name!r}",
    )


def given_twice(name: str) -> InputError:
    """The 400 for a scalar query parameter given more than once (which one would win?)."""
    return InputError(
        name, "given more than once: give it once", source="query", zh="重复给出：只能给一次"
    )


def parse_query(pairs: Iterable[tuple[str, str]], kind: type[S]) -> S:
    """``kind`` from a query string's ``(name, value)`` pairs, strictly (see module)."""
    info = mi.type_info(kind)
    if not isinstance(info, mi.StructType):
        raise TypeError(f"{kind!r} is not a msgspec Struct")
    fields = {f.encode_name: f for f in info.fields}
    values: dict[str, Any] = {}
    for name, raw in pairs:
        field = fields.get(name)
        if field is None:
            raise unknown_parameter(name, fields)
        if _is_list(field.type):
            values.setdefault(name, []).append(_scalar(name, raw, _item_type(field.type)))
        elif name in values:
            raise given_twice(name)
        else:
            values[name] = _scalar(name, raw, _unwrap(field.type))
    try:
        return msgspec.convert(values, kind, strict=True)
    except msgspec.ValidationError as exc:
        text = str(exc)
        match = _AT_PATH.match(text)
        if match is None:
            raise InputError("query", text, source="query", zh=zh_message(text)) from None
        name, message = match["field"], match["message"]
        bound = BOUND.match(message)
        if bound is not None:  # a sentence naming the bound and the value sent
            message = bound_refusal(name, bound["want"], bound["op"], bound["n"], values[name])
        raise InputError(name, message, source="query", zh=zh_message(message)) from None


def query_parameters(kind: type[msgspec.Struct], ref_template: str) -> list[dict[str, Any]]:
    """OpenAPI ``parameters`` (``in: query``) for every field of ``kind``, from msgspec's
    JSON Schema of it: the description, bounds, enum and default the parser enforces."""
    _, components = msgspec.json.schema_components([kind], ref_template=ref_template)
    struct = components[kind.__name__]
    required = set(struct.get("required", ()))
    parameters = []
    for name, prop in struct["properties"].items():
        prop = dict(prop)
        description = prop.pop("description", None)
        prop.pop("title", None)
        options = prop.pop("anyOf", None)
        if options is not None:  # `T | None`: a query string has no null
            prop.update(next(o for o in options if o.get("type") != "null"))
            description = prop.pop("description", description)
        if prop.get("default", 0) is None:
            del prop["default"]
        parameter: dict[str, Any] = {
            "name": name,
            "in": "query",
            "required": name in required,
            "schema": prop,
        }
        if description:
            parameter["description"] = description
        if prop.get("type") == "array":
            parameter.update(style="form", explode=True)
        parameters.append(parameter)
    return parameters
