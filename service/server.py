"""Run the HTTP service under granian: the one place that configures the server process.

The command line (``suanli serve``) only turns flags into settings and calls :func:`serve`;
everything about the server itself (workers, timeouts, logging, respawn) lives here so it
can be changed and tested in one module.
"""

from __future__ import annotations

from typing import Any

from service.settings import Settings


def serve(settings: Settings) -> int:
    """Validate the app once in this process, then serve it with granian until stopped."""
    from granian import Granian
    from granian.constants import Interfaces

    from service.app import create_app

    create_app(settings)  # validate plugins and overrides once, in this process
    Granian(
        "service.app:create_app",
        factory=True,
        address=settings.host,
        port=settings.port,
        workers=settings.workers,
        interface=Interfaces.ASGI,
        log_level=_granian_level(settings.log_level),
    ).serve()
    return 0


def _granian_level(level: str) -> Any:
    from granian.log import LogLevels

    return LogLevels(level.lower())
