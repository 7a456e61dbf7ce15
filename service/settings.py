"""Settings: one frozen struct read from ``SUANLI_*`` environment variables.

Every setting is an environment variable named ``SUANLI_<FIELD>`` (upper case). Values
are validated by msgspec against the annotated bounds below, so a bad value stops start-up
with one line that names the variable, instead of failing later on a request.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Literal

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
    refresh_interval_s: Seconds = 30.0
    """How often a replica checks the shared catalog fingerprint in Redis."""
    live_prices: bool = False
    """Refresh live prices on a schedule inside the service (needs SDK + credentials)."""
    live_price_ttl_s: Seconds = 3600.0
    """Age after which live prices are served marked stale while a refresh runs."""
    price_estimates: bool = True
    """Estimate prices of unpriced rows with the documented price model
    (service/price_model.py); ``false`` leaves them unknown."""

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
    if field == "plugins":
        return tuple(name.strip() for name in raw.split(",") if name.strip())
    if raw == "" and field in _OPTIONAL_FIELDS:
        return None
    return raw


_SECRET_FIELDS = frozenset({"api_key", "redis_url"})
_OPTIONAL_FIELDS = frozenset({"redis_url", "price_overrides", "api_key"})


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
        return msgspec.convert(values, Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise SettingsError(_explain(exc, values)) from None


def _explain(exc: msgspec.ValidationError, values: Mapping[str, object]) -> str:
    message = str(exc)
    for field in values:
        if f"`$.{field}`" in message or f"`$.{field}[" in message:
            reason = message.split(" - at ")[0]
            return f"{Settings.env_name(field)}: {reason} (got {values[field]!r})"
    return f"invalid SUANLI_* setting: {message}"
