"""Which backend a command asks: a running server (``--url``) or an app of its own.

The in-process backend builds the application with :func:`service.app.create_app` (the
one place that wires plugins, catalogs and registries). That lives here, above the app,
and not in :mod:`service.clients.backend`: the app mounts the MCP server over a
:class:`~service.clients.backend.LocalBackend`, so the backend module must not import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from service.clients.backend import Backend, HttpBackend, LocalBackend

if TYPE_CHECKING:
    from service.api.state import Suanli
    from service.runtime.settings import Settings


def shipped_backend(settings: Settings | None = None) -> LocalBackend:
    """An app of its own on the catalogs the installed plugins ship (the CLI's and
    ``suanli mcp``'s default): no shared cache or live-price store, quiet logs."""
    # Imported here: a command that talks to a server (``--url``) never builds the app.
    from service.api.state import STATE_KEY
    from service.app import create_app
    from service.runtime.settings import load_settings

    if settings is None:
        settings = msgspec.structs.replace(
            load_settings(), redis_url=None, live_prices=False, log_level="WARNING"
        )
    suanli: Suanli = create_app(settings).state[STATE_KEY]
    suanli.catalog.load()
    return LocalBackend(suanli)


def open_backend(url: str | None) -> Backend:
    """``HttpBackend(url)`` when a URL is given, else the in-process backend."""
    return HttpBackend(url) if url else shipped_backend()
