"""Run the HTTP service under granian: the one place that configures the server process.

The command line (``suanli serve``) only turns flags into settings and calls :func:`serve`;
everything about the server itself (workers, timeouts, logging, respawn) lives here so it
can be changed and tested in one module.

What the configuration protects against (issue "hard to knock over"):

* **A worker dies** (OOM kill, segfault in an extension, ``kill -9``): granian respawns it
  (``respawn_failed_workers``) while the other workers keep serving from the shared
  listening socket; only the requests in flight on the dead worker fail. A worker that
  dies again within granian's crash-loop window (5.5 s after its respawn) stops the
  server with status 1, so the orchestrator's own back-off (Kubernetes CrashLoopBackOff)
  takes over instead of a tight respawn loop.
* **Connection floods / slowloris**: each worker serves at most
  ``SUANLI_MAX_CONNECTIONS`` connections at once (granian's ``backpressure``; further
  ones wait in the kernel backlog of ``SUANLI_BACKLOG``), and a connection that does not
  send a complete request head within ``SUANLI_HEADER_TIMEOUT_S`` — including an idle
  keep-alive connection — is closed, so idle sockets cannot hold the budget for long.
  A body that arrives too slowly is answered 408 by the app (see
  :mod:`service.runtime.observability`).
* **Worker reloads without Redis**: the master creates a private directory that every
  worker of this server watches for the catalog generation (see
  :mod:`service.runtime.catalog_sync`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from typing import Any

from service.runtime.settings import Settings

SYNC_DIR_ENV = "SUANLI_SYNC_DIR"


def serve(settings: Settings) -> int:
    """Validate the app once in this process, then serve it with granian until stopped."""
    from granian import Granian
    from granian.constants import Interfaces
    from granian.http import HTTP1Settings

    from service.app import create_app

    create_app(settings)  # validate plugins and overrides once, in this process
    own_dir = None
    if settings.sync_dir is None and settings.redis_url is None and settings.workers > 1:
        # Workers inherit the environment: they all find (and watch) the same directory.
        own_dir = tempfile.mkdtemp(prefix="suanli-sync-")
        os.environ[SYNC_DIR_ENV] = own_dir
    try:
        Granian(
            "service.app:create_app",
            factory=True,
            address=settings.host,
            port=settings.port,
            workers=settings.workers,
            interface=Interfaces.ASGI,
            backlog=settings.backlog,
            backpressure=settings.max_connections,
            http1_settings=HTTP1Settings(header_read_timeout=int(settings.header_timeout_s * 1000)),
            respawn_failed_workers=True,
            log_level=_granian_level(settings.log_level),
            log_dictconfig=granian_log_config(settings.log_level),
        ).serve()
    finally:
        if own_dir is not None:
            os.environ.pop(SYNC_DIR_ENV, None)
            with contextlib.suppress(OSError):
                shutil.rmtree(own_dir)
    return 0


def granian_log_config(level: str) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` routing granian's own loggers (``_granian`` for
    the server, ``granian.access``) through the service's JSON formatter, so stderr is
    one JSON stream whoever wrote the line."""
    handler = {
        "class": "logging.StreamHandler",
        "formatter": "json",
        "stream": "ext://sys.stderr",
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "service.runtime.observability.JsonFormatter"}},
        "handlers": {"console": handler, "access": dict(handler)},
        "loggers": {
            "_granian": {"handlers": ["console"], "level": level, "propagate": False},
            "granian.access": {"handlers": ["access"], "level": level, "propagate": False},
        },
    }


def _granian_level(level: str) -> Any:
    from granian.log import LogLevels

    return LogLevels(level.lower())
