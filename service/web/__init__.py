"""The page for people: ``GET /`` and its assets under ``/static/``.

Everything is served from this package (no CDN, so it works in an offline cluster) and
needs nothing but ``'self'``: the HTML has no inline script or style, so the page sends
``Content-Security-Policy: default-src 'self'`` itself and is tested under it. The page
is a client of the public API (``/v1/recommend``, ``/v1/models``, ``/v1/providers``):
it has no route of its own beyond the files.
"""

from __future__ import annotations

from pathlib import Path

from litestar import Response, get
from litestar.router import Router
from litestar.static_files import create_static_files_router
from litestar.types import ControllerRouterHandler

STATIC_DIR = Path(__file__).resolve().parent / "static"
CSP = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"}
_INDEX = (STATIC_DIR / "index.html").read_bytes()


@get("/", include_in_schema=False, sync_to_thread=False)
def index() -> Response[bytes]:
    """The form and result view (static; the page calls the API from the browser)."""
    return Response(
        _INDEX,
        media_type="text/html",
        headers={**_HEADERS, "Cache-Control": "no-cache"},
    )


async def _static_headers(response: Response[object]) -> Response[object]:
    response.headers.update(_HEADERS)
    return response


def routes() -> list[ControllerRouterHandler]:
    static: Router = create_static_files_router(
        path="/static",
        directories=[STATIC_DIR],
        include_in_schema=False,
        send_as_attachment=False,
        after_request=_static_headers,
    )
    return [index, static]
