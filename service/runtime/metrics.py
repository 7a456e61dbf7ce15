"""Process-wide Prometheus metrics beyond litestar's request metrics.

They live in ``prometheus_client``'s default registry, which litestar's
``PrometheusController`` exposes at ``/metrics``. Defined once per process (a metric
cannot be registered twice), so every app built in the same process shares them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from prometheus_client import Counter, Gauge

CACHE_EVENTS = Counter(
    "suanli_cache_events_total",
    "Response-cache lookups by result (hit, miss, error, bypass).",
    ["namespace", "result"],
)
STORE_ERRORS = Counter(
    "suanli_store_errors_total",
    "Failed calls to the shared store (Redis); the service answered without it.",
    ["store"],
)
STORE_UP = Gauge(
    "suanli_store_up",
    "1 while the shared store (Redis) answers, 0 while the service runs without it.",
    ["store"],
)
PROVIDER_FAILURES = Counter(
    "suanli_provider_failures_total",
    "Provider plugins dropped from a catalog load (raised, timed out, malformed rows).",
    ["provider"],
)
CATALOG_RELOADS = Counter(
    "suanli_catalog_reloads_total",
    "Catalog (re)loads by trigger (startup, admin, shared) and outcome.",
    ["trigger", "outcome"],
)
CORRUPT_ENTRIES = Counter(
    "suanli_corrupt_entries_total",
    "Entries read from the shared store (Redis) that failed validation and were ignored "
    "(kind: live_snapshot, cached_answer, rate_limit, generation, worker_report).",
    ["kind"],
)
PLUGIN_CONFLICTS = Counter(
    "suanli_plugin_conflicts_total",
    "Plugin registrations refused because an earlier one holds the name "
    "(kind: provider, accelerator); the first registration stands.",
    ["kind", "name"],
)
RATE_LIMITED = Counter(
    "suanli_rate_limited_total",
    "Requests refused with 429 by the per-client rate limit, by how the client was "
    "identified (address, client_key).",
    ["identity"],
)
LIVE_PRICE_AGE = Gauge(
    "suanli_live_price_age_seconds",
    "Age of the live-price snapshot in use per provider (NaN: no live snapshot yet).",
    ["provider"],
)
LIVE_PRICE_FAILURES = Gauge(
    "suanli_live_price_consecutive_failures",
    "Live-price refreshes of a provider that failed in a row (0 after a success).",
    ["provider"],
)
RECOMMEND_ANSWERS = Counter(
    "suanli_recommend_answers_total",
    "Answers of /v1/recommend (cache hits included) by their top pick: priced (a published, "
    "live or operator price), estimated (an estimated price), unpriced (price unknown) or "
    "none (no option fits the constraints).",
    ["top_pick"],
)


def watch_live_prices(
    providers: Iterable[str],
    age_s: Callable[[str], float | None],
    failures: Callable[[str], int],
) -> None:
    """Read live-price age and failures at scrape time (the age grows between scrapes
    without any event to update it). The newest app in a process wins the callbacks."""
    for name in providers:
        LIVE_PRICE_AGE.labels(provider=name).set_function(
            lambda name=name: _or_nan(age_s(name))  # type: ignore[misc]
        )
        LIVE_PRICE_FAILURES.labels(provider=name).set_function(
            lambda name=name: float(failures(name))  # type: ignore[misc]
        )


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else value
