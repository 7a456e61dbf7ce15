"""The ``suanli`` command (typer + rich): ask, list, serve, refresh prices, speak MCP.

Questions (``recommend``, ``estimate``, ``offers``, ``models``, ``accelerators``) are
answered in this process on the shipped catalogs (:class:`service.clients.backend.LocalBackend`,
the same code the routes run), or by a server with ``--url``. Every one prints a table,
or with ``--json`` the API's exact JSON document for scripts. A refused request prints
the API's reasons (field, why, the closest valid names) and exits with status 2; a
server that cannot be reached exits with 1.

Configuration errors (a bad ``SUANLI_*`` value, an invalid price-override file) stop
with one line naming the culprit and exit status 2.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from enum import Enum, StrEnum
from typing import Annotated, Any

import msgspec
import typer
from rich.console import Console

from service.cli import render
from service.cli.connect import open_backend
from service.clients import forms as build
from service.clients.backend import ApiError, Backend

VERSION = "0.1.0"

app = typer.Typer(
    name="suanli",
    help="Suanli (算力): which cloud server to rent for a deep-learning job, and what it costs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
prices_app = typer.Typer(help="Live price jobs.", no_args_is_help=True)
app.add_typer(prices_app, name="prices")


class Kind(StrEnum):
    pretrain = "pretrain"
    finetune = "finetune"
    inference = "inference"
    preprocess = "preprocess"


class Method(StrEnum):
    full = "full"
    lora = "lora"
    qlora = "qlora"
    freeze = "freeze"


class Objective(StrEnum):
    cost = "cost"
    time = "time"
    balanced = "balanced"


class Lang(StrEnum):
    zh = "zh"
    en = "en"


class Sort(StrEnum):
    price = "price"
    price_per_accelerator = "price_per_accelerator"
    memory = "memory"
    total_memory = "total_memory"


def _value(choice: Enum | None) -> str | None:
    return None if choice is None else str(choice.value)


# --- shared options -------------------------------------------------------------------

UrlOpt = Annotated[
    str | None,
    typer.Option(
        "--url",
        metavar="URL",
        envvar="SUANLI_URL",
        help="Ask this Suanli server instead of answering in-process (e.g. http://127.0.0.1:8000).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the API's JSON document.")]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        metavar="MODEL",
        help="Preset id or alias (see `suanli models`), or a size such as 13b.",
    ),
]
MethodOpt = Annotated[
    Method | None, typer.Option("--method", help="Fine-tuning method (default lora).")
]
TokensOpt = Annotated[
    str | None,
    typer.Option(
        "--tokens", "-t", metavar="N", help="Training tokens (dataset x epochs): 2e7, 20M, 1.5B."
    ),
]
SeqLenOpt = Annotated[int | None, typer.Option("--seq-len", help="Sequence length in tokens.")]
KindOpt = Annotated[
    Kind | None,
    typer.Option(
        "--kind",
        help="Job kind; default finetune (inference with --context-len or "
        "--concurrency, preprocess with --data-gb).",
    ),
]
ContextOpt = Annotated[
    int | None, typer.Option("--context-len", help="Inference: prompt + output tokens.")
]
ConcurrencyOpt = Annotated[
    int | None, typer.Option("--concurrency", help="Inference: sequences served at once.")
]
PrecisionOpt = Annotated[
    str | None, typer.Option("--precision", help="bf16, fp16, fp32, fp8 (inference: int8, int4).")
]
DataOpt = Annotated[
    float | None, typer.Option("--data-gb", help="Preprocessing: input data in GB.")
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Any other workload field, KEY=VALUE (repeatable), e.g. "
        "--set lora_rank=64 --set framework=deepspeed.",
    ),
]


def _workload(
    kind: Kind | None,
    model: str | None,
    method: Method | None,
    tokens: str | None,
    seq_len: int | None,
    context_len: int | None,
    concurrency: int | None,
    precision: str | None,
    data_gb: float | None,
    extra: list[str] | None,
) -> dict[str, Any]:
    return build.workload(
        kind=_value(kind),
        model=model,
        method=_value(method),
        tokens=tokens,
        seq_len=seq_len,
        context_len=context_len,
        concurrency=concurrency,
        precision=precision,
        data_gb=data_gb,
        extra=extra or (),
    )


def _console() -> Console:
    return Console(highlight=False)


def _run(
    url: str | None,
    as_json: bool,
    ask: Callable[[Backend], Any],
    show: Callable[[Console, Any], None],
) -> None:
    """Ask the backend, print a table or the JSON document; API errors -> exit 2 or 1."""
    try:
        backend = open_backend(url)
        answer = ask(backend)
    except build.FlagError as exc:
        _fail(str(exc), 2)
    except ValueError as exc:  # a bad --url
        _fail(str(exc), 2)
    except ApiError as exc:
        if as_json:
            sys.stdout.write(_json(exc.to_builtins()))
        else:
            console = Console(stderr=True, highlight=False)
            console.print(f"[red]Refused[/red] ({exc.status}): {exc.body.detail}")
            for line in exc.lines():
                console.print(f"  {line}", markup=False)
        raise typer.Exit(2 if 400 <= exc.status < 500 else 1) from None
    if as_json:
        sys.stdout.write(_json(answer))
    else:
        show(_console(), answer)


def _json(document: Any) -> str:
    return msgspec.json.format(msgspec.json.encode(document)).decode() + "\n"


def _fail(message: str, code: int) -> None:
    Console(stderr=True, highlight=False).print(f"[red]Error:[/red] {message}")
    raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"suanli {VERSION}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Suanli (算力): which cloud server to rent for a deep-learning job, and what it costs."""


