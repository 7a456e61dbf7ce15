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
* a field the type does not have -> 400 whose ``key`` is the full path
  (``workload.seq_length``) and whose ``suggestions`` are the closest valid names
  (``seq_len``): a misspelt field silently dropped would answer another job;
* the same key twice in one object -> 400 naming it (JSON leaves it undefined which one
  wins, so a client and this service could read different requests);
* a wrong type or a broken bound -> 400 naming the field, like litestar's own validation.
  Strict means no strings for numbers and no ``0``/``1`` for booleans; an integral float
  (``49.0``) still counts as an integer, as it does in JSON Schema (and in the contract).

Rejection costs no more than acceptance: the typed decoder runs first and stops at the
first error, and the explanation is built from that error alone — no second walk over
the document. Only an integral float where an integer belongs decodes the document a
second time (untyped, in C) and fixes exactly the fields the typed pass named.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

import msgspec
from litestar import Request
from litestar.connection import ASGIConnection
from litestar.exceptions import ClientException, ValidationException
from litestar.handlers.base import BaseRouteHandler
from litestar.status_codes import HTTP_415_UNSUPPORTED_MEDIA_TYPE

from service.api.fields import (
    ECHOED,
    advice_in_chinese,
    field_advice,
    suggest_fields,
    values_at,
)
from service.api.refusals import (
    BOUND,
    body_refusal,
    bound_refusal,
    enum_refusal,
    type_refusal,
    zh_refusal,
)

T = TypeVar("T")

JSON_MEDIA_TYPE = "application/json"
_AT_PATH = re.compile(r"^(?P<message>.*) - at `\$(?P<path>[^`]*)`$", re.S)
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<name>.*)`$", re.S)
_KEY = re.compile(rb'"([^"\\]*)"\s*:')
"""A key as it appears in a body without escapes (a string followed by a colon)."""
_FLOAT_FOR_INT = re.compile(r"^Expected `(?:[^`]*\| )?int(?: \|[^`]*)?`, got `float`$")
"""``49.0`` where an integer (or an optional one, ``int | null``) belongs."""
_MAX_FLOAT_FIXES = 64
"""Integral floats fixed one by one at most (a body has far fewer integer fields)."""


_ZH_TYPES = {"int": "整数", "float": "数字", "str": "字符串", "bool": "布尔值", "array": "数组",
             "object": "对象", "null": "null"}  # fmt: skip
_ZH_OPS = {">=": "≥", ">": ">", "<=": "≤", "<": "<"}
_ZH_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^Expected `(?P<want>[^`]*)`, got `(?P<got>[^`]*)`$"), "应为{want}，实际为{got}"),
    (re.compile(r"^Expected `(?P<want>[^`]*)` of length (?P<op>[<>]=?) (?P<n>\S+)$"),
     "应为长度 {op} {n} 的{want}"),
    (re.compile(r"^Expected `(?P<want>[^`]*)` (?P<op>[<>]=?) (?P<n>\S+)$"),
     "应为 {op} {n} 的{want}"),
    (re.compile(r"^Invalid (?:enum )?value (?P<value>.*)$"), "无效取值 {value}"),
    (re.compile(r"^Object missing required field `(?P<name>[^`]*)`$"), "缺少必填字段 `{name}`"),
    (re.compile(r"^unknown field `(?P<name>[^`]*)`: not part of this request; did you mean "
                r"(?P<hint>.*)\?$"), "未知字段 `{name}`：该请求没有这个字段；是否想写 {hint}？"),
    (re.compile(r"^unknown field `(?P<name>[^`]*)`: not part of this request$"),
     "未知字段 `{name}`：该请求没有这个字段"),
    (re.compile(r"^duplicate key `(?P<name>[^`]*)`: each field may appear only once in an "
                r"object$"), "重复的键 `{name}`：同一对象中每个字段只能出现一次"),
    (re.compile(r"^request body is missing: a JSON object is required$"),
     "缺少请求体：需要一个 JSON 对象"),
)  # fmt: skip
"""The validation messages of this module and of msgspec, in Chinese (type names and
values as sent; a message not listed here stays English)."""


