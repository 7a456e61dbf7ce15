"""A real Suanli server in a subprocess on a free loopback port (``suanli serve``).

For tests of clients that must talk to a real server over a socket: the CLI's ``--url``
and the MCP SDK's streamable HTTP client. The server itself is :class:`tests.served.ServedApp`
(one implementation for every test that needs a real process); this module only keeps the
mapping-style entry point those tests use.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

from tests.served import ServedApp, served

LiveServer = ServedApp


@contextlib.contextmanager
def live_server(env: Mapping[str, str] | None = None) -> Iterator[ServedApp]:
    with served(**dict(env or {})) as server:
        yield server
