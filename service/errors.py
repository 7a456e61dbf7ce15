"""Input errors raised below the HTTP layer, mapped to 400 responses by the app.

Sizing and planning are plain functions; when they find an input they cannot serve (an
unknown preset, heads that do not divide hidden) they raise :class:`InputError` naming the
request field, and ``create_app`` turns it into litestar's validation-error shape
``{status_code, detail, extra: [{key, message, source, suggestions?}]}``.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec


class InputError(ValueError):
    """A request field holds a value the service cannot serve."""

    def __init__(
        self,
        field: str,
        message: str,
        suggestions: Sequence[str] = (),
        status_code: int = 400,
        source: str = "body",
    ) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.suggestions = tuple(suggestions)
        self.status_code = status_code
        self.source = source


class ErrorItem(msgspec.Struct, frozen=True, kw_only=True):
    """One problem in a request: which field (``key``), why, and what would be valid."""

    key: str
    message: str
    source: str
    """``body``, ``query``, ``path`` or ``header``."""
    suggestions: list[str] | None = None


class ErrorBody(msgspec.Struct, frozen=True, kw_only=True):
    """The one error shape of every 4xx/5xx (litestar's, documented in the schema)."""

    status_code: int
    detail: str
    extra: list[ErrorItem] | dict[str, str | list[str] | None] | None = None