def zh_message(message: str) -> str | None:
    """A validation message of this module or of msgspec in Chinese, or ``None``."""
    refusal = zh_refusal(message)
    if refusal is not None:
        return refusal
    advised = advice_in_chinese(message)
    if advised is not None:
        head = zh_message(advised[0])
        return None if head is None else f"{head}{advised[1]}"
    for pattern, text in _ZH_PATTERNS:
        match = pattern.match(message)
        if match is None:
            continue
        values = match.groupdict()
        for name in ("want", "got"):
            if name in values:
                values[name] = "或".join(_ZH_TYPES.get(t, t) for t in values[name].split(" | "))
        if "op" in values:
            values["op"] = _ZH_OPS[values["op"]]
        return text.format(**values)
    return None


def validation_detail(where: str, lang: str) -> str:
    """The ``detail`` of a 400/422 that names fields (``where``: ``"METHOD /path"``)."""
    return f"请求校验失败：{where}" if lang == "zh" else f"Validation failed for {where}"


_VALIDATION_FAILED = "Validation failed for "
_MALFORMED = "JSON is malformed: "
_ZH_MALFORMED = (
    ("input data was truncated", "输入数据不完整（被截断）"),
    ("trailing characters", "末尾有多余字符"),
    ("invalid character", "非法字符"),
    ("invalid escape character in string", "字符串中有非法转义字符"),
    ("invalid utf-8 sequence", "非法的 UTF-8 字节序列"),
    ("nesting too deep", "嵌套过深"),
    ("expected ", "应为 "),
)
"""msgspec's JSON syntax errors (and :func:`_malformed`'s), phrase by phrase, in Chinese;
what is not listed stays as msgspec says it."""


def malformed_in_chinese(detail: str) -> str:
    """``JSON is malformed: input data was truncated`` -> ``JSON 格式错误：输入数据不完整…``."""
    rest = detail.removeprefix(_MALFORMED)
    for english, chinese in _ZH_MALFORMED:
        rest = rest.replace(english, chinese)
    return "JSON 格式错误：" + _AT_BYTE.sub(r"（第 \g<n> 字节）", rest)


_AT_BYTE = re.compile(r" \(byte (?P<n>\d+)\)")


def in_chinese(detail: str, extra: Any) -> tuple[str, Any]:
    """A 400/422's detail and item messages in Chinese where a translation exists (keys,
    sources and suggestions unchanged: they are what a client sends back)."""
    if detail.startswith(_VALIDATION_FAILED):
        detail = validation_detail(detail.removeprefix(_VALIDATION_FAILED), "zh")
    elif detail.startswith(_MALFORMED):
        detail = malformed_in_chinese(detail)
    if isinstance(extra, list):
        extra = [
            {**item, "message": zh_message(item["message"]) or item["message"]}
            if isinstance(item, dict) and isinstance(item.get("message"), str)
            else item
            for item in extra
        ]
    return detail, extra


def declared_lang(body: bytes) -> object:
    """The ``lang`` field of a JSON body that could not be served (for its error's
    language), or ``None``; read only on the error path."""
    try:
        document = msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):
        return None
    return document.get("lang") if isinstance(document, dict) else None


class UnsupportedMediaTypeException(ClientException):
    """415: the request body is not JSON."""

    status_code = HTTP_415_UNSUPPORTED_MEDIA_TYPE


def _is_json(content_type: str | None) -> bool:
    media = (content_type or JSON_MEDIA_TYPE).partition(";")[0].strip().lower()
    return media == JSON_MEDIA_TYPE or (
        media.startswith("application/") and media.endswith("+json")
    )


def validation_item(
    error: msgspec.ValidationError, body_type: Any = None, body: bytes | None = None
) -> dict[str, Any]:
    """msgspec's message split into litestar's ``{key, message, source}`` item; an
    unknown field gets its full path as ``key`` and the closest valid names, a refused
    value a sentence with the valid ones (``body``: to read the value sent)."""
    text = str(error)
    match = _AT_PATH.match(text)
    message, path = text, ""
    if match is not None:
        message, path = match["message"], match["path"].removeprefix(".")
    unknown = _UNKNOWN.match(message)
    if unknown is None:
        message, suggestions = _refusal(message, path, body_type, body)
        item: dict[str, Any] = {"key": path or BODY_KEY, "message": message, "source": "body"}
        if suggestions:
            item["suggestions"] = suggestions
        return item
    name = unknown["name"]
    key = f"{path}.{name}" if path else name
    suggestions = suggest_fields(body_type, path, name) if body_type is not None else []
    hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
    sent = context_len = None
    if name.lower() in ECHOED:  # the advice shows the user's own numbers
        sent = _sent(body, f"{path}.{name}" if path else name)
        context_len = _sent(body, f"{path}.context_len") if path else None
    advice = field_advice(name, sent, context_len)
    item = {
        "key": key,
        "message": f"unknown field `{name}`: not part of this request{hint}"
        + (f" {advice[0]}" if advice else ""),
        "source": "body",
    }
    if suggestions:
        item["suggestions"] = suggestions
    return item


