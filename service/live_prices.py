"""Public entry points for live prices (the implementation lives in :mod:`service.live`).

Request path (in memory, never waits on a cloud API or Redis)::

    monitor = LivePriceMonitor(PriceSnapshotStore(stores.namespace("prices")),
                               {job.name: job.source for job in discover_live_jobs(pm)},
                               settings.live_price_ttl_s)
    await monitor.load()                      # start-up, and on every catalog reload
    CatalogService(..., price_layer=monitor.price_layer)
    monitor.info(name)                        # GET /v1/providers; monitor.stale(name)

or the pure function underneath:
``prices, stale = merge_prices(snapshot_prices, live_snapshot, now, ttl_s)``.

Refresh side: :func:`refresh_provider` (one provider), :func:`refresh_jobs` /
:func:`run_refresh_schedule` (all of them) and :func:`refresh_cli`
(``suanli prices refresh``), publishing into a :class:`PriceSnapshotStore`.
"""

from service.live.adapter import iso_utc, live_price, utc_now
from service.live.cli import refresh_cli
from service.live.discovery import LiveJob, discover_live_jobs, find_live_source
from service.live.errors import LivePriceError, TransientLivePriceError
from service.live.merge import PRICE_SOURCE_RANK, merge_prices, select_price, snapshot_age_s
from service.live.monitor import LivePriceMonitor
from service.live.refresh import (
    RefreshResult,
    RegionOutcome,
    RetryPolicy,
    fetch_region,
    refresh_delay_s,
    refresh_provider,
)
from service.live.schedule import refresh_jobs, run_refresh_schedule
from service.live.status import LivePriceState, live_state, read_live_state, source_availability
from service.live.store import (
    LiveSnapshot,
    PriceSnapshotStore,
    RefreshStatus,
    SnapshotVersion,
    fingerprint_prices,
)
from service.live.validate import (
    DEFAULT_REFERENCE,
    ReferenceRange,
    RejectedPrice,
    validate_prices,
)

__all__ = [
    "DEFAULT_REFERENCE",
    "PRICE_SOURCE_RANK",
    "LiveJob",
    "LivePriceError",
    "LivePriceMonitor",
    "LivePriceState",
    "LiveSnapshot",
    "PriceSnapshotStore",
    "ReferenceRange",
    "RefreshResult",
    "RefreshStatus",
    "RegionOutcome",
    "RejectedPrice",
    "RetryPolicy",
    "SnapshotVersion",
    "TransientLivePriceError",
    "discover_live_jobs",
    "fetch_region",
    "find_live_source",
    "fingerprint_prices",
    "iso_utc",
    "live_price",
    "live_state",
    "merge_prices",
    "read_live_state",
    "refresh_cli",
    "refresh_delay_s",
    "refresh_jobs",
    "refresh_provider",
    "run_refresh_schedule",
    "select_price",
    "snapshot_age_s",
    "source_availability",
    "utc_now",
    "validate_prices",
]
