"""Bodies that are not the JSON object a POST route expects: wrong content types, broken
encodings, hostile JSON syntax, wrong shapes, oversized payloads."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.hostile.conftest import ESTIMATE_OK, RECOMMEND_OK, assert_error, error_item

JSON = {"content-type": "application/json"}
POST_ROUTES = ("/v1/estimate", "/v1/recommend")


def _raw(client: TestClient[Litestar], path: str, body: bytes, **headers: str):  # type: ignore[no-untyped-def]
    return client.post(path, content=body, headers={**JSON, **headers})


# --- content types -------------------------------------------------------------------


@pytest.mark.parametrize("path", POST_ROUTES)
@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "application/xml", "multipart/form-data"],
)
def test_wrong_content_type_is_415_naming_json(
    hostile: TestClient[Litestar], path: str, content_type: str
) -> None:
    """A valid JSON document sent under another media type is refused, not guessed at:
    a client that sends form data or text by mistake learns what to send instead."""
    body = json.dumps(ESTIMATE_OK if path == "/v1/estimate" else RECOMMEND_OK).encode()
    response = hostile.post(path, content=body, headers={"content-type": content_type})
    assert_error(response, 415, mentions=("application/json",))


@pytest.mark.parametrize("path", POST_ROUTES)
def test_form_fields_are_refused(hostile: TestClient[Litestar], path: str) -> None:
    response = hostile.post(path, data={"workload": "llama-2-7b"})
    assert_error(response, 415, mentions=("application/json",))


def test_json_with_charset_parameter_is_accepted(hostile: TestClient[Litestar]) -> None:
    response = hostile.post(
        "/v1/estimate",
        content=json.dumps(ESTIMATE_OK).encode(),
        headers={"content-type": "application/json; charset=utf-8"},
    )
    assert response.status_code == 200, response.text


# --- empty and non-object bodies ---------------------------------------------------------


@pytest.mark.parametrize("path", POST_ROUTES)
def test_empty_body_is_400_naming_the_body(hostile: TestClient[Litestar], path: str) -> None:
    """Without lang, a refused recommend request is told in Chinese (its answer's
    language), an estimate in English; both name the body and that an object is due."""
    response = _raw(hostile, path, b"")
    body = assert_error(response, 400, key="body", source="body")
    message = error_item(body, "body")["message"]
    if path == "/v1/recommend":
        assert message == "缺少请求体：需要一个 JSON 对象", body
    else:
        assert message == "request body is missing: a JSON object is required", body
    english = _raw(hostile, path, b"", **{"accept-language": "en"})
    english_body = assert_error(english, 400, key="body", source="body")
    english_message = error_item(english_body, "body")["message"]
    assert english_message == "request body is missing: a JSON object is required", english_body


_NOT_AN_OBJECT = {  # what each payload is said to be, (en, zh)
    b"[]": ("a list", "数组（列表）"),
    b"[{}]": ("a list", "数组（列表）"),
    b'"workload"': ("a string", "字符串"),
    b"42": ("an integer", "整数"),
    b"null": ("null", " null"),
    b"true": ("true or false", " true 或 false"),
}


@pytest.mark.parametrize("path", POST_ROUTES)
@pytest.mark.parametrize("payload", list(_NOT_AN_OBJECT))
def test_non_object_body_is_400_expected_object(
    hostile: TestClient[Litestar], path: str, payload: bytes
) -> None:
    """The error names the body (key ``body``), says an object is due and what came:
    in English with ``lang``-less estimate or ``accept-language: en``, else Chinese."""
    en, zh = _NOT_AN_OBJECT[payload]
    english = _raw(hostile, path, payload, **{"accept-language": "en"})
    body = assert_error(english, 400, key="body", source="body")
    message = error_item(body, "body")["message"]
    assert message == f"the request body must be a JSON object, not {en}", body
    if path == "/v1/recommend":  # no language asked: the answer's default, Chinese
        body = assert_error(_raw(hostile, path, payload), 400, key="body", source="body")
        assert error_item(body, "body")["message"] == f"请求体应为 JSON 对象，不能是{zh}", body


@pytest.mark.parametrize("path", POST_ROUTES)
def test_empty_object_is_400_naming_workload(hostile: TestClient[Litestar], path: str) -> None:
    response = _raw(hostile, path, b"{}")
    assert_error(response, 400, mentions=("workload",))


def test_array_where_the_workload_object_belongs(hostile: TestClient[Litestar]) -> None:
    body = {"workload": [ESTIMATE_OK["workload"]]}
    response = hostile.post("/v1/recommend", json=body)
    item = error_item(assert_error(response, 400, key="workload"), "workload")
    assert item["message"] == "workload 应为对象，实际为数组（列表）", item
    response = hostile.post("/v1/recommend", json={**body, "lang": "en"})
    item = error_item(assert_error(response, 400, key="workload"), "workload")
    assert item["message"] == "workload must be an object, not a list", item


def test_array_where_constraints_belong(hostile: TestClient[Litestar]) -> None:
    body = {**RECOMMEND_OK, "constraints": ["A100"]}
    response = hostile.post("/v1/recommend", json=body)
    item = error_item(assert_error(response, 400, key="constraints"), "constraints")
    assert item["message"] == "constraints 应为对象，实际为数组（列表）", item
    response = hostile.post("/v1/recommend", json={**body, "lang": "en"})
    item = error_item(assert_error(response, 400, key="constraints"), "constraints")
    assert item["message"] == "constraints must be an object, not a list", item


def test_object_where_a_list_belongs(hostile: TestClient[Litestar]) -> None:
    body = {**RECOMMEND_OK, "constraints": {"providers": {"name": "alibaba"}}}
    response = hostile.post("/v1/recommend", json=body)
    item = error_item(
        assert_error(response, 400, key="constraints.providers"), "constraints.providers"
    )
    assert item["message"] == "providers 应为数组（列表），实际为对象", item
    response = hostile.post("/v1/recommend", json={**body, "lang": "en"})
    item = error_item(
        assert_error(response, 400, key="constraints.providers"), "constraints.providers"
    )
    assert item["message"] == "providers must be a list, not an object", item


# --- encodings and syntax ---------------------------------------------------------------


@pytest.mark.parametrize("path", POST_ROUTES)
def test_invalid_utf8_is_400(hostile: TestClient[Litestar], path: str) -> None:
    payload = b'{"workload": {"kind": "finetune", "model": "llama-\xff\xfe-7b"}}'
    response = _raw(hostile, path, payload)
    assert_error(response, 400, mentions=("utf-8",))


def test_utf16_body_is_400(hostile: TestClient[Litestar]) -> None:
    response = _raw(hostile, "/v1/estimate", json.dumps(ESTIMATE_OK).encode("utf-16"))
    assert_error(response, 400, mentions=("malformed",))


@pytest.mark.parametrize("path", POST_ROUTES)
def test_truncated_json_is_400_malformed(hostile: TestClient[Litestar], path: str) -> None:
    response = _raw(hostile, path, b'{"workload": {"kind": "finetune", ')
    assert_error(response, 400, mentions=("malformed",))


def test_trailing_garbage_is_400_malformed(hostile: TestClient[Litestar]) -> None:
    response = _raw(hostile, "/v1/estimate", json.dumps(ESTIMATE_OK).encode() + b" {}")
    assert_error(response, 400, mentions=("malformed",))


@pytest.mark.parametrize("path", POST_ROUTES)
@pytest.mark.parametrize("depth", [200, 10_000, 30_000])
def test_deeply_nested_json_is_400(hostile: TestClient[Litestar], path: str, depth: int) -> None:
    """Nesting far beyond any real request: a 4xx, never a recursion crash (500)."""
    payload = b'{"workload": ' + b"[" * depth + b"]" * depth + b"}"
    assert len(payload) < 65_536
    response = _raw(hostile, path, payload)
    assert response.status_code == 400, (depth, response.status_code, response.text[:300])
    assert_error(response, 400)


def test_deeply_nested_objects_in_an_ignored_field_are_400(hostile: TestClient[Litestar]) -> None:
    depth = 10_000
    payload = json.dumps(ESTIMATE_OK).encode()[:-1] + b', "x": ' + b'{"a":' * depth
    payload += b"1" + b"}" * depth + b"}"
    response = _raw(hostile, "/v1/estimate", payload)
    assert_error(response, 400)


def test_duplicate_keys_are_refused_naming_the_key(hostile: TestClient[Litestar]) -> None:
    """JSON objects with duplicate keys: RFC 8259 leaves open which one counts, so a
    client and this service could read different requests; both routes refuse them."""
    ok_then_bad = b'{"workload": {"kind": "finetune", "model": "llama-2-7b"}, '
    ok_then_bad += b'"top_k": 3, "top_k": 0}'
    response = _raw(hostile, "/v1/recommend", ok_then_bad)
    assert_error(response, 400, key="top_k")
    bad_then_ok = b'{"workload": {"kind": "finetune", "model": "llama-2-7b",'
    bad_then_ok += b' "model": "no-such-model-xyz", "model": "llama-2-7b", "method": "qlora"}}'
    response = _raw(hostile, "/v1/estimate", bad_then_ok)
    assert_error(response, 400, key="workload.model", mentions=("duplicate key `model`",))
    escaped = b'{"workload": {"kind": "finetune", "model": "llama-2-7b"}, '
    escaped += b'"top_k": 3, "top\\u005fk": 4}'
    assert_error(_raw(hostile, "/v1/recommend", escaped), 400, key="top_k")


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity", b"nan", b"inf"])
def test_nan_and_infinity_literals_are_400_malformed(
    hostile: TestClient[Litestar], literal: bytes
) -> None:
    payload = b'{"workload": {"kind": "pretrain", "model": "llama-2-7b", "tokens": ' + literal
    payload += b"}}"
    response = _raw(hostile, "/v1/estimate", payload)
    assert_error(response, 400, mentions=("malformed",))


@pytest.mark.parametrize(
    ("field", "literal"),
    [
        ("tokens", b"1" + b"0" * 400),  # 10**400, an integer msgspec still decodes
        ("tokens", b"1e400"),  # out of float range
        ("tokens", b"1e308"),
        ("seq_len", b"1" + b"0" * 400),
        ("micro_batch_size", b"9223372036854775808"),  # 2**63: one past int64
        ("seq_len", b"-9223372036854775809"),
    ],
)
def test_huge_numbers_are_400_naming_the_field(
    hostile: TestClient[Litestar], field: str, literal: bytes
) -> None:
    payload = b'{"workload": {"kind": "pretrain", "model": "llama-2-7b", "tokens": 1e9, "'
    payload += field.encode() + b'": ' + literal + b"}}"
    response = _raw(hostile, "/v1/estimate", payload)
    if literal == b"1e400":  # not a float at all: the JSON layer rejects it
        assert_error(response, 400, mentions=("out of range",))
    else:
        assert_error(response, 400, key=f"workload.{field}", source="body")


def test_huge_model_layers_are_400(hostile: TestClient[Litestar]) -> None:
    model = {"params_b": 7, "layers": 10**9, "hidden": 4096, "heads": 32}
    response = hostile.post("/v1/estimate", json={"workload": {"kind": "finetune", "model": model}})
    assert_error(response, 400, key="workload.model.layers", mentions=("<= 1024",))


def test_1e308_params_is_400(hostile: TestClient[Litestar]) -> None:
    response = hostile.post(
        "/v1/estimate", json={"workload": {"kind": "finetune", "model": {"params_b": 1e308}}}
    )
    assert_error(response, 400, key="workload.model.params_b", mentions=("<= 3000",))


# --- size limits -------------------------------------------------------------------------


@pytest.mark.parametrize("path", POST_ROUTES)
def test_oversized_body_is_413(hostile: TestClient[Litestar], path: str) -> None:
    """Bodies over SUANLI_MAX_BODY_BYTES (64 KiB by default) are refused before parsing."""
    padding = "x" * 70_000
    payload = json.dumps({**RECOMMEND_OK, "padding": padding}).encode()
    response = _raw(hostile, path, payload)
    assert_error(response, 413)


def test_oversized_body_without_content_length_is_413(hostile: TestClient[Litestar]) -> None:
    """A chunked upload that never says its size is cut off at the limit as well."""

    def chunks() -> Iterator[bytes]:
        yield b'{"workload": {"kind": "finetune", "model": "llama-2-7b"}, "pad": "'
        for _ in range(100):
            yield b"x" * 1024
        yield b'"}'

    response = hostile.post("/v1/estimate", content=chunks(), headers=JSON)
    assert "content-length" not in {k.lower() for k in response.request.headers}
    assert_error(response, 413)


def test_body_just_under_the_limit_is_parsed(hostile: TestClient[Litestar]) -> None:
    payload = json.dumps(ESTIMATE_OK).encode()[:-1] + b" " * 60_000 + b"}"
    assert len(payload) < 65_536
    assert _raw(hostile, "/v1/estimate", payload).status_code == 200


def test_unknown_padding_field_is_400_naming_it(hostile: TestClient[Litestar]) -> None:
    payload = json.dumps({**ESTIMATE_OK, "padding": "x" * 60_000}).encode()
    assert_error(_raw(hostile, "/v1/estimate", payload), 400, key="padding")


def test_long_string_field_is_400(hostile: TestClient[Litestar]) -> None:
    body = {"workload": {"kind": "finetune", "model": "l" * 5_000}}
    response = hostile.post("/v1/estimate", json=body)
    assert_error(response, 400, key="workload.model")


def test_too_many_list_items_are_400(hostile: TestClient[Litestar]) -> None:
    body = {**RECOMMEND_OK, "constraints": {"regions": ["cn-hangzhou"] * 1_000}}
    response = hostile.post("/v1/recommend", json=body)
    assert_error(response, 400, key="constraints.regions", mentions=("长度 ≤ 64",))
    response = hostile.post("/v1/recommend", json={**body, "lang": "en"})
    assert_error(response, 400, key="constraints.regions", mentions=("length <= 64",))
