"""Suanli as MCP tools (official ``mcp`` SDK): stdio (``suanli mcp``) and streamable HTTP.

Five read-only tools, named for what they do — ``recommend_servers``,
``estimate_resources``, ``list_offers``, ``list_models``, ``list_accelerators`` — over a
:class:`~service.clients.backend.Backend`, so a model gets exactly the API's answers and the
API's refusals (field, reason, closest valid names) as a tool error it can act on. No
admin tool exists: nothing here can reload a catalog or change a setting.

Over HTTP the tools are mounted in the service at ``/mcp`` when ``SUANLI_MCP=true``
(:func:`mcp_mount`): stateless JSON responses, so any replica answers any request and no
session has to stick to one pod. The SDK's session manager runs inside the app's
lifespan.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from litestar import asgi
from litestar.handlers import ASGIRouteHandler
from litestar.types import Receive, Scope, Send
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from service.clients import forms, parameters
from service.clients.backend import ApiError, Backend
from service.clients.parameters import Param, tool_params

T = TypeVar("T")

INSTRUCTIONS = """Suanli (算力) recommends cloud servers for deep-learning jobs on Alibaba
Cloud, Tencent Cloud, Huawei Cloud (incl. Ascend NPUs) and Volcano Engine, with prices
in CNY. Typical flow: `recommend_servers` for "which server should I rent for ...";
`estimate_resources` for "how much GPU memory / time does ... need"; `list_offers` to
browse prices; `list_models` / `list_accelerators` for valid names. Say the answer's
`summary` to the user as is (it is written in the requested language). A null price is
unknown, never free. 中文用户请传 lang="zh"。"""

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


def _argument(param: Param) -> inspect.Parameter:
    """A question's parameter (see :mod:`service.clients.parameters`) as a tool argument."""
    default = param.argument_default
    kind = param.type if default is not None else param.type | None
    return inspect.Parameter(
        param.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[kind, Field(description=param.description)],
    )


def _tool_function(
    backend: Backend, name: str, params: tuple[Param, ...], ask: Callable[[dict[str, Any]], Any]
) -> Callable[..., Awaitable[dict[str, Any]]]:
    """An async function whose signature is the tool's arguments (the SDK reads its
    schema from the signature; the function's name titles the arguments' schema) and
    whose answer is ``ask`` of the arguments given."""

    async def tool(**given: Any) -> dict[str, Any]:
        answer: dict[str, Any] = await _answer(backend, lambda: ask(given))
        return answer

    arguments = [_argument(p) for p in tool_params(params)]
    tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        arguments, return_annotation=dict[str, Any]
    )
    tool.__name__ = tool.__qualname__ = name
    return tool


def _text(wrapped: str) -> str:
    """A description as paragraphs of one line each (source lines are wrapped at 92)."""
    paragraphs = wrapped.strip().split("\n\n")
    return "\n\n".join(" ".join(p.split("\n")) for p in paragraphs)


def _call(backend: Backend, ask: Callable[[], T]) -> Any:
    """Run a backend call; the API's refusal becomes a tool error the model can read."""
    try:
        return ask()
    except ApiError as exc:
        raise ToolError("Suanli refused the request: " + "; ".join(exc.lines())) from None
    except forms.FlagError as exc:  # says "--gpu", the CLI's name of `accelerator`
        raise ToolError(str(exc).replace("--gpu", "accelerator")) from None


async def _answer(backend: Backend, ask: Callable[[], T]) -> Any:
    if backend.blocking:  # an HTTP call: keep the event loop free
        return await anyio.to_thread.run_sync(lambda: _call(backend, ask))
    return _call(backend, ask)


