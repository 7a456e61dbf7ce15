"""Aggregate every provider plugin's catalog into one immutable snapshot of offers.

Loading calls each provider in a worker thread under ``provider_timeout_s``: a provider
that raises, hangs or returns malformed rows is dropped from the snapshot with a warning
(and a metric), and the others still answer. A reload that fails as a whole keeps the
previous snapshot; a catalog is never replaced by an empty one.

The snapshot's ``fingerprint`` hashes every row and price that can change an answer, so
the response cache (keyed by it) never serves an answer computed on another catalog.
"""

from __future__ import annotations

import hashlib
import logging
import math
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from typing import Protocol

import msgspec

from service.catalog.models import ALL_REGIONS, InstanceType, Offer, Price, Provider, SpotRules
from service.catalog.overrides import PriceOverride, apply_overrides
from service.catalog.price_model import CatalogPrices, with_estimates
from service.hooks.loader import collect
from service.runtime.metrics import PLUGIN_CONFLICTS, PROVIDER_FAILURES

log = logging.getLogger(__name__)


class ProviderCatalog(msgspec.Struct, frozen=True, kw_only=True):
    """One provider's rows as loaded (prices already merged with overrides/live)."""

    name: str
    display_name: str
    currency: str
    regions: tuple[str, ...]
    instance_types: tuple[InstanceType, ...]
    prices: tuple[Price, ...]
    as_of: str
    prices_as_of: str | None = None
    """Newest ``as_of`` of the confirmed (not estimated) prices actually served."""
    prices_oldest: str | None = None
    """Oldest ``as_of`` of the confirmed prices actually served."""
    spot_rules: SpotRules | None = None
    regions_source: str | None = None


def prices_by_type(catalog: ProviderCatalog) -> dict[str, list[Price]]:
    """The catalog's prices grouped by instance type, in catalog order: the one walk that
    the planner's offers, the offer list and the instance-type listing all start from."""
    by_type: dict[str, list[Price]] = {}
    for price in catalog.prices:
        by_type.setdefault(price.instance_type, []).append(price)
    return by_type


