"""Input errors raised below the HTTP layer, mapped to 400 responses by the app.

Sizing and planning are plain functions; when they find an input they cannot serve (an
unknown preset, heads that do not divide hidden) they raise :class:`InputError` naming the
request field, and ``create_app`` turns it into litestar's validation-error shape
``{status_code, detail, extra: [{key, message, source, suggestions?}]}``.
"""

from __future__ import annotations

from collections.abc import Sequence


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
