"""Command line: ``suanli serve``, ``suanli prices refresh``, ``suanli openapi``.

``python -m service …`` is the same program. Configuration errors (a bad ``SUANLI_*``
value, an invalid price-override file) stop start-up with one line naming the culprit
and exit status 2, before any worker process is spawned.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from service.overrides import OverrideError
from service.settings import SettingsError, load_settings


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        code: int = args.run(args)
    except (SettingsError, OverrideError) as exc:
        print(f"suanli: configuration error: {exc}", file=sys.stderr)
        return 2
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="suanli", description=__doc__)
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="serve the HTTP API with granian")
    serve.add_argument("--host", help="bind address (default SUANLI_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default SUANLI_PORT or 8000)")
    serve.add_argument("--workers", type=int, help="worker processes (default SUANLI_WORKERS or 1)")
    serve.set_defaults(run=_serve)

    openapi = commands.add_parser("openapi", help="print the OpenAPI document (JSON)")
    openapi.add_argument("--output", help="write to this file instead of stdout")
    openapi.set_defaults(run=_openapi)

    prices = commands.add_parser("prices", help="live price jobs")
    price_commands = prices.add_subparsers(required=True, metavar="ACTION")
    refresh = price_commands.add_parser("refresh", help="fetch live prices and publish them")
    refresh.add_argument("--provider", action="append", help="only this provider (repeatable)")
    refresh.add_argument("--region", action="append", help="only this region (repeatable)")
    refresh.add_argument("--output", help="also write the snapshot(s) to this JSON file")
    refresh.set_defaults(run=_refresh_prices)
    return parser


def _serve(args: argparse.Namespace) -> int:
    for flag, name in ((args.host, "HOST"), (args.port, "PORT"), (args.workers, "WORKERS")):
        if flag is not None:
            os.environ[f"SUANLI_{name}"] = str(flag)
    from service.server import serve

    return serve(load_settings())


def _openapi(args: argparse.Namespace) -> int:
    from service.openapi import render_openapi

    text = render_openapi()
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


def _refresh_prices(args: argparse.Namespace) -> int:
    from service.live_prices import refresh_cli

    argv: list[str] = []
    for provider in args.provider or ():
        argv += ["--provider", provider]
    for region in args.region or ():
        argv += ["--region", region]
    if args.output:
        argv += ["--output", args.output]
    return refresh_cli(argv)


if __name__ == "__main__":
    raise SystemExit(main())