# --- questions --------------------------------------------------------------------------


@app.command()
def recommend(
    model: ModelOpt = None,
    method: MethodOpt = None,
    tokens: TokensOpt = None,
    seq_len: SeqLenOpt = None,
    kind: KindOpt = None,
    provider: Annotated[
        list[str] | None,
        typer.Option("--provider", "-p", metavar="NAME", help="Only this provider (repeatable)."),
    ] = None,
    gpu: Annotated[
        list[str] | None,
        typer.Option(
            "--gpu",
            "-g",
            metavar="NAME",
            help="Only this accelerator or family: A100, 910B (repeat).",
        ),
    ] = None,
    region: Annotated[
        list[str] | None,
        typer.Option("--region", "-r", metavar="REGION", help="Only this region (repeatable)."),
    ] = None,
    objective: Annotated[
        Objective | None,
        typer.Option("--objective", help="Rank by cost (default), time or balanced."),
    ] = None,
    top_k: Annotated[
        int | None, typer.Option("--top-k", "-k", help="Options to show (1-50).")
    ] = None,
    lang: Annotated[Lang | None, typer.Option("--lang", help="zh (default) or en.")] = None,
    billing: Annotated[
        list[str] | None,
        typer.Option("--billing", metavar="MODE", help="on_demand, monthly, spot (repeatable)."),
    ] = None,
    max_price: Annotated[
        float | None, typer.Option("--max-price", help="At most this many CNY per hour.")
    ] = None,
    budget: Annotated[float | None, typer.Option("--budget", help="Total CNY at most.")] = None,
    deadline: Annotated[
        float | None, typer.Option("--deadline", help="Finish within this many hours.")
    ] = None,
    context_len: ContextOpt = None,
    concurrency: ConcurrencyOpt = None,
    precision: PrecisionOpt = None,
    data_gb: DataOpt = None,
    extra: SetOpt = None,
    url: UrlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rank cloud servers for a job: price, time, total cost, fit, and why."""

    def ask(backend: Backend) -> Any:
        body = build.recommend_body(
            _workload(
                kind,
                model,
                method,
                tokens,
                seq_len,
                context_len,
                concurrency,
                precision,
                data_gb,
                extra,
            ),
            build.constraints(
                providers=provider or (),
                regions=region or (),
                gpus=gpu or (),
                billing=billing or (),
                max_price=max_price,
                budget=budget,
                deadline_hours=deadline,
            ),
            objective=_value(objective),
            top_k=top_k,
            lang=_value(lang),
        )
        return backend.recommend(body)

    _run(url, as_json, ask, render.recommendation)


@app.command()
def estimate(
    model: ModelOpt = None,
    method: MethodOpt = None,
    tokens: TokensOpt = None,
    seq_len: SeqLenOpt = None,
    kind: KindOpt = None,
    gpu: Annotated[
        str | None,
        typer.Option(
            "--gpu", "-g", metavar="NAME", help="Place on this accelerator, e.g. A100-80GB."
        ),
    ] = None,
    count: Annotated[
        int | None, typer.Option("--count", "-n", help="Accelerators in total (with --gpu).")
    ] = None,
    zero_stage: Annotated[
        int | None, typer.Option("--zero-stage", help="ZeRO stage 0-3 (default: smallest fit).")
    ] = None,
    context_len: ContextOpt = None,
    concurrency: ConcurrencyOpt = None,
    precision: PrecisionOpt = None,
    data_gb: DataOpt = None,
    extra: SetOpt = None,
    url: UrlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Memory per device, compute, time and host needs of a job (optionally placed)."""

    def ask(backend: Backend) -> Any:
        work = _workload(
            kind,
            model,
            method,
            tokens,
            seq_len,
            context_len,
            concurrency,
            precision,
            data_gb,
            extra,
        )
        return backend.estimate(
            build.estimate_body(work, gpu=gpu, count=count, zero_stage=zero_stage)
        )

    _run(url, as_json, ask, render.estimate)


@app.command()
def offers(
    gpu: Annotated[
        list[str] | None,
        typer.Option(
            "--gpu",
            "-g",
            metavar="NAME",
            help="Accelerator or family: A100, H800, 910B (repeatable).",
        ),
    ] = None,
    count: Annotated[
        str | None,
        typer.Option(
            "--count", "-n", metavar="N|MIN..MAX", help="Accelerators per instance: 8, 2..8, 4.."
        ),
    ] = None,
    provider: Annotated[
        list[str] | None,
        typer.Option("--provider", "-p", metavar="NAME", help="Provider (repeatable)."),
    ] = None,
    region: Annotated[
        list[str] | None,
        typer.Option("--region", "-r", metavar="REGION", help="Region (repeatable)."),
    ] = None,
    max_price: Annotated[
        float | None, typer.Option("--max-price", help="At most this many CNY per hour.")
    ] = None,
    billing: Annotated[
        list[str] | None,
        typer.Option("--billing", metavar="MODE", help="on_demand, monthly, spot (repeatable)."),
    ] = None,
    min_gpu_memory: Annotated[
        float | None, typer.Option("--min-gpu-memory", help="GiB per accelerator, at least.")
    ] = None,
    min_vcpus: Annotated[int | None, typer.Option("--min-vcpus", help="vCPUs, at least.")] = None,
    min_memory: Annotated[
        float | None, typer.Option("--min-memory", help="Host RAM in GiB, at least.")
    ] = None,
    include_cpu: Annotated[
        bool, typer.Option("--include-cpu", help="Also list CPU-only instance types.")
    ] = False,
    priced_only: Annotated[
        bool, typer.Option("--priced-only", help="Leave out offers with an unknown price.")
    ] = False,
    all_regions: Annotated[
        bool,
        typer.Option(
            "--all-regions",
            help="One row per region (default: one per type and price, its regions folded).",
        ),
    ] = False,
    sort: Annotated[Sort | None, typer.Option("--sort", help="Order (default price).")] = None,
    group_by: Annotated[
        list[str] | None,
        typer.Option(
            "--group-by", metavar="KEY", help="accelerator, provider, region (repeatable or a,b)."
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Offers per page (1-500).")] = None,
    offset: Annotated[int | None, typer.Option("--offset", help="Offers to skip.")] = None,
    url: UrlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Offers across every provider, cheapest first (unknown prices last)."""

    def ask(backend: Backend) -> Any:
        params = build.offer_params(
            gpus=gpu or (),
            count=count,
            providers=provider or (),
            regions=region or (),
            billing=billing or (),
            max_price=max_price,
            min_gpu_memory=min_gpu_memory,
            min_vcpus=min_vcpus,
            min_memory=min_memory,
            include_cpu=include_cpu,
            priced_only=priced_only,
            fold_regions=not all_regions,
            sort=_value(sort),
            group_by=group_by or (),
            limit=limit,
            offset=offset,
        )
        return backend.offers(params)

    _run(url, as_json, ask, render.offers)


@app.command()
def models(url: UrlOpt = None, as_json: JsonOpt = False) -> None:
    """Model presets --model can name (exact architectures with sources)."""
    _run(url, as_json, lambda b: b.models(), render.models)


@app.command()
def accelerators(url: UrlOpt = None, as_json: JsonOpt = False) -> None:
    """Accelerators --gpu can name, with dense throughput and memory."""
    _run(url, as_json, lambda b: b.accelerators(), render.accelerators)


# --- running things ---------------------------------------------------------------------


@app.command()
def serve(
    host: Annotated[
        str | None, typer.Option(help="Bind address (default SUANLI_HOST or 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port (default SUANLI_PORT or 8000).")] = None,
    workers: Annotated[
        int | None, typer.Option(help="Worker processes (default SUANLI_WORKERS or 1).")
    ] = None,
) -> None:
    """Serve the HTTP API with granian (flags override SUANLI_* settings)."""
    for flag, name in ((host, "HOST"), (port, "PORT"), (workers, "WORKERS")):
        if flag is not None:
            os.environ[f"SUANLI_{name}"] = str(flag)
    from service.runtime.settings import load_settings
    from service.server import serve as serve_http

    raise typer.Exit(serve_http(load_settings()))


@app.command()
def openapi(
    output: Annotated[
        str | None, typer.Option(help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """Print the OpenAPI document (JSON)."""
    from service.api.openapi import render_openapi
    from service.app import create_app
    from service.runtime.settings import Settings

    text = render_openapi(create_app(Settings()))
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)


@app.command()
def mcp(url: UrlOpt = None) -> None:
    """Run the MCP server on stdio (for Claude Desktop, Cursor, ...)."""
    from service.mcp.server import serve_stdio

    serve_stdio(open_backend(url))


@prices_app.command("refresh")
def prices_refresh(
    provider: Annotated[
        list[str] | None,
        typer.Option("--provider", metavar="NAME", help="Only this provider (repeatable)."),
    ] = None,
    region: Annotated[
        list[str] | None,
        typer.Option("--region", metavar="REGION", help="Only this region (repeatable)."),
    ] = None,
    output: Annotated[
        str | None, typer.Option(help="Also write results and snapshots to this JSON file.")
    ] = None,
    timeout: Annotated[
        float, typer.Option(min=0.1, help="Seconds per fetch attempt of one region.")
    ] = 120.0,
    progress: Annotated[
        bool | None,
        typer.Option(help="Show a progress bar per provider (default: on a terminal)."),
    ] = None,
) -> None:
    """Fetch live prices through each cloud's SDK and publish them (Redis or --output).

    Exits 1 when a provider published nothing, or its credentials are set but nothing
    could be fetched (e.g. the SDK is missing); 2 for a usage error."""
    from service.catalog.live.cli import run_refresh
    from service.cli.progress import RichRefreshProgress

    console = Console(stderr=True, highlight=False)
    show = console.is_terminal if progress is None else progress
    bars = RichRefreshProgress(console) if show else None
    with bars or contextlib.nullcontext():
        code = run_refresh(
            providers=provider or (),
            regions=region or (),
            output=output,
            timeout_s=timeout,
            progress=bars,
            echo=lambda line: console.print(line, markup=False),
        )
    raise typer.Exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``suanli`` and ``python -m service``; returns the exit status."""
    from service.catalog.overrides import OverrideError
    from service.runtime.settings import SettingsError

    try:
        app(args=list(argv) if argv is not None else None, prog_name="suanli")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except (SettingsError, OverrideError) as exc:
        print(f"suanli: configuration error: {exc}", file=sys.stderr)
        return 2
    return 0
