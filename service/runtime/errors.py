"""Input errors raised below the HTTP layer, mapped to 400 responses by the app.

Sizing and planning are plain functions; when they find an input they cannot serve (an
unknown preset, heads that do not divide hidden) they raise :class:`InputError` naming the
request field, and ``create_app`` turns it into litestar's validation-error shape
``{status_code, detail, extra: [{key, message, source, suggestions?}]}``.

A message is written in English and, where a person asking in Chinese would read it, in
Chinese too (``zh``); the response carries the one in the request's language
(:func:`error_lang`: ``lang`` of the body, else ``Accept-Language``). Field names (``key``)
and suggestions are the same in both: they are what a client sends back.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Annotated, Literal

import msgspec

ErrorLang = Literal["zh", "en"]


class InputError(ValueError):
    """A request field holds a value the service cannot serve."""

    def __init__(
        self,
        field: str,
        message: str,
        suggestions: Sequence[str] = (),
        status_code: int = 400,
        source: str = "body",
        zh: str | None = None,
    ) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.suggestions = tuple(suggestions)
        self.status_code = status_code
        self.source = source
        self.zh = zh
        """The message in Chinese (``None``: only the English one exists)."""

    def message_in(self, lang: ErrorLang) -> str:
        """The message in ``lang`` (English when no Chinese one was written)."""
        return self.zh if lang == "zh" and self.zh is not None else self.message


def error_lang(declared: object, accept_language: str | None) -> ErrorLang:
    """The language of an error of a route whose answers are English by default (estimate,
    offers, catalog): the body's ``lang`` when it names zh or en, else the first of zh/en
    in ``Accept-Language``, else English. ``/v1/recommend``, whose answers default to
    Chinese, tells its errors with its own rule (``recommend.error_lang_of``)."""
    if declared in ("zh", "en"):
        return "zh" if declared == "zh" else "en"
    return accepted_lang((accept_language or "")[:256]) or "en"


def accepted_lang(accept_language: str | None) -> ErrorLang | None:
    """The first of zh/en in an ``Accept-Language`` header (``None``: neither)."""
    for part in (accept_language or "").split(","):
        tag = part.split(";")[0].strip().lower()
        if tag.startswith("en"):
            return "en"
        if tag.startswith("zh"):
            return "zh"
    return None


def closest(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The known names closest to ``name`` (all of them when nothing is close)."""
    names = sorted(known)
    return difflib.get_close_matches(name, names, n=n, cutoff=0.5) or names


class ErrorItem(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One problem in a request: which field (``key``), why, and what would be valid."""

    key: Annotated[
        str,
        msgspec.Meta(
            description="The request field at fault, as a path (`workload.model`, "
            "`constraints.providers[0]`, `limit`), or `body` for the body as a whole."
        ),
    ]
    message: Annotated[
        str,
        msgspec.Meta(
            description="Why the value was refused, in a sentence, in the language the answer "
            "would have been in (`lang` of the body, else `Accept-Language`, else Chinese for "
            "`recommend` and English for the other operations)."
        ),
    ]
    source: Annotated[
        str,
        msgspec.Meta(description="Where the field was sent: `body`, `query`, `path` or `header`."),
    ]
    suggestions: Annotated[
        list[str] | None,
        msgspec.Meta(
            description="For an unknown name, the closest valid names (best first); for a "
            "refused value, the closest valid values, as JSON text to send back (`lora` for "
            '`LoRA`, `10000000` for the text `10M`, `["阿里云"]` for a lone string where a '
            "list belongs); absent otherwise."
        ),
    ] = None


class ErrorBody(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The one error shape of every 4xx/5xx of every route, documented in the schema.

    ``omit_defaults``: the error handlers leave ``extra`` (and an item's ``suggestions``)
    out when there is nothing to say, so the contract does not list them as required."""

    status_code: Annotated[
        int, msgspec.Meta(description="The HTTP status code, repeated in the body.")
    ]
    detail: Annotated[
        str,
        msgspec.Meta(
            description="What went wrong, in a sentence (for a 400: which operation refused the "
            "request)."
        ),
    ]
    extra: Annotated[
        list[ErrorItem] | dict[str, str | list[str] | None] | None,
        msgspec.Meta(
            description="Details: for a 400, one item per refused field; for a 404 of a name, the"
            " known names (`known`); for a 500 or 503, the `request_id` to find the "
            "request in the logs. Absent when there is nothing to add."
        ),
    ] = None
