"""Settings: one frozen struct read from ``SUANLI_*`` environment variables.

Every setting is an environment variable named ``SUANLI_<FIELD>`` (upper case). Values
are validated by msgspec against the annotated bounds below, so a bad value stops start-up
with one line that names the variable, instead of failing later on a request.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from typing import Annotated, Literal
from urllib.parse import urlsplit

import msgspec

ENV_PREFIX = "SUANLI_"

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]
Port = Annotated[int, msgspec.Meta(ge=1, le=65535)]
Seconds = Annotated[float, msgspec.Meta(gt=0, le=86_400 * 30)]


class SettingsError(ValueError):
    """A ``SUANLI_*`` variable has an invalid value; the message names it."""


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """Runtime configuration. Field ``x`` is read from ``SUANLI_X``."""

    host: str = "127.0.0.1"
    port: Port = 8000
    workers: Annotated[int, msgspec.Meta(ge=1, le=64)] = 1
    log_level: LogLevel = "INFO"
    redis_url: str | None = None
    """``redis://…``; unset = embedded in-memory cache (no Redis needed)."""
    cache_ttl_s: Seconds = 600.0
    plugins: tuple[str, ...] | None = None
    """Allow-list of plugin entry-point names (comma separated); unset = all installed."""
    price_overrides: str | None = None
    """Path of a TOML file with operator price overrides (negotiated discounts)."""
    api_key: str | None = None
    """Bearer token for admin routes; unset = admin routes disabled."""
    provider_timeout_s: Seconds = 5.0
    request_timeout_s: Seconds = 10.0
    redis_timeout_s: Seconds = 0.5
    """Socket timeout for every Redis call: a slow Redis degrades to "uncached", not slow."""
    rate_limit_per_minute: Annotated[int, msgspec.Meta(ge=0, le=1_000_000)] = 600
    """Requests per client per minute on /v1 routes; 0 disables rate limiting."""
    max_body_bytes: Annotated[int, msgspec.Meta(ge=1024, le=10_485_760)] = 65_536
    refresh_interval_s: Seconds = 1.0
    """How often every worker checks the shared catalog generation (and reports its own)."""
    live_prices: bool = False
    """Refresh live prices on a schedule inside the service (needs SDK + credentials)."""
    live_price_ttl_s: Seconds = 3600.0
    """Age after which live prices are served marked stale while a refresh runs."""
    price_estimates: bool = True
    """Estimate prices of unpriced rows with the documented price model
    (service/catalog/price_model.py); ``false`` leaves them unknown."""
    backlog: Annotated[int, msgspec.Meta(ge=128, le=65_535)] = 2048
    """Kernel listen backlog: connections beyond the workers' budget wait here."""
    max_connections: Annotated[int, msgspec.Meta(ge=16, le=100_000)] = 2048
    """Connection budget per worker (granian backpressure): connections served at once."""
    header_timeout_s: Annotated[float, msgspec.Meta(gt=0, le=300)] = 5.0
    """A connection that sends no complete request head in this time (idle keep-alive
    included) is closed: idle sockets cannot hold the connection budget."""
    cache_max_bytes: Annotated[int, msgspec.Meta(ge=1_048_576, le=17_179_869_184)] = 67_108_864
    """Bytes of answers the in-memory response cache of one worker may hold."""
    trusted_proxies: tuple[str, ...] = ()
    """CIDRs of proxies whose ``X-Forwarded-For`` names the client (comma separated)."""
    client_keys: str | None = None
    """Per-client API keys: ``name:key[:limit_per_minute]``, comma separated."""
    sync_dir: str | None = None
    """Directory the workers of one server share for catalog generations when Redis is
    off; ``suanli serve`` creates one itself, so this rarely needs setting."""
    mcp: bool = False
    """Serve the MCP tools over streamable HTTP at ``/mcp`` (read-only tools, no admin)."""

    def __repr__(self) -> str:
        """Like the default, but secrets (API key, Redis URL credentials) are masked."""
        shown = []
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if name in _SECRET_FIELDS and value is not None:
                value = "***"
            shown.append(f"{name}={value!r}")
        return f"Settings({', '.join(shown)})"

    @classmethod
    def env_name(cls, field: str) -> str:
        return ENV_PREFIX + field.upper()


def _parse_env_value(field: str, raw: str) -> object:
    if field in _LIST_FIELDS:
        return tuple(name.strip() for name in raw.split(",") if name.strip())
    if raw == "" and field in _OPTIONAL_FIELDS:
        return None
    return raw