BODY_KEY = "body"
"""The ``key`` of an error about the body as a whole (not an object, missing)."""
_ENUM = re.compile(r"^Invalid (?:enum )?value (?P<value>.*)$", re.S)
_TYPE = re.compile(r"^Expected `(?P<want>[^`]*)`(?:, got `(?P<got>[^`]*)`)?$")


def _refusal(message: str, path: str, body_type: Any, body: bytes | None) -> tuple[str, list[str]]:
    """msgspec's refusal of a value as a sentence naming the field, and what to send
    instead (the valid values closest to it, or the number a text such as ``10M``
    means); msgspec's own words when the path or the message says too little."""
    field = _FIELD_NAME.findall(path)
    if not field:
        typed = _TYPE.match(message)
        return (message, []) if typed is None else (body_refusal(typed["got"]), [])
    name = field[-1]
    enum = _ENUM.match(message)
    if enum is not None and body_type is not None:
        allowed = values_at(body_type, path)
        if allowed:
            sent = _sent(body, path)
            return enum_refusal(name, enum["value"] if sent is _MISSING else sent, allowed)
    bound = BOUND.match(message)
    if bound is not None:
        return bound_refusal(name, bound["want"], bound["op"], bound["n"]), []
    typed = _TYPE.match(message)
    if typed is not None:
        sent = _sent(body, path) if typed["got"] == "str" else _MISSING
        return type_refusal(name, typed["want"], typed["got"], None if sent is _MISSING else sent)
    return message, []


_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MISSING = object()


def _sent(body: bytes | None, path: str) -> object:
    """The value the body holds at msgspec's ``path`` (error path only: one untyped
    decode), or ``_MISSING``."""
    if body is None:
        return _MISSING
    try:
        value: Any = msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):
        return _MISSING
    for m in _STEP.finditer(path if path.startswith((".", "[")) else f".{path}"):
        value = _step(value, m["name"], m["index"])
        if value is None:
            return _MISSING
    return value


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
    """Decode a body into ``body_type`` with the rules of the module, parsing it once when
    it is valid (the common case). ``where`` is ``"METHOD /path"`` for the error detail."""
    if not _is_json(content_type):
        media = (content_type or "").partition(";")[0].strip()
        raise UnsupportedMediaTypeException(
            detail=f"Content-Type must be {JSON_MEDIA_TYPE}, got {media!r}"
        )
    if not body:
        raise ValidationException(
            detail=f"Validation failed for {where}",
            extra=[{"key": BODY_KEY, "message": "request body is missing: a JSON object is "
                    "required", "source": "body"}],
        )  # fmt: skip
    try:
        value = _decoder(body_type).decode(body)
    except msgspec.ValidationError as exc:
        value = _with_integral_floats(exc, body, body_type, where)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise _malformed(exc) from None
    duplicate = duplicate_key(body)
    if duplicate is not None:
        raise ValidationException(
            detail=f"Validation failed for {where}",
            extra=[{"key": duplicate, "message": f"duplicate key `{duplicate.rpartition('.')[2]}`:"
                    " each field may appear only once in an object", "source": "body"}],
        )  # fmt: skip
    return value


def check_body(content_type: str | None, body: bytes, body_type: Any, where: str) -> None:
    """Raise the right 4xx for a body that is not strictly a ``body_type`` document."""
    decode_json(content_type, body, body_type, where)


_DECODERS: dict[object, msgspec.json.Decoder[Any]] = {}


def _decoder(body_type: type[T]) -> msgspec.json.Decoder[T]:
    """One reusable typed decoder per body type (msgspec's own advice for speed)."""
    decoder = _DECODERS.get(body_type)
    if decoder is None:
        decoder = _DECODERS[body_type] = msgspec.json.Decoder(body_type)
    return decoder


