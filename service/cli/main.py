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
import inspect
import os
import sys
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import msgspec
import typer
from rich.console import Console

from service.cli import render
from service.cli.connect import open_backend
from service.clients import forms as build
from service.clients import parameters
from service.clients.backend import ApiError, Backend
from service.clients.parameters import Param, cli_params

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


def _option(param: Param) -> inspect.Parameter:
    """A question's parameter (see :mod:`service.clients.parameters`) as a typer option."""
    kind = param.option_type if param.default is not None else param.option_type | None
    option = typer.Option(*param.flags, metavar=param.metavar, help=param.help)
    return inspect.Parameter(
        param.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=param.default,
        annotation=Annotated[kind, option],
    )


def _question(
    name: str,
    params: tuple[Param, ...],
    ask: Callable[[Backend, dict[str, Any]], Any],
    show: Callable[[Console, Any], None],
    doc: str,
) -> None:
    """Register ``suanli <name>``: the options of ``params``, then ``--url`` and ``--json``."""

    def command(url: str | None = None, as_json: bool = False, **given: Any) -> None:
        _run(url, as_json, lambda backend: ask(backend, given), show)

    options = [_option(p) for p in cli_params(params)]
    for extra, annotation, default in (("url", UrlOpt, None), ("as_json", JsonOpt, False)):
        options.append(
            inspect.Parameter(
                extra, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
            )
        )
    command.__signature__ = inspect.Signature(options)  # type: ignore[attr-defined]
    command.__doc__ = doc
    app.command(name)(command)


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


_question(
    "recommend",
    parameters.RECOMMEND,
    lambda backend, given: backend.recommend(build.recommend_request(given)),
    render.recommendation,
    "Rank cloud servers for a job: price, time, total cost, fit, and why.",
)
_question(
    "estimate",
    parameters.ESTIMATE,
    lambda backend, given: backend.estimate(build.estimate_request(given)),
    render.estimate,
    "Memory per device, compute, time and host needs of a job (optionally placed).",
)
_question(
    "offers",
    parameters.OFFERS,
    lambda backend, given: backend.offers(build.offers_request(given)),
    render.offers,
    "Offers across every provider, cheapest first (unknown prices last).",
)


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
