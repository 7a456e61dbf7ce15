"""The MCP tools through the official SDK's own client, over both transports:

* stdio: ``python -m service mcp`` as a subprocess (what Claude Desktop or Cursor run);
* streamable HTTP: a real server (``suanli serve``, ``SUANLI_MCP=true``) on a loopback
  port, the tools mounted at ``/mcp``.

Every tool's answer is compared with the REST API's answer to the same question, and a
refused request must come back as a tool error that names the field and the closest
valid name.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import BUILTIN_PROVIDERS, REPO_ROOT
from tests.live_server import LiveServer, live_server

TOOLS = {"recommend_servers", "estimate_resources", "list_offers", "list_models",
         "list_accelerators"}  # fmt: skip
QLORA = {"model": "llama-2-7b", "method": "qlora", "tokens": 20_000_000, "seq_len": 1024}
QLORA_WORKLOAD = {"kind": "finetune", **QLORA}

Rest = Callable[[str, Any], Any]


@pytest.fixture(scope="module")
def mcp_server() -> Iterator[LiveServer]:
    with live_server({"SUANLI_MCP": "true"}) as running:
        yield running


def _rest_over(server: LiveServer) -> Rest:
    def rest(path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            server.url + path, data=data, headers={"content-type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    return rest


def _rest_in_process(client: TestClient[Litestar]) -> Rest:
    def rest(path: str, body: Any = None) -> Any:
        response = client.get(path) if body is None else client.post(path, json=body)
        assert response.status_code == 200, response.text
        return response.json()

    return rest


async def exercise(client: Client, rest: Rest) -> None:
    listed = (await client.list_tools()).tools
    assert {tool.name for tool in listed} == TOOLS  # and nothing else: no admin tool
    for tool in listed:
        description = tool.description or ""
        assert "Return" in description or "returns" in description.lower(), tool.name
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    recommend = next(t for t in listed if t.name == "recommend_servers")
    assert "summary" in (recommend.description or "")
    assert "推荐" in (recommend.description or "")

    offers = await client.call_tool("list_offers", {"accelerators": ["A100"], "limit": 3})
    assert not offers.is_error
    expected_offers = rest("/v1/offers?accelerator=A100&limit=3&fold_regions=true", None)
    assert offers.structured_content == expected_offers

    grouped = await client.call_tool(
        "list_offers", {"accelerators": ["A10"], "min_accelerators": 2, "group_by": ["provider"]}
    )
    query = urllib.parse.urlencode(
        {
            "accelerator": "A10",
            "fold_regions": "true",
            "group_by": "provider",
            "limit": 20,
            "min_accelerators": 2,
        }
    )
    assert grouped.structured_content == rest(f"/v1/offers?{query}", None)

    answer = await client.call_tool("recommend_servers", {**QLORA, "lang": "en", "top_k": 3})
    assert not answer.is_error
    expected = rest("/v1/recommend", {"workload": QLORA_WORKLOAD, "lang": "en", "top_k": 3})
    assert answer.structured_content == expected
    assert expected["summary"].startswith("Rent ")

    sized = await client.call_tool("estimate_resources", {**QLORA, "accelerator": "T4", "count": 1})
    assert sized.structured_content == rest(
        "/v1/estimate",
        {"workload": QLORA_WORKLOAD, "placement": {"accelerator": "T4", "count": 1}},
    )

    models = await client.call_tool("list_models", {})
    assert models.structured_content is not None
    ids = [m["id"] for m in models.structured_content["models"]]
    assert ids == [m["id"] for m in rest("/v1/models", None)]
    chips = await client.call_tool("list_accelerators", {})
    assert chips.structured_content is not None
    names = [a["name"] for a in chips.structured_content["accelerators"]]
    assert names == [a["name"] for a in rest("/v1/accelerators", None)]

    refused = await client.call_tool("recommend_servers", {"model": "llama-2-7x", "tokens": 1e6})
    assert refused.is_error
    text = refused.content[0].text  # type: ignore[union-attr]
    assert "workload.model" in text
    assert "llama-2-7b" in text
    refused_zh = await client.call_tool(
        "recommend_servers", {"model": "llama-2-7x", "tokens": 1e6, "lang": "zh"}
    )
    assert refused_zh.is_error
    assert "未知模型预设" in refused_zh.content[0].text  # type: ignore[union-attr]

    unknown = await client.call_tool("list_offers", {"accelerators": ["A1OO"]})
    assert unknown.is_error
    assert "did you mean A10" in unknown.content[0].text


async def test_tools_over_stdio(client: TestClient[Litestar]) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SUANLI_")},
        "SUANLI_PLUGINS": ",".join(BUILTIN_PROVIDERS),
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "service", "mcp"], env=env, cwd=REPO_ROOT
    )
    async with Client(params) as session:
        await exercise(session, _rest_in_process(client))


async def test_tools_over_streamable_http(mcp_server: LiveServer) -> None:
    async with Client(f"{mcp_server.url}/mcp") as session:
        await exercise(session, _rest_over(mcp_server))


async def test_stdio_tools_can_ask_a_server(mcp_server: LiveServer) -> None:
    """``suanli mcp --url``: the same tools answered by a running server."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "service", "mcp", "--url", mcp_server.url],
        cwd=REPO_ROOT,
    )
    async with Client(params) as session:
        answer = await session.call_tool("list_offers", {"accelerators": ["V100"], "limit": 2})
        assert answer.structured_content == _rest_over(mcp_server)(
            "/v1/offers?accelerator=V100&limit=2&fold_regions=true", None
        )


def test_mcp_is_off_by_default(client: TestClient[Litestar]) -> None:
    assert client.post("/mcp", json={}).status_code == 404
    assert "/mcp" not in client.get("/schema/openapi.json").json()["paths"]


def test_http_transport_limits_bodies_like_every_route(mcp_server: LiveServer) -> None:
    """SUANLI_MAX_BODY_BYTES (64 KiB by default) holds for /mcp too."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "x" * 70_000})
    request = urllib.request.Request(
        f"{mcp_server.url}/mcp",
        data=body.encode(),
        headers={"content-type": "application/json", "accept": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 413


def test_http_transport_is_rate_limited_like_the_api(
    make_client: Callable[..., TestClient[Litestar]],
) -> None:
    """The tools run the same planner as /v1: the same per-client budget applies."""
    limited = make_client(mcp=True, rate_limit_per_minute=2)
    statuses = [limited.post("/mcp", json={}).status_code for _ in range(3)]
    assert statuses[2] == 429
    assert 429 not in statuses[:2]
