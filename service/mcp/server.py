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
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, Literal, TypeVar

import anyio.to_thread
from litestar import asgi
from litestar.handlers import ASGIRouteHandler
from litestar.types import Receive, Scope, Send
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from service.clients import forms
from service.clients.backend import ApiError, Backend

T = TypeVar("T")

INSTRUCTIONS = """Suanli (算力) recommends cloud servers for deep-learning jobs on Alibaba
Cloud, Tencent Cloud, Huawei Cloud (incl. Ascend NPUs) and Volcano Engine, with prices
in CNY. Typical flow: `recommend_servers` for "which server should I rent for ...";
`estimate_resources` for "how much GPU memory / time does ... need"; `list_offers` to
browse prices; `list_models` / `list_accelerators` for valid names. Say the answer's
`summary` to the user as is (it is written in the requested language). A null price is
unknown, never free. 中文用户请传 lang="zh"。"""

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)

Kind = Literal["pretrain", "finetune", "inference", "preprocess"]
Method = Literal["full", "lora", "qlora", "freeze"]

ModelArg = Annotated[
    str | None,
    Field(
        description="Model preset id or alias from list_models (e.g. 'llama-2-7b', "
        "'Qwen/Qwen2.5-7B-Instruct'), or a bare size such as '13b' for a custom model. "
        "Required except for kind='preprocess'."
    ),
]
KindArg = Annotated[
    Kind | None,
    Field(
        description="Job kind. Default 'finetune'; 'inference' when context_len or "
        "concurrency is given; 'preprocess' when data_gb is given."
    ),
]
MethodArg = Annotated[
    Method | None, Field(description="Fine-tuning method (default 'lora'). 微调方法。")
]
TokensArg = Annotated[
    float | None,
    Field(
        description="Training tokens = dataset tokens x epochs (e.g. 20000000). Needed for "
        "time and cost of training."
    ),
]
SeqLenArg = Annotated[int | None, Field(description="Training sequence length in tokens.")]
ContextArg = Annotated[int | None, Field(description="Inference: prompt + output tokens.")]
ConcurrencyArg = Annotated[int | None, Field(description="Inference: sequences served at once.")]
PrecisionArg = Annotated[
    str | None, Field(description="bf16 (default), fp16, fp32, fp8; inference also int8, int4.")
]
DataArg = Annotated[float | None, Field(description="Preprocessing: input data in GB.")]
WorkloadExtraArg = Annotated[
    dict[str, Any] | None,
    Field(
        description="Any other workload field of the REST API, e.g. {'lora_rank': 64, "
        "'framework': 'deepspeed', 'output_tokens': 1e6}."
    ),
]
LangArg = Annotated[
    Literal["zh", "en"] | None,
    Field(description="Language of reasons, advice and summary: 'zh' (default) or 'en'."),
]


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


async def _answer(backend: Backend, ask: Callable[[], T]) -> Any:
    if backend.blocking:  # an HTTP call: keep the event loop free
        return await anyio.to_thread.run_sync(lambda: _call(backend, ask))
    return _call(backend, ask)


