"""The smaller hardening items of issue 16 (item 9) and the start-up checks of item 7:
byte-bounded caches, a /readyz that tells nothing about the infrastructure, one-line
errors for bad settings, one 413 body, security headers, `make run` honouring
SUANLI_HOST/SUANLI_PORT, a quiet install and pinned, bounded dependencies."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from collections.abc import Callable

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.runtime.cache import LocalStore
from service.runtime.observability import CONTENT_SECURITY_POLICY
from service.runtime.settings import SettingsError, load_settings
from tests.conftest import REPO_ROOT

MakeClient = Callable[..., TestClient[Litestar]]
ESTIMATE = {"workload": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora"}}


async def test_local_store_is_bounded_by_bytes() -> None:
    store = LocalStore(max_entries=10_000, max_bytes=8 * 1024 * 1024)
    for i in range(100):
        await store.set(f"k{i}", b"x" * 1024 * 1024)
    assert store.bytes <= 8 * 1024 * 1024
    assert await store.get("k99") is not None  # the newest stay
    assert await store.get("k0") is None  # the oldest went first
    await store.set("huge", b"x" * 9 * 1024 * 1024)  # over the whole budget: not kept
    assert await store.get("huge") is None
    await store.delete("k99")
    assert store.bytes == 7 * 1024 * 1024


def test_readyz_names_no_host_or_port_when_redis_is_down(make_client: MakeClient) -> None:
    client = make_client(redis_url="redis://127.0.0.1:1/0", redis_timeout_s=0.2)
    response = client.get("/readyz")
    assert response.status_code == 503
    assert "127.0.0.1" not in response.text
    assert ":1" not in response.text
    assert response.json()["reasons"] == ["shared store unreachable"]


@pytest.mark.parametrize(
    ("variable", "value", "reason"),
    [
        ("SUANLI_REDIS_URL", "redis://cache:notaport/0", "not a usable Redis URL"),
        ("SUANLI_REDIS_URL", "cache:6379", "expected a URL starting with redis://"),
        ("SUANLI_REDIS_URL", "redis://cache:6379/zero", "must be a number"),
        ("SUANLI_TRUSTED_PROXIES", "10.0.0.0/8,ingress", "'ingress' is not an IP network"),
        ("SUANLI_CLIENT_KEYS", "alice", "entry 1: expected name:key"),
        ("SUANLI_CLIENT_KEYS", "alice:short", "entry 1: the key needs at least 16"),
        ("SUANLI_CLIENT_KEYS", "a:0123456789abcdefgh,b:0123456789abcdefgh", "used twice"),
        ("SUANLI_CLIENT_KEYS", "a:0123456789abcdefgh:lots", "whole number"),
        ("SUANLI_API_KEY", "CHANGE-ME-PLACEHOLDER-admin-token", "placeholder or short"),
        ("SUANLI_API_KEY", "tooshort", "placeholder or short"),
        ("SUANLI_HEADER_TIMEOUT_S", "0", "> 0"),
        ("SUANLI_MAX_CONNECTIONS", "1", ">= 16"),
    ],
)
def test_bad_settings_stop_start_up_with_one_line(variable: str, value: str, reason: str) -> None:
    with pytest.raises(SettingsError) as info:
        load_settings({variable: value})
    message = str(info.value)
    assert message.startswith(f"{variable}: "), message
    assert reason in message
    assert "\n" not in message
    if variable == "SUANLI_API_KEY":
        assert value not in message  # a secret is never echoed


def test_malformed_redis_url_is_one_line_from_the_cli_without_a_traceback() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "service", "serve"],
        env={"SUANLI_REDIS_URL": "redis://:pa55@cache:notaport/0", "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=REPO_ROOT,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("suanli: configuration error: SUANLI_REDIS_URL:")
    assert "pa55" not in result.stderr


def test_one_413_body_on_every_route(make_client: MakeClient) -> None:
    client = make_client()
    big = b'{"workload": "' + b"x" * 70_000 + b'"}'
    bodies = []
    for path in ("/v1/estimate", "/v1/recommend"):
        response = client.post(path, content=big, headers={"content-type": "application/json"})
        assert response.status_code == 413
        bodies.append(response.json())
    assert bodies[0] == bodies[1]
    assert bodies[0]["detail"] == "Request body exceeds 65536 bytes (SUANLI_MAX_BODY_BYTES)"


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/healthz"), ("GET", "/v1/models"), ("GET", "/no-such-page"), ("POST", "/v1/x")],
)
def test_security_headers_on_every_answer(make_client: MakeClient, method: str, path: str) -> None:
    response = make_client().request(method, path)
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    csp = response.headers["content-security-policy"]
    assert csp == CONTENT_SECURITY_POLICY
    assert "default-src 'self'" in csp
    assert "unsafe-inline" not in csp


def test_api_docs_pages_keep_working_without_a_csp(make_client: MakeClient) -> None:
    """litestar's docs viewers load from a CDN; a CSP of 'self' would blank them."""
    response = make_client().get("/schema/openapi.json")
    assert response.status_code == 200
    assert "content-security-policy" not in response.headers
    assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    ("env", "args", "expected"),
    [
        ({"SUANLI_HOST": "0.0.0.0", "SUANLI_PORT": "9123"}, [], "--host 0.0.0.0 --port 9123"),
        ({"SUANLI_PORT": "9123"}, ["PORT=7000"], "--port 7000"),
        ({}, [], "serve"),
    ],
)
def test_make_run_honours_suanli_host_and_port(
    env: dict[str, str], args: list[str], expected: str
) -> None:
    result = subprocess.run(
        ["make", "-n", "run", *args],
        env={"PATH": "/usr/bin:/bin", **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
        cwd=REPO_ROOT,
    )
    serve = [line for line in result.stdout.splitlines() if "suanli serve" in line]
    assert serve, result.stdout
    assert serve[-1].rstrip().endswith(expected), serve[-1]
    if not env and not args:
        assert "--port" not in serve[-1]  # the service's own default (SUANLI_PORT or 8000)


PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement)[0].lower().replace("_", "-")


def test_license_is_an_spdx_string_for_a_quiet_install() -> None:
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    (setuptools,) = (r for r in PYPROJECT["build-system"]["requires"] if "setuptools" in r)
    assert ">=77" in setuptools


def test_every_dependency_has_an_upper_bound_and_a_tested_pin() -> None:
    pins = {}
    for line in (REPO_ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[name.lower().replace("_", "-")] = version
    assert "suanli" not in pins
    requirements = list(PYPROJECT["project"]["dependencies"])
    for extra, reqs in PYPROJECT["project"]["optional-dependencies"].items():
        if extra != "all-clouds":
            requirements += reqs
    for requirement in requirements:
        assert "<" in requirement.split(";")[0], f"no upper bound: {requirement}"
        assert _name(requirement) in pins, f"not pinned in constraints.txt: {requirement}"
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert makefile.count("-c $(CONSTRAINTS)") == 2  # runtime and dev installs
    dockerfile = (REPO_ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    assert 'pip install -c constraints.txt ".${CLOUD_EXTRAS:+[${CLOUD_EXTRAS}]}"' in dockerfile
