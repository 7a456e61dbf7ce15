"""Live prices through each cloud's official SDK, shared by all replicas through Redis.

Modules, one job each:

* :mod:`~service.live.adapter`: helpers the ``plugins/<cloud>/live.py`` adapters share;
* :mod:`~service.live.errors`: transient (retried) vs permanent fetch errors;
* :mod:`~service.live.validate`: sanity checks against per-accelerator reference ranges;
* :mod:`~service.live.store`: :class:`LiveSnapshot` and :class:`PriceSnapshotStore`;
* :mod:`~service.live.refresh`: one provider's refresh with retry and last-good keeping;
* :mod:`~service.live.schedule`: several providers, once or on a schedule;
* :mod:`~service.live.merge`: serving precedence and staleness (pure);
* :mod:`~service.live.status`: what ``GET /v1/providers`` shows;
* :mod:`~service.live.monitor`: in-memory view for the request path (sync reads);
* :mod:`~service.live.discovery`: finding each provider's live source via the plugins;
* :mod:`~service.live.cli`: ``suanli prices refresh``.

:mod:`service.live_prices` re-exports the public names.
"""
