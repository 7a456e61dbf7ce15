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
