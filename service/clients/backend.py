"""One interface to Suanli's answers, in this process or from a server: CLI and MCP share it.

:class:`LocalBackend` answers from an app's container (the app that mounts the MCP
server, or one :mod:`service.cli.connect` builds with :func:`service.app.create_app`) and
calls the same functions the routes call — the strict body decoder, the planner, the
sizing engine, :func:`service.offers.list_offers` — without HTTP. :class:`HttpBackend`
sends the same requests to a running server (``--url``). Both return the JSON documents
the API returns and raise :class:`ApiError` carrying the API's one error body, so what a
person sees from the CLI or a model sees from an MCP tool is exactly what the API says.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
from litestar.exceptions import HTTPException

from service.runtime.errors import ErrorBody, ErrorItem, ErrorLang, InputError

if TYPE_CHECKING:
    from service.api.state import Suanli

Json = Any
"""A decoded JSON document (the API's response body)."""


class ApiError(Exception):
    """The API refused a request (or could not be reached); ``body`` is its error body."""

    def __init__(self, status: int, body: ErrorBody) -> None:
        super().__init__(body.detail)
        self.status = status
        self.body = body

    def lines(self) -> list[str]:
        """The error in sentences: one per field, with the closest valid names."""
        items = self.body.extra if isinstance(self.body.extra, list) else []
        if not items:
            return [self.body.detail]
        lines = []
        for item in items:
            text = f"{item.key}: {item.message}"
            if item.suggestions and "did you mean" not in item.message:
                text += f" (did you mean {', '.join(item.suggestions)}?)"
            lines.append(text)
        return lines

    def to_builtins(self) -> Json:
        return msgspec.to_builtins(self.body)


class Backend(Protocol):
    """What the CLI and the MCP tools ask; every method returns the API's JSON body."""

    where: str
    """``in-process`` or the server's URL (for messages)."""
    blocking: bool
    """True when a call waits on the network (async callers run it in a thread)."""

    def recommend(self, body: Json) -> Json: ...

    def estimate(self, body: Json) -> Json: ...

    def offers(self, params: Sequence[tuple[str, str]]) -> Json: ...

    def models(self) -> Json: ...

    def accelerators(self) -> Json: ...


def error_from(exc: Exception, where: str, lang: ErrorLang = "en") -> ApiError:
    """The API's error body for an exception a route would have turned into a 4xx, its
    messages in ``lang`` as the route would tell them."""
    from service.api.body import in_chinese, validation_detail

    if isinstance(exc, InputError):
        item = ErrorItem(
            key=exc.field,
            message=exc.message_in(lang),
            source=exc.source,
            suggestions=list(exc.suggestions) or None,
        )
        body = ErrorBody(
            status_code=exc.status_code, detail=validation_detail(where, lang), extra=[item]
        )
        return ApiError(exc.status_code, body)
    if isinstance(exc, HTTPException):
        detail, extra = exc.detail, exc.extra if isinstance(exc.extra, list | dict) else None
        if lang == "zh" and exc.status_code in (400, 422):
            detail, extra = in_chinese(detail, extra)
        document = {"status_code": exc.status_code, "detail": detail, "extra": extra}
        return ApiError(exc.status_code, msgspec.convert(document, ErrorBody))
    raise exc


class LocalBackend:
    """Answers in this process from an app's :class:`~service.api.state.Suanli` container
    (the service's own when the MCP server is mounted in it)."""

    where = "in-process"
    blocking = False
    """Calls are CPU-only and short: run them where the caller runs (the event loop)."""

    def __init__(self, suanli: Suanli) -> None:
        self._suanli = suanli

    def recommend(self, body: Json) -> Json:
        from service.api.body import decode_json
        from service.api.recommend import PATH, error_lang_of, negotiate_lang
        from service.planning.recommend import PlanContext, recommend
        from service.planning.schema import RecommendRequest

        suanli = self._suanli
        where = f"POST {PATH}"
        try:
            request = decode_json("application/json", _encode(body), RecommendRequest, where)
            lang = negotiate_lang(request.lang, None)
            ctx = PlanContext(
                snapshot=suanli.catalog.snapshot,
                accelerators=suanli.accelerators,
                models=suanli.models,
                stale_live=suanli.stale_live_providers(),
                memo=suanli.placements,
            )
            answer = recommend(msgspec.structs.replace(request, lang=lang), ctx, lang)
        except (InputError, HTTPException) as exc:
            raise error_from(exc, where, error_lang_of(_encode(body), None)) from None
        return msgspec.to_builtins(answer)

    def estimate(self, body: Json) -> Json:
        from service.api.body import decode_json
        from service.api.estimate import EstimateRequest
        from service.sizing import estimate

        where = "POST /v1/estimate"
        suanli = self._suanli
        try:
            request = decode_json("application/json", _encode(body), EstimateRequest, where)
            answer = estimate(
                request.workload, request.placement, suanli.models, suanli.accelerators
            )
        except (InputError, HTTPException) as exc:
            raise error_from(exc, where) from None
        return msgspec.to_builtins(answer)

    def offers(self, params: Sequence[tuple[str, str]]) -> Json:
        from service.api.query import parse_query
        from service.offers import OfferQuery, list_offers

        try:
            query = parse_query(params, OfferQuery)
            page = list_offers(query, self._suanli.catalog.snapshot, self._suanli.accelerators)
        except InputError as exc:
            raise error_from(exc, "GET /v1/offers") from None
        return msgspec.to_builtins(page)

    def models(self) -> Json:
        from service.api.models import ModelInfo

        return msgspec.to_builtins([ModelInfo.of(p) for p in self._suanli.models.all()])

    def accelerators(self) -> Json:
        specs = sorted(self._suanli.accelerators.all(), key=lambda s: (s.vendor, s.name))
        return msgspec.to_builtins(specs)


class HttpBackend:
    """The same questions sent to a running Suanli server."""

    blocking = True

    def __init__(self, url: str, timeout_s: float = 30.0) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"--url must be an http(s) URL, got {url!r}")
        self.where = url.rstrip("/")
        self._timeout_s = timeout_s

    def _call(self, method: str, path: str, body: Json = None, query: str = "") -> Json:
        url = f"{self.where}{path}" + (f"?{query}" if query else "")
        data = None if body is None else _encode(body)
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=self._timeout_s) as response:  # noqa: S310
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            payload = exc.read()
            try:
                error = msgspec.json.decode(payload, type=ErrorBody)
            except msgspec.MsgspecError:
                error = ErrorBody(status_code=exc.code, detail=payload.decode(errors="replace"))
            raise ApiError(exc.code, error) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            detail = f"cannot reach the Suanli server at {self.where}: {reason}"
            raise ApiError(503, ErrorBody(status_code=503, detail=detail)) from None

    def recommend(self, body: Json) -> Json:
        return self._call("POST", "/v1/recommend", body)

    def estimate(self, body: Json) -> Json:
        return self._call("POST", "/v1/estimate", body)

    def offers(self, params: Sequence[tuple[str, str]]) -> Json:
        return self._call("GET", "/v1/offers", query=urllib.parse.urlencode(list(params)))

    def models(self) -> Json:
        return self._call("GET", "/v1/models")

    def accelerators(self) -> Json:
        return self._call("GET", "/v1/accelerators")


def _encode(body: Json) -> bytes:
    return msgspec.json.encode(body)