class ProviderStatus(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    status: str
    """``ok``, or ``failed`` (raised, timed out or returned malformed rows)."""
    error: str | None = None


class OfferGroup(msgspec.Struct, frozen=True, kw_only=True):
    """Offers of one instance type with the same billing and price, in several regions.

    They give identical placements, so the planner works on groups (a few hundred)
    rather than on offers (thousands); built once per catalog load.
    """

    offer: Offer
    """The first offer of the group (its region is one of ``regions`` or ``"*"``)."""
    regions: tuple[str, ...]
    """Every region of the group; for a ``"*"`` price, the regions the type is sold in."""
    offers: int
    """How many offers were folded into this group."""


class OfferBucket(msgspec.Struct, frozen=True, kw_only=True):
    """All offer groups of one instance type and billing mode, cheapest first.

    Every group in a bucket gives the same placements (same row), differing only in
    price and regions, so whatever the objective the planner needs at most ``top_k``
    groups per bucket, and the first one that passes the filters is the bucket's
    cheapest. Built once per catalog load.
    """

    offer: Offer
    """An offer of the bucket (for row-level checks)."""
    groups: tuple[OfferGroup, ...]
    """Sorted by price per hour; unpriced last."""
    offers: int


class CatalogSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    providers: tuple[ProviderCatalog, ...]
    statuses: tuple[ProviderStatus, ...]
    offers: tuple[Offer, ...]
    fingerprint: str
    loaded_at: str
    warnings: tuple[str, ...] = ()
    buckets: tuple[OfferBucket, ...] = ()
    """``offers`` folded and indexed for the planner: see :func:`bucket_offers`."""

    def provider(self, name: str) -> ProviderCatalog | None:
        return next((p for p in self.providers if p.name == name), None)


EMPTY_SNAPSHOT = CatalogSnapshot(
    providers=(), statuses=(), offers=(), fingerprint="empty", loaded_at="1970-01-01"
)


class PriceLayer(Protocol):
    """Hook to layer live prices over a provider's snapshot prices (see
    :mod:`service.catalog.live.monitor`); it gets the provider's rows to check live prices
    against."""

    def __call__(
        self, provider: str, prices: Sequence[Price], instances: Sequence[InstanceType], /
    ) -> Sequence[Price]: ...


class CatalogService:
    """Holds the current :class:`CatalogSnapshot` and rebuilds it on demand."""

    def __init__(
        self,
        provider_factory: Callable[[], Iterable[Sequence[Provider] | None]],
        overrides: Sequence[PriceOverride] = (),
        timeout_s: float = 5.0,
        price_layer: PriceLayer | None = None,
        price_estimates: bool = True,
    ) -> None:
        self._provider_factory = provider_factory
        self._overrides = tuple(overrides)
        self._timeout_s = timeout_s
        self._price_layer = price_layer
        self._price_estimates = price_estimates
        self._snapshot: CatalogSnapshot | None = None
        self._lock = threading.Lock()
        self.last_rejected: tuple[str, ...] = ()
        """Why the last load was refused (its warnings) when it kept the previous catalog."""

    @property
    def loaded(self) -> bool:
        return self._snapshot is not None

    @property
    def snapshot(self) -> CatalogSnapshot:
        return self._snapshot or EMPTY_SNAPSHOT

    def load(self, overrides: Sequence[PriceOverride] | None = None) -> CatalogSnapshot:
        """(Re)build the snapshot. Keeps the previous one if every provider failed."""
        with self._lock:
            if overrides is not None:
                self._overrides = tuple(overrides)
            fresh = self._build()
            previous = self._snapshot
            if previous is not None and previous.providers and not fresh.providers:
                log.error("catalog reload produced no provider; keeping the previous catalog")
                self.last_rejected = fresh.warnings
                return previous
            self.last_rejected = ()
            self._snapshot = fresh
            return fresh

    def _collect(self) -> tuple[list[Provider], list[ProviderStatus]]:
        """Every plugin's providers, calling each plugin's registration hook on its own:
        a plugin whose hook raises is reported as failed and the others still load."""
        get_impls = getattr(self._provider_factory, "get_hookimpls", None)
        if get_impls is None:  # a plain callable
            return first_of_each_name(collect(self._provider_factory()), "a plugin"), []
        providers: list[Provider] = []
        failed: list[ProviderStatus] = []
        # Registration order (built-ins and the project's own plugins first): when two
        # plugins register the same provider name, the first registration stands.
        taken: set[str] = set()
        for impl in get_impls():
            try:
                registered = list(impl.function() or ())
            except Exception as exc:
                error = f"suanli_register_providers raised {type(exc).__name__}: {exc}"[:300]
                failed.append(ProviderStatus(name=impl.plugin_name, status="failed", error=error))
                continue
            providers.extend(first_of_each_name(registered, impl.plugin_name, taken))
        return providers, failed

    def _build(self) -> CatalogSnapshot:
        try:
            providers, failed_plugins = self._collect()
        except Exception as exc:  # plugin registry itself broken: keep serving the old one
            log.exception("provider registration failed")
            return _failed_snapshot(f"provider registration failed: {type(exc).__name__}")
        # A pool per load (loads are rare): a provider that hangs past its timeout keeps
        # only its own thread busy and can never block the next load.
        pool = ThreadPoolExecutor(max_workers=max(1, len(providers)), thread_name_prefix="provider")
        try:
            futures = {p: pool.submit(_read_provider, p) for p in providers}
            wait(futures.values(), timeout=self._timeout_s)  # one deadline for all of them
            results = {p: self._outcome(future) for p, future in futures.items()}
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        catalogs, statuses, warnings = [], list(failed_plugins), []
        for status in failed_plugins:
            PROVIDER_FAILURES.labels(provider=status.name).inc()
            warnings.append(f"plugin {status.name} unavailable: {status.error}")
            log.warning("plugin %s registered no provider: %s", status.name, status.error)
        for provider, (catalog, error) in results.items():
            name = getattr(provider, "name", repr(provider))
            if catalog is None:
                PROVIDER_FAILURES.labels(provider=name).inc()
                statuses.append(ProviderStatus(name=name, status="failed", error=error))
                warnings.append(f"provider {name} unavailable: {error}")
                log.warning("provider %s dropped from the catalog: %s", name, error)
                continue
            catalogs.append(self._priced(catalog))
            statuses.append(ProviderStatus(name=name, status="ok"))
        catalogs.sort(key=lambda c: c.name)
        catalogs = add_estimates(catalogs, self._price_estimates)
        offers = tuple(offer for c in catalogs for offer in build_offers(c))
        return CatalogSnapshot(
            providers=tuple(catalogs),
            statuses=tuple(sorted(statuses, key=lambda s: s.name)),
            offers=offers,
            buckets=bucket_offers(offers),
            fingerprint=fingerprint(catalogs),
            loaded_at=datetime.now(UTC).isoformat(timespec="seconds"),
            warnings=tuple(warnings),
        )

    def _outcome(
        self, future: Future[ProviderCatalog]
    ) -> tuple[ProviderCatalog | None, str | None]:
        if not future.done():
            future.cancel()
            return None, f"timed out after {self._timeout_s:g}s"
        exc = future.exception()
        if exc is not None:
            return None, f"{type(exc).__name__}: {exc}"[:300]
        return future.result(), None

    def _priced(self, catalog: ProviderCatalog) -> ProviderCatalog:
        prices: Sequence[Price] = catalog.prices
        if self._price_layer is not None:
            prices = self._price_layer(catalog.name, prices, catalog.instance_types)
        prices = apply_overrides(catalog.name, catalog.instance_types, prices, self._overrides)
        newest, oldest = price_dates(prices)
        return msgspec.structs.replace(
            catalog, prices=tuple(prices), prices_as_of=newest, prices_oldest=oldest
        )


def price_dates(prices: Sequence[Price]) -> tuple[str | None, str | None]:
    """(newest, oldest) ``as_of`` of the confirmed prices: what ``prices_as_of`` means."""
    dates = sorted(p.as_of for p in prices if not p.estimated and p.price_per_hour is not None)
    return (dates[-1], dates[0]) if dates else (None, None)


def add_estimates(
    catalogs: Sequence[ProviderCatalog], enabled: bool = True
) -> list[ProviderCatalog]:
    """Each catalog with the price model's estimates appended (see service.catalog.price_model);
    the model is fitted across providers, so it runs once all catalogs are loaded."""
    if not enabled:
        return list(catalogs)
    inputs = [
        CatalogPrices(
            name=c.name,
            rows=c.instance_types,
            prices=c.prices,
            spot_rules=c.spot_rules,
            display_name=c.display_name,
        )
        for c in catalogs
    ]
    extra = with_estimates(inputs)
    return [
        msgspec.structs.replace(c, prices=c.prices + tuple(extra.get(c.name, ()))) for c in catalogs
    ]


def first_of_each_name(
    providers: Iterable[Provider], plugin: str, taken: set[str] | None = None
) -> list[Provider]:
    """``providers`` without those whose name is already ``taken`` (updated in place):
    a plugin cannot shadow a provider registered before it. Refusals are logged and
    counted in ``suanli_plugin_conflicts_total{kind="provider"}``."""
    taken = set() if taken is None else taken
    kept = []
    for provider in providers:
        name = getattr(provider, "name", None)
        if isinstance(name, str) and name in taken:
            PLUGIN_CONFLICTS.labels(kind="provider", name=name).inc()
            log.warning(
                "plugin %s registered a second provider named %r: refused, the first "
                "registration stands",
                plugin,
                name,
            )
            continue
        if isinstance(name, str):
            taken.add(name)
        kept.append(provider)
    return kept


def _failed_snapshot(warning: str) -> CatalogSnapshot:
    return msgspec.structs.replace(EMPTY_SNAPSHOT, warnings=(warning,))


def _read_provider(provider: Provider) -> ProviderCatalog:
    """Call a provider and validate what it returned (runs in a worker thread)."""
    rows = tuple(provider.instance_types())
    prices = tuple(provider.prices())
    regions = tuple(provider.regions())
    for row in rows:
        if not isinstance(row, InstanceType):
            raise TypeError(f"instance_types() returned {type(row).__name__}, not InstanceType")
    for price in prices:
        if not isinstance(price, Price):
            raise TypeError(f"prices() returned {type(price).__name__}, not Price")
    # Round-trip through the typed decoder: enforces field constraints (as_of, source).
    msgspec.json.decode(msgspec.json.encode(rows), type=tuple[InstanceType, ...])
    msgspec.json.decode(msgspec.json.encode(prices), type=tuple[Price, ...])
    if not rows:
        raise ValueError("empty catalog")
    problems = [p for row in rows for p in row_problems(row)]
    problems += [p for price in prices for p in price_problems(price)]
    if problems:
        raise ValueError(f"malformed rows ({len(problems)}): " + "; ".join(problems[:3]))
    as_of = max(row.as_of for row in rows)
    return ProviderCatalog(
        name=provider.name,
        display_name=provider.display_name,
        currency=provider.currency,
        regions=regions,
        instance_types=rows,
        prices=prices,
        as_of=str(getattr(provider, "catalog_as_of", as_of)),
        spot_rules=_spot_rules(provider),
        regions_source=getattr(provider, "regions_source", None),
    )


def _spot_rules(provider: Provider) -> SpotRules | None:
    rules = getattr(provider, "spot_rules", None)
    return rules if isinstance(rules, SpotRules) else None


_POSITIVE_SPECS = ("vcpus", "memory_gib", "network_gbps", "rdma_gbps", "accelerator_memory_gib")


def _not_positive(value: float | None) -> bool:
    return value is not None and not (math.isfinite(value) and value > 0)


def row_problems(row: InstanceType) -> list[str]:
    """What makes a row unusable: specs that are not positive finite numbers (NaN hides
    in a JSON round trip as ``null``), accelerator fields that contradict each other."""
    problems = [
        f"{row.instance_type}: {field}={getattr(row, field)!r} is not a positive number"
        for field in _POSITIVE_SPECS
        if _not_positive(getattr(row, field))
    ]
    if row.accelerator_count < 0 or (row.accelerator is not None) != (row.accelerator_count > 0):
        problems.append(
            f"{row.instance_type}: accelerator={row.accelerator!r} with "
            f"accelerator_count={row.accelerator_count}"
        )
    return problems


def price_problems(price: Price) -> list[str]:
    """A price is positive or unknown (``None``): zero or negative would rank first."""
    return [
        f"{price.instance_type} {price.region} {price.billing}: {field}="
        f"{getattr(price, field)!r} is not a positive number"
        for field in ("price_per_hour", "price_per_month")
        if _not_positive(getattr(price, field))
    ]


def build_offers(catalog: ProviderCatalog) -> list[Offer]:
    """One offer per (instance type, price); an unpriced type gets one unpriced offer.

    Types missing a field the planner needs stay out (they are listed, not recommended).
    """
    by_type = prices_by_type(catalog)
    offers = []
    for row in catalog.instance_types:
        if row.missing_fields:
            continue
        prices = by_type.get(row.instance_type)
        if not prices:
            region = row.regions[0] if len(row.regions) == 1 else "*"
            offers.append(
                Offer(provider=catalog.name, instance=row, region=region, billing="on_demand")
            )
            continue
        offers.extend(
            Offer(provider=catalog.name, instance=row, region=p.region, billing=p.billing, price=p)
            for p in prices
            if p.price_per_hour is not None
        )
    return offers


def group_offers(offers: Sequence[Offer]) -> tuple[OfferGroup, ...]:
    """Fold offers that differ only in region (same provider, type, billing and price)."""
    groups: dict[tuple[str, str, str, float | None], tuple[Offer, dict[str, None], list[int]]]
    groups = {}
    for offer in offers:
        row = offer.instance
        key = (offer.provider, row.instance_type, offer.billing, offer.price_per_hour)
        group = groups.get(key)
        if group is None:
            regions = (offer.region,) if offer.region != ALL_REGIONS else row.regions
            groups[key] = (offer, dict.fromkeys(regions), [1])  # dict = ordered set
        else:
            if offer.region != ALL_REGIONS:
                group[1][offer.region] = None
            group[2][0] += 1
    return tuple(
        OfferGroup(offer=offer, regions=tuple(regions), offers=count[0])
        for offer, regions, count in groups.values()
    )


def bucket_offers(offers: Sequence[Offer]) -> tuple[OfferBucket, ...]:
    """Index offers for the planner: groups per (provider, type, billing), cheapest first."""
    by_bucket: dict[tuple[str, str, str], list[OfferGroup]] = {}
    for group in group_offers(offers):
        offer = group.offer
        key = (offer.provider, offer.instance.instance_type, offer.billing)
        by_bucket.setdefault(key, []).append(group)
    buckets = []
    for groups in by_bucket.values():
        # by the price ranking uses (an estimate counts at the top of its range)
        groups.sort(key=lambda g: (g.offer.ranking_price is None, g.offer.ranking_price or 0.0))
        buckets.append(
            OfferBucket(
                offer=groups[0].offer, groups=tuple(groups), offers=sum(g.offers for g in groups)
            )
        )
    # Buckets with a price first: a planner ranking by cost can stop at the first unpriced
    # bucket once it holds enough priced candidates (unknown prices never rank as cheap).
    buckets.sort(key=lambda b: b.groups[0].offer.price_per_hour is None)
    return tuple(buckets)


def fingerprint(catalogs: Sequence[ProviderCatalog]) -> str:
    digest = hashlib.sha256()
    for catalog in catalogs:
        digest.update(msgspec.json.encode((catalog.name, catalog.instance_types, catalog.prices)))
    return digest.hexdigest()[:16]