def build_mcp(backend: Backend, version: str = "0.1.0") -> MCPServer:
    """The MCP server with Suanli's five tools answering from ``backend``."""
    server = MCPServer(
        "suanli", title="Suanli (算力)", version=version, instructions=_text(INSTRUCTIONS)
    )

    @server.tool(
        name="recommend_servers",
        title="Recommend cloud servers for a deep-learning job / 推荐云服务器",
        annotations=READ_ONLY,
        description=_text("""Rank rentable cloud servers (GPU/NPU instances) for a training,
fine-tuning, serving or preprocessing job across Alibaba, Tencent, Huawei and Volcano
Engine, by total cost (default), time or a balance. 为深度学习任务推荐云服务器并按成本/时间排序。

Pass the model (list_models ids, or '13b'), the kind and method, tokens for training;
narrow with providers / accelerators (names or families: 'A100', '910B') / regions /
billing / max_price_per_hour / budget / deadline_hours.

Returns `options` (rank, provider, region, instance_type, accelerator {name, count,
memory_gib}, nodes, billing, price_per_hour and total_cost in CNY — null means unknown,
never free — hours, memory fit and headroom, reasons, warnings), `advice`, and
`summary`: one sentence in `lang` to say to the user as is. With no option left, options
is empty and `relax` tells which constraint to loosen."""),
    )
    async def recommend_servers(
        model: ModelArg = None,
        kind: KindArg = None,
        method: MethodArg = None,
        tokens: TokensArg = None,
        seq_len: SeqLenArg = None,
        context_len: ContextArg = None,
        concurrency: ConcurrencyArg = None,
        precision: PrecisionArg = None,
        data_gb: DataArg = None,
        workload_extra: WorkloadExtraArg = None,
        providers: Annotated[
            list[str] | None, Field(description="Only these providers, e.g. ['alibaba'].")
        ] = None,
        accelerators: Annotated[
            list[str] | None,
            Field(description="Only these accelerators or families, e.g. ['A100', '910B']."),
        ] = None,
        regions: Annotated[
            list[str] | None, Field(description="Only these regions, e.g. ['cn-beijing'].")
        ] = None,
        billing: Annotated[
            list[Literal["on_demand", "monthly", "spot"]] | None,
            Field(
                description="Allowed billing modes (default on_demand and monthly, plus "
                "spot for interruptible training)."
            ),
        ] = None,
        max_price_per_hour: Annotated[
            float | None, Field(description="At most this many CNY per hour.")
        ] = None,
        budget: Annotated[float | None, Field(description="Total CNY at most.")] = None,
        deadline_hours: Annotated[
            float | None, Field(description="Must finish within this many hours.")
        ] = None,
        objective: Annotated[
            Literal["cost", "time", "balanced"] | None,
            Field(description="Rank by total cost (default), time, or balanced."),
        ] = None,
        top_k: Annotated[int | None, Field(description="How many options (1-50, default 5).")] = (
            None
        ),
        lang: LangArg = None,
    ) -> dict[str, Any]:
        body = forms.recommend_body(
            forms.workload(
                kind=kind,
                model=model,
                method=method,
                tokens=tokens,
                seq_len=seq_len,
                context_len=context_len,
                concurrency=concurrency,
                precision=precision,
                data_gb=data_gb,
                fields=workload_extra,
            ),
            forms.constraints(
                providers=providers or (),
                regions=regions or (),
                gpus=accelerators or (),
                billing=billing or (),
                max_price=max_price_per_hour,
                budget=budget,
                deadline_hours=deadline_hours,
            ),
            objective=objective,
            top_k=top_k,
            lang=lang,
        )
        answer: dict[str, Any] = await _answer(backend, lambda: backend.recommend(body))
        return answer

    @server.tool(
        name="estimate_resources",
        title="Estimate GPU memory, compute and time of a job / 估算显存与时间",
        annotations=READ_ONLY,
        description=_text("""Size a deep-learning job: GPU memory per device (weights, gradients,
optimizer states, activations, KV cache, overhead, in GiB), FLOPs, and — with an
accelerator and count — whether it fits and the hours it takes, plus host vCPU/RAM/disk.
估算训练/推理任务需要多少显存、算力和时间。

Pass the same workload fields as recommend_servers; add accelerator (list_accelerators
names, e.g. 'A100-80GB') and count to place it. Returns `memory`, `compute`, `time`
(null without a placement), `host`, `placement` {fits, headroom_gib} and `assumptions`:
every prior used, in words — mention the main ones when you quote the numbers, they are
estimates."""),
    )
    async def estimate_resources(
        model: ModelArg = None,
        kind: KindArg = None,
        method: MethodArg = None,
        tokens: TokensArg = None,
        seq_len: SeqLenArg = None,
        context_len: ContextArg = None,
        concurrency: ConcurrencyArg = None,
        precision: PrecisionArg = None,
        data_gb: DataArg = None,
        workload_extra: WorkloadExtraArg = None,
        accelerator: Annotated[
            str | None, Field(description="Place on this accelerator, e.g. 'A100-80GB', 'T4'.")
        ] = None,
        count: Annotated[int | None, Field(description="Accelerators in total (default 1).")] = (
            None
        ),
        zero_stage: Annotated[
            int | None, Field(description="ZeRO stage 0-3 (default: the smallest that fits).")
        ] = None,
    ) -> dict[str, Any]:
        work = forms.workload(
            kind=kind,
            model=model,
            method=method,
            tokens=tokens,
            seq_len=seq_len,
            context_len=context_len,
            concurrency=concurrency,
            precision=precision,
            data_gb=data_gb,
            fields=workload_extra,
        )

        def ask() -> Any:
            body = forms.estimate_body(work, gpu=accelerator, count=count, zero_stage=zero_stage)
            return backend.estimate(body)

        try:
            answer: dict[str, Any] = await _answer(backend, ask)
        except forms.FlagError as exc:
            raise ToolError(str(exc).replace("--gpu", "accelerator")) from None
        return answer

    @server.tool(
        name="list_offers",
        title="List cloud GPU/NPU offers and prices / 查询云服务器报价",
        annotations=READ_ONLY,
        description=_text("""List rentable instances across every provider, cheapest first:
one instance type in one region under one billing mode, with its price per hour (CNY)
and per accelerator-hour, the price's source and date, and the specs. 列出各云厂商的 GPU/NPU
实例报价。

Filter by accelerators (names or families: 'A100', 'H800', '910B'), min/max accelerators
per instance, min_accelerator_memory_gib, providers, regions, billing, max_price (CNY/h);
sort by 'price', 'price_per_accelerator', 'memory' or 'total_memory'; group_by
'accelerator' / 'provider' / 'region' for a summary per group. Returns `items`, `total`,
`priced`, optional `groups`, and each catalog's date. Unknown prices are null and listed
last — say "price unknown", never treat them as cheap."""),
    )
    async def list_offers(
        accelerators: Annotated[
            list[str] | None, Field(description="Accelerator names or families, e.g. ['A100'].")
        ] = None,
        min_accelerators: Annotated[
            int | None, Field(description="At least this many accelerators per instance.")
        ] = None,
        max_accelerators: Annotated[
            int | None, Field(description="At most this many accelerators per instance.")
        ] = None,
        min_accelerator_memory_gib: Annotated[
            float | None, Field(description="At least this much memory per accelerator (GiB).")
        ] = None,
        providers: Annotated[list[str] | None, Field(description="Only these providers.")] = None,
        regions: Annotated[list[str] | None, Field(description="Only these regions.")] = None,
        billing: Annotated[
            list[Literal["on_demand", "monthly", "spot"]] | None,
            Field(description="Only these billing modes."),
        ] = None,
        max_price: Annotated[
            float | None, Field(description="At most this many CNY per hour.")
        ] = None,
        priced_only: Annotated[
            bool, Field(description="Leave out offers whose price is unknown.")
        ] = False,
        fold_regions: Annotated[
            bool,
            Field(
                description="One offer per instance type and price with all its regions in "
                "`regions` (default true); false = one offer per region."
            ),
        ] = True,
        sort: Annotated[
            Literal["price", "price_per_accelerator", "memory", "total_memory"] | None,
            Field(description="Order of the list (default 'price')."),
        ] = None,
        group_by: Annotated[
            list[Literal["accelerator", "provider", "region"]] | None,
            Field(description="Summarise per accelerator, provider and/or region."),
        ] = None,
        limit: Annotated[int, Field(description="Offers to return (1-500).")] = 20,
        offset: Annotated[int, Field(description="Offers to skip (paging).")] = 0,
    ) -> dict[str, Any]:
        params = forms.offer_params(
            gpus=accelerators or (),
            providers=providers or (),
            regions=regions or (),
            billing=billing or (),
            max_price=max_price,
            min_gpu_memory=min_accelerator_memory_gib,
            priced_only=priced_only,
            fold_regions=fold_regions,
            sort=sort,
            group_by=group_by or (),
            limit=limit,
            offset=offset,
        )
        if min_accelerators is not None:
            params.append(("min_accelerators", str(min_accelerators)))
        if max_accelerators is not None:
            params.append(("max_accelerators", str(max_accelerators)))
        answer: dict[str, Any] = await _answer(backend, lambda: backend.offers(params))
        return answer

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