def _with_integral_floats(
    error: msgspec.ValidationError, body: bytes, body_type: type[T], where: str
) -> T:
    """The body decoded with ``49.0`` read as ``49`` where the typed pass named an integer
    field holding an integral float; any other error (or a fractional float) is the 400."""
    document: Any = None
    for _ in range(_MAX_FLOAT_FIXES):
        match = _AT_PATH.match(str(error))
        if match is None or not _FLOAT_FOR_INT.match(match["message"]):
            break
        if document is None:
            try:
                document = msgspec.json.decode(body)
            except (msgspec.DecodeError, RecursionError):
                break
        if not _fix_integral(document, match["path"]):
            break
        try:
            return msgspec.convert(document, body_type, strict=True)
        except msgspec.ValidationError as exc:
            error = exc
    if document is None and "contains unknown field" in str(error):
        _refuse_if_malformed(body)
    raise ValidationException(
        detail=f"Validation failed for {where}",
        extra=[validation_item(error, body_type, body)],
    ) from None


def _refuse_if_malformed(body: bytes) -> None:
    """The typed decoder stops at the first key it does not know, so a truncated or
    broken body (``{"a":``) reads as "unknown field `a`"; the client's real mistake is the
    JSON. Checked after an unknown-field error only, by a decoder that skips every value
    (syntax checked, nothing built: a large refused body stays cheap)."""
    try:
        _SYNTAX.decode(body)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise _malformed(exc) from None
    except msgspec.ValidationError:
        pass  # well-formed, not an object: the typed error stands


class _AnyObject(msgspec.Struct):
    """Any JSON object, every field skipped."""


_SYNTAX = msgspec.json.Decoder(_AnyObject)


def _malformed(exc: msgspec.DecodeError | RecursionError) -> ClientException:
    """The 400 for a body that is not JSON, in msgspec's words ("JSON is malformed: …")."""
    if isinstance(exc, RecursionError):
        return ClientException(detail="JSON is malformed: nesting too deep")
    text = str(exc)
    if not text.startswith("JSON is malformed"):
        text = f"JSON is malformed: {text[:1].lower()}{text[1:]}"
    return ClientException(detail=text)


_STEP = re.compile(r"\.(?P<name>[^.\[]+)|\[(?P<index>\d+)\]")


def _fix_integral(document: Any, path: str) -> bool:
    """Replace the integral float at msgspec's ``path`` (``.a.b[1]``) by an int."""
    steps = [(m["name"], m["index"]) for m in _STEP.finditer(path)]
    if not steps:
        return False
    container = document
    for name, index in steps[:-1]:
        container = _step(container, name, index)
        if container is None:
            return False
    name, index = steps[-1]
    value = _step(container, name, index)
    if not (isinstance(value, float) and value.is_integer()):
        return False
    if index is not None:
        container[int(index)] = int(value)
    else:
        container[name] = int(value)
    return True


def _step(container: Any, name: str | None, index: str | None) -> Any:
    if index is not None:
        i = int(index)
        return container[i] if isinstance(container, list) and i < len(container) else None
    return container.get(name) if isinstance(container, dict) else None


class _Pairs(dict[str, Any]):
    """A decoded object that remembers the first key it was given twice."""

    repeated: str | None = None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = _Pairs(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                obj.repeated = key
                break
            seen.add(key)
    return obj


def _repeated_path(value: Any, path: str) -> str | None:
    """The full path (``workload.seq_len``) of the first key repeated in ``value``,
    outer objects first (the decoder builds inner objects before it knows their path)."""
    if isinstance(value, _Pairs):
        if value.repeated is not None:
            return f"{path}.{value.repeated}" if path else value.repeated
        for key, item in value.items():
            found = _repeated_path(item, f"{path}.{key}" if path else key)
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _repeated_path(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def duplicate_key(body: bytes) -> str | None:
    """The full path of the first key that appears twice in one object of a *valid*
    body, or ``None``.

    Called only after the typed decode succeeded, so the body is bounded by the request
    type (no arbitrary arrays of objects). Fast path: when no key text repeats anywhere
    and nothing is escaped, no object can repeat a key.
    """
    keys = _KEY.findall(body)
    if len(keys) == len(set(keys)) and b"\\" not in body:
        return None
    try:
        document = json.loads(body, object_pairs_hook=_no_duplicates)
    except ValueError:
        return None
    return _repeated_path(document, "")
