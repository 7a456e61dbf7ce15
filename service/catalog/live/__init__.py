"""Live prices through each cloud's official SDK, shared by all replicas through Redis.

Modules, one job each:

* :mod:`~service.catalog.live.adapter`: helpers the ``plugins/<cloud>/live.py`` adapters share;
* :mod:`~service.catalog.live.errors`: transient (retried) vs permanent fetch errors;
* :mod:`~service.catalog.live.validate`: sanity checks against per-accelerator reference ranges;
* :mod:`~service.catalog.live.store`: :class:`LiveSnapshot` and :class:`PriceSnapshotStore`;
* :mod:`~service.catalog.live.refresh`: one provider's refresh with retry and last-good keeping;
* :mod:`~service.catalog.live.schedule`: several providers, once or on a schedule;
* :mod:`~service.catalog.live.merge`: serving precedence and staleness (pure);
* :mod:`~service.catalog.live.status`: what ``GET /v1/providers`` shows;
* :mod:`~service.catalog.live.monitor`: in-memory view for the request path (sync reads);
* :mod:`~service.catalog.live.discovery`: finding each provider's live source via the plugins;
* :mod:`~service.catalog.live.cli`: ``suanli prices refresh``.

Request path (in memory, never waits on a cloud API or Redis)::

    monitor = LivePriceMonitor(PriceSnapshotStore(stores.namespace("prices")),
                               {job.name: job.source for job in discover_live_jobs(pm)},
                               settings.live_price_ttl_s)
    await monitor.load()                      # start-up, and on every catalog reload
    CatalogService(..., price_layer=monitor.price_layer)
    monitor.info(name)                        # GET /v1/providers; monitor.stale(name)

or the pure function underneath:
``prices, stale = merge_prices(snapshot_prices, live_snapshot, now, ttl_s)``. Import each
name from the module that defines it (this package re-exports nothing).
"""