_SECRET_FIELDS = frozenset({"api_key", "redis_url", "client_keys"})
_OPTIONAL_FIELDS = frozenset({"redis_url", "price_overrides", "api_key", "client_keys", "sync_dir"})
_LIST_FIELDS = frozenset({"plugins", "trusted_proxies"})


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Build :class:`Settings` from the environment; raise :class:`SettingsError` naming
    the first bad variable. Unknown ``SUANLI_*`` variables are ignored on purpose (tests
    and tools use ``SUANLI_TEST_*``)."""
    env = os.environ if environ is None else environ
    values: dict[str, object] = {}
    for field in Settings.__struct_fields__:
        raw = env.get(Settings.env_name(field))
        if raw is not None:
            values[field] = _parse_env_value(field, raw)
    try:
        settings = msgspec.convert(values, Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise SettingsError(_explain(exc, values)) from None
    check_settings(settings)
    return settings


MIN_API_KEY_LENGTH = 16
_PLACEHOLDER = re.compile(r"change[-_ ]?me|placeholder|example|secret-here|<.*>", re.IGNORECASE)
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
_CLIENT_NAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class ClientKey(msgspec.Struct, frozen=True, kw_only=True):
    """One API client of ``SUANLI_CLIENT_KEYS``: rate limited on its own budget."""

    name: str
    key: str
    limit_per_minute: int | None = None
    """``None``: the default ``SUANLI_RATE_LIMIT_PER_MINUTE``."""

    def __repr__(self) -> str:
        return f"ClientKey(name={self.name!r}, key='***', limit_per_minute={self.limit_per_minute})"


def check_settings(settings: Settings) -> None:
    """Checks across and inside values that the annotations cannot express; raises
    :class:`SettingsError` with one line naming the variable (start-up calls this)."""
    key = settings.api_key
    if key and (len(key) < MIN_API_KEY_LENGTH or _PLACEHOLDER.search(key)):
        raise SettingsError(
            f"SUANLI_API_KEY: refusing a placeholder or short admin key (it needs at least "
            f"{MIN_API_KEY_LENGTH} characters and no placeholder words; generate one with "
            "`openssl rand -hex 32`)"
        )
    url = settings.redis_url
    if url is not None:
        _check_redis_url(url)
    for cidr in settings.trusted_proxies:
        try:
            ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            raise SettingsError(
                f"SUANLI_TRUSTED_PROXIES: {cidr!r} is not an IP network (use CIDRs such as "
                "10.0.0.0/8, comma separated)"
            ) from None
    parse_client_keys(settings.client_keys)


def _check_redis_url(url: str) -> None:
    from redis.connection import parse_url

    if not url.startswith(_REDIS_SCHEMES):
        raise SettingsError(
            "SUANLI_REDIS_URL: expected a URL starting with redis://, rediss:// or unix:// "
            "(e.g. redis://redis:6379/0)"
        )
    try:
        parse_url(url)  # type: ignore[no-untyped-call]
        path = urlsplit(url).path.strip("/")
        if url.startswith(("redis://", "rediss://")) and path and not path.isdigit():
            raise ValueError("the database after the last '/' must be a number")
    except (ValueError, TypeError) as exc:
        # The message may quote the URL; never echo it (it can hold a password).
        reason = str(exc).replace(url, "<url>")[:160]
        raise SettingsError(f"SUANLI_REDIS_URL: not a usable Redis URL ({reason})") from None


def parse_client_keys(raw: str | None) -> dict[str, ClientKey]:
    """``SUANLI_CLIENT_KEYS`` as a mapping from key to client; raises
    :class:`SettingsError` naming the bad entry by position (never echoing a key)."""
    clients: dict[str, ClientKey] = {}
    if not raw:
        return clients
    names: set[str] = set()
    for position, entry in enumerate((e.strip() for e in raw.split(",")), start=1):
        if not entry:
            continue
        parts = entry.split(":")
        problem = None
        limit: int | None = None
        if len(parts) not in (2, 3):
            problem = "expected name:key or name:key:limit_per_minute"
        elif not _CLIENT_NAME.match(parts[0]):
            problem = "the name may use letters, digits, '.', '_' and '-' (1-64 characters)"
        elif len(parts[1]) < MIN_API_KEY_LENGTH:
            problem = f"the key needs at least {MIN_API_KEY_LENGTH} characters"
        elif parts[0] in names or parts[1] in clients:
            problem = "the name or key is used twice"
        elif len(parts) == 3:
            if not parts[2].isdigit() or not 1 <= int(parts[2]) <= 1_000_000:
                problem = "the limit must be a whole number of requests per minute, 1-1000000"
            else:
                limit = int(parts[2])
        if problem:
            raise SettingsError(f"SUANLI_CLIENT_KEYS: entry {position}: {problem}")
        names.add(parts[0])
        clients[parts[1]] = ClientKey(name=parts[0], key=parts[1], limit_per_minute=limit)
    return clients


def _explain(exc: msgspec.ValidationError, values: Mapping[str, object]) -> str:
    message = str(exc)
    for field in values:
        if f"`$.{field}`" in message or f"`$.{field}[" in message:
            reason = message.split(" - at ")[0]
            return f"{Settings.env_name(field)}: {reason} (got {values[field]!r})"
    return f"invalid SUANLI_* setting: {message}"
