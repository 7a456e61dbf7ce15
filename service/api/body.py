"""Strict JSON request bodies: the guard of every route that takes a JSON ``data`` body
(set on those controllers, not app-wide: litestar copies the handler for every guard
call, a cost every other route would pay for nothing), and the decoder of routes that
read their own body.

Why: litestar decodes a ``data`` body untyped and then converts it with ``strict=False``.
That accepts more than the OpenAPI document allows (``"7"`` for a number, ``0`` for
``false``), ignores the Content-Type (a form post or a text body is parsed as JSON), and a
deeply nested document crashes the untyped decoder with ``RecursionError`` (a 500).

Guards run before litestar parses the body, so this one decodes the raw body strictly into
the handler's own type first and answers in the one error shape:

* a Content-Type other than ``application/json`` (or ``application/*+json``) -> 415;
* nesting too deep for the decoder -> 400;
* a wrong type or a broken bound -> 400 naming the field, like litestar's own validation.
  Strict means no strings for numbers and no ``0``/``1`` for booleans; an integral float
  (``49.0``) still counts as an integer, as it does in JSON Schema (and in the contract).

A body that passes is then parsed by litestar as usual (the raw body is cached on the
request, so it is read once); a missing or malformed body is answered here too, so every
JSON body error has the same words (``JSON is malformed: ...``).
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

import msgspec
from litestar import Request
from litestar.connection import ASGIConnection
from litestar.exceptions import ClientException, ValidationException
from litestar.handlers.base import BaseRouteHandler
from litestar.status_codes import HTTP_415_UNSUPPORTED_MEDIA_TYPE

T = TypeVar("T")

JSON_MEDIA_TYPE = "application/json"
_AT_PATH = re.compile(r"^(?P<message>.*) - at `\$(?P<path>[^`]*)`$", re.S)


class UnsupportedMediaTypeException(ClientException):
    """415: the request body is not JSON."""

    status_code = HTTP_415_UNSUPPORTED_MEDIA_TYPE


def _is_json(content_type: str | None) -> bool:
    media = (content_type or JSON_MEDIA_TYPE).partition(";")[0].strip().lower()
    return media == JSON_MEDIA_TYPE or (
        media.startswith("application/") and media.endswith("+json")
    )


def validation_item(error: msgspec.ValidationError) -> dict[str, str]:
    """msgspec's message split into litestar's ``{key, message, source}`` item."""
    text = str(error)
    match = _AT_PATH.match(text)
    if match is None:
        return {"key": "data", "message": text, "source": "body"}
    path = match["path"].removeprefix(".")
    return {"key": path or "data", "message": match["message"], "source": "body"}


async def strict_json_body(
    connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler
) -> None:
    """Guard: refuse non-JSON, too deeply nested and loosely typed bodies (see module)."""
    data = handler.parsed_fn_signature.parameters.get("data")
    if data is None or not isinstance(connection, Request):
        return
    where = f"{connection.method} {connection.url.path}"
    check_body(connection.headers.get("content-type"), await connection.body(), data.annotation,
               where)  # fmt: skip


def decode_json(content_type: str | None, body: bytes, body_type: type[T], where: str) -> T:
    """Decode a body into ``body_type`` with the guard's rules, parsing it only once when
    it is valid (the common case). For routes that read their own body (``where`` is
    ``"METHOD /path"`` for the error detail)."""
    if body and _is_json(content_type):
        try:
            return _decoder(body_type).decode(body)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            pass  # explain it with the checks below
    check_body(content_type, body, body_type, where)
    return msgspec.convert(
        integral_floats_as_ints(msgspec.json.decode(body)), body_type, strict=True
    )


_DECODERS: dict[object, msgspec.json.Decoder[Any]] = {}


def _decoder(body_type: type[T]) -> msgspec.json.Decoder[T]:
    """One reusable typed decoder per body type (msgspec's own advice for speed)."""
    decoder = _DECODERS.get(body_type)
    if decoder is None:
        decoder = _DECODERS[body_type] = msgspec.json.Decoder(body_type)
    return decoder


def check_body(
    content_type: str | None,
    body: bytes,
    body_type: Any,
    where: str,
) -> None:
    """Raise the right 4xx for a body that is not strictly a ``body_type`` document:
    415 for another media type, 400 for a missing body, malformed or too deeply nested
    JSON, or a value that does not fit (naming the field)."""
    if not _is_json(content_type):
        media = (content_type or "").partition(";")[0].strip()
        raise UnsupportedMediaTypeException(
            detail=f"Content-Type must be {JSON_MEDIA_TYPE}, got {media!r}"
        )
    if not body:
        raise ValidationException(
            detail=f"Validation failed for {where}",
            extra=[{"key": "data", "message": "request body is missing: a JSON object is "
                    "required", "source": "body"}],
        )  # fmt: skip
    try:
        document = msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        text = str(exc)
        if not text.startswith("JSON is malformed"):
            text = f"JSON is malformed: {text[:1].lower()}{text[1:]}"
        raise ClientException(detail=text) from None
    except RecursionError:
        raise ClientException(detail="JSON is malformed: nesting too deep") from None
    try:
        try:
            msgspec.convert(document, body_type, strict=True)
        except msgspec.ValidationError:  # maybe only `49.0` where an integer belongs
            msgspec.convert(integral_floats_as_ints(document), body_type, strict=True)
    except msgspec.ValidationError as exc:
        raise ValidationException(
            detail=f"Validation failed for {where}", extra=[validation_item(exc)]
        ) from None


def integral_floats_as_ints(document: object) -> object:
    """``49.0`` -> ``49`` everywhere in a decoded JSON document (iteratively: the
    document may be nested as deep as the decoder allows)."""
    root = [document]
    stack: list[tuple[list[Any] | dict[str, Any], Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, float) and item.is_integer():
            container[key] = int(item)
        elif isinstance(item, list):
            stack.extend((item, i) for i in range(len(item)))
        elif isinstance(item, dict):
            stack.extend((item, k) for k in item)
    return root[0]
