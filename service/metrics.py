"""Process-wide Prometheus metrics beyond litestar's request metrics.

They live in ``prometheus_client``'s default registry, which litestar's
``PrometheusController`` exposes at ``/metrics``. Defined once per process (a metric
cannot be registered twice), so every app built in the same process shares them.
"""

from __future__ import annotations

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