def build_mcp(backend: Backend, version: str = "0.1.0") -> MCPServer:
    """The MCP server with Suanli's five tools answering from ``backend``."""
    server = MCPServer(
        "suanli", title="Suanli (算力)", version=version, instructions=_text(INSTRUCTIONS)
    )

    def add(
        name: str,
        title: str,
        description: str,
        params: tuple[Param, ...],
        ask: Callable[[dict[str, Any]], Any],
    ) -> None:
        """A question's tool: its arguments from ``params``, its answer from ``ask``."""
        register = server.tool(
            name=name, title=title, annotations=READ_ONLY, description=_text(description)
        )
        register(_tool_function(backend, name, params, ask))

    add(
        "recommend_servers",
        "Recommend cloud servers for a deep-learning job / 推荐云服务器",
        """Rank rentable cloud servers (GPU/NPU instances) for a training,
fine-tuning, serving or preprocessing job across Alibaba, Tencent, Huawei and Volcano
Engine, by total cost (default), time or a balance. 为深度学习任务推荐云服务器并按成本/时间排序。

Pass the model (list_models ids, or '13b'), the kind and method, tokens for training;
narrow with providers / accelerators (names or families: 'A100', '910B') / regions /
billing / max_price_per_hour / budget / deadline_hours.

Returns `options` (rank, provider, region, instance_type, accelerator {name, count,
memory_gib}, nodes, billing, price_per_hour and total_cost in CNY — null means unknown,
never free — hours, memory fit and headroom, reasons, warnings), `advice`, and
`summary`: one sentence in `lang` to say to the user as is. With no option left, options
is empty and `relax` tells which constraint to loosen.""",
        parameters.RECOMMEND,
        lambda given: backend.recommend(forms.recommend_request(given)),
    )

    add(
        "estimate_resources",
        "Estimate GPU memory, compute and time of a job / 估算显存与时间",
        """Size a deep-learning job: GPU memory per device (weights, gradients,
optimizer states, activations, KV cache, overhead, in GiB), FLOPs, and — with an
accelerator and count — whether it fits and the hours it takes, plus host vCPU/RAM/disk.
估算训练/推理任务需要多少显存、算力和时间。

Pass the same workload fields as recommend_servers; add accelerator (list_accelerators
names, e.g. 'A100-80GB') and count to place it. Returns `memory`, `compute`, `time`
(null without a placement), `host`, `placement` {fits, headroom_gib} and `assumptions`:
every prior used, in words — mention the main ones when you quote the numbers, they are
estimates.""",
        parameters.ESTIMATE,
        lambda given: backend.estimate(forms.estimate_request(given)),
    )

    add(
        "list_offers",
        "List cloud GPU/NPU offers and prices / 查询云服务器报价",
        """List rentable instances across every provider, cheapest first:
one instance type in one region under one billing mode, with its price per hour (CNY)
and per accelerator-hour, the price's source and date, and the specs. 列出各云厂商的 GPU/NPU
实例报价。

Filter by accelerators (names or families: 'A100', 'H800', '910B'), min/max accelerators
per instance, min_accelerator_memory_gib, providers, regions, billing, max_price (CNY/h);
sort by 'price', 'price_per_accelerator', 'memory' or 'total_memory'; group_by
'accelerator' / 'provider' / 'region' for a summary per group. Returns `items`, `total`,
`priced`, optional `groups`, and each catalog's date. Unknown prices are null and listed
last — say "price unknown", never treat them as cheap.""",
        parameters.OFFERS,
        lambda given: backend.offers(forms.offers_request(given)),
    )

    @server.tool(
        name="list_models",
        title="List model presets / 模型列表",
        annotations=READ_ONLY,
        description=_text("""Returns the model presets the other tools accept as `model`:
id, display name, kind, parameters in billions, aliases (any of them works) and the
source of the architecture. Call it when a user names a model and you are unsure of the
id. 可用的模型预设（id 与别名）。"""),
    )
    async def list_models() -> dict[str, Any]:
        presets = await _answer(backend, backend.models)
        keep = ("id", "display_name", "kind", "params_b", "active_params_b", "aliases", "source")
        return {"models": [{k: p.get(k) for k in keep} for p in presets]}

    @server.tool(
        name="list_accelerators",
        title="List accelerators / 加速卡列表",
        annotations=READ_ONLY,
        description=_text("""Returns the GPUs and NPUs the catalogs use, with memory (GiB),
dense BF16 / FP16 TFLOPS, memory bandwidth (GB/s), software stack (cuda, or cann for
Ascend) and aliases. Use these names for `accelerators` / `accelerator` in the other
tools. 可用的 GPU/NPU 名称与规格。"""),
    )
    async def list_accelerators() -> dict[str, Any]:
        specs = await _answer(backend, backend.accelerators)
        keep: tuple[str, ...] = ("name", "vendor", "memory_gib", "bf16_tflops", "fp16_tflops")
        keep += ("mem_bandwidth_gbps", "stack", "aliases", "source")
        return {"accelerators": [{k: s.get(k) for k in keep} for s in specs]}

    return server


def serve_stdio(backend: Backend) -> None:
    """``suanli mcp``: the tools on stdin/stdout until the client closes them."""
    build_mcp(backend).run("stdio")


class McpMount:
    """The tools over streamable HTTP, as a litestar ASGI mount plus its lifespan."""

    def __init__(
        self, backend: Backend, host: str, max_body_bytes: int, path: str = "/mcp"
    ) -> None:
        self.server = build_mcp(backend)
        # Builds the SDK's session manager (stateless, JSON answers: any replica can
        # answer any request); its DNS-rebinding guard is on for a loopback `host`, and
        # bodies are limited like every other route's (SUANLI_MAX_BODY_BYTES).
        self.server.streamable_http_app(
            streamable_http_path="/",
            stateless_http=True,
            json_response=True,
            host=host,
            max_request_body_size=max_body_bytes,
        )
        manager = self.server.session_manager

        @asgi(path, is_mount=True, copy_scope=True, include_in_schema=False)
        async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
            await manager.handle_request(scope, receive, send)  # type: ignore[arg-type]

        self.route: ASGIRouteHandler = mcp_endpoint

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: object) -> AsyncIterator[None]:
        async with self.server.session_manager.run():
            yield
