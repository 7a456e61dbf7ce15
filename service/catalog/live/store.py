"""Live price snapshots shared by all replicas through a litestar ``Store`` (Redis).

One refresh (a CronJob, or the one replica that runs the schedule) fetches prices and
publishes one :class:`LiveSnapshot` per provider; every replica reads it. Keys, inside
the ``prices`` namespace of the app's root store (``suanli`` on Redis)::

    live:<provider>           the snapshot (msgspec JSON)
    live:<provider>:version   {version, fingerprint, fetched_at}: a few bytes replicas poll
    live:<provider>:status    the last refresh attempt: error, time, consecutive failures

The version is monotonically increasing per provider, so a replica that remembers the
last version it loaded notices new prices with one small read instead of decoding the
whole snapshot. The snapshot is written before its version, so whoever sees a new
version finds the snapshot it announces.

Reads never raise: Redis down, a missing key or an undecodable value all read as
"nothing published" (logged once per outage), so the request path falls back to shipped
prices instead of failing. Writes raise, so the refresh job can report the failure.
"""

from __future__ import annotations

import hashlib
import logging
from typing import TypeVar

import msgspec
from litestar.stores.base import NamespacedStore, Store

from service.catalog.models import Price
from service.runtime.metrics import CORRUPT_ENTRIES

log = logging.getLogger(__name__)

NAMESPACE = "prices"

_encoder = msgspec.json.Encoder(order="deterministic")

S = TypeVar("S", bound=msgspec.Struct)


class LiveSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    """All live prices of one provider, as published by one refresh."""

    provider: str
    fetched_at: str
    """When the refresh that produced it finished (UTC ISO, ``...Z``)."""
    prices: tuple[Price, ...]
    errors: tuple[str, ...] = ()
    """Problems of the refresh that produced it (a failed region, a dropped outlier)."""
    regions: tuple[str, ...] = ()
    """Regions the snapshot has prices for (fresh or carried over from the last one)."""
    version: int = 0
    """Set by :meth:`PriceSnapshotStore.publish`; increases with every publish."""
    fingerprint: str = ""
    """Hash of ``prices``; equal fingerprints mean identical prices."""


class SnapshotVersion(msgspec.Struct, frozen=True, kw_only=True):
    """The small record replicas poll to notice a new snapshot."""

    version: int
    fingerprint: str
    fetched_at: str


class RefreshStatus(msgspec.Struct, frozen=True, kw_only=True):
    """Outcome of the latest refresh attempt of one provider (shared with all replicas
    so ``GET /v1/providers`` on any of them shows the last error)."""

    provider: str
    last_attempt_at: str
    last_success_at: str | None = None
    last_error: str | None = None
    last_error_at: str | None = None
    consecutive_failures: int = 0


def fingerprint_prices(prices: tuple[Price, ...]) -> str:
    """Order-independent hash of a set of prices (16 hex digits)."""
    encoded = sorted(_encoder.encode(p) for p in prices)
    return hashlib.sha256(b"\n".join(encoded)).hexdigest()[:16]


class PriceSnapshotStore:
    """Publish and read :class:`LiveSnapshot` objects in a litestar store."""

    def __init__(self, store: Store) -> None:
        """``store`` is already the ``prices`` namespace (see :meth:`from_root`)."""
        self._store = store
        self._read_failing = False

    @classmethod
    def from_root(cls, root: Store) -> PriceSnapshotStore:
        """Use the ``prices`` namespace of the app's root store (Redis or in-memory)."""
        if isinstance(root, NamespacedStore):
            return cls(root.with_namespace(NAMESPACE))
        return cls(root)

    @staticmethod
    def _key(provider: str, suffix: str = "") -> str:
        return f"live:{provider}{suffix}"

    async def publish(self, snapshot: LiveSnapshot) -> LiveSnapshot:
        """Store ``snapshot`` with the next version number; returns what was stored.

        The version is ``previous + 1``. Two refreshes of the same provider publishing
        in the same instant could both pick the same number; the fingerprint still tells
        their contents apart, and the later write wins, which is the intended outcome.
        """
        current = await self._get(self._key(snapshot.provider, ":version"), SnapshotVersion)
        stored = msgspec.structs.replace(
            snapshot,
            version=(current.version if current else 0) + 1,
            fingerprint=fingerprint_prices(snapshot.prices),
        )
        await self._store.set(self._key(stored.provider), _encoder.encode(stored))
        marker = SnapshotVersion(
            version=stored.version, fingerprint=stored.fingerprint, fetched_at=stored.fetched_at
        )
        await self._store.set(self._key(stored.provider, ":version"), _encoder.encode(marker))
        return stored

    async def read(self, provider: str) -> LiveSnapshot | None:
        """The last published snapshot, or ``None`` (nothing published, or store down)."""
        return await self._get(self._key(provider), LiveSnapshot, quiet=True)

    async def read_checked(self, provider: str) -> tuple[LiveSnapshot | None, bool]:
        """``(snapshot, reachable)``: ``reachable`` is false when the store could not be
        read, so "no snapshot" can be told apart from "don't know" (keep what you hold)."""
        snapshot = await self.read(provider)
        return snapshot, self.reachable

    async def version_checked(self, provider: str) -> tuple[SnapshotVersion | None, bool]:
        marker = await self.version(provider)
        return marker, self.reachable

    @property
    def reachable(self) -> bool:
        """False after a failed read (also through a failure-swallowing store)."""
        return not self._read_failing and bool(getattr(self._store, "healthy", True))

    async def version(self, provider: str) -> SnapshotVersion | None:
        """The cheap marker to poll; ``None`` when nothing was published."""
        return await self._get(self._key(provider, ":version"), SnapshotVersion, quiet=True)

    async def read_status(self, provider: str) -> RefreshStatus | None:
        return await self._get(self._key(provider, ":status"), RefreshStatus, quiet=True)

    async def write_status(self, status: RefreshStatus) -> None:
        await self._store.set(self._key(status.provider, ":status"), _encoder.encode(status))

    async def delete(self, provider: str) -> None:
        """Remove everything stored for ``provider`` (tests, operator clean-up)."""
        for suffix in ("", ":version", ":status"):
            await self._store.delete(self._key(provider, suffix))

    async def _get(self, key: str, kind: type[S], *, quiet: bool = False) -> S | None:
        try:
            raw = await self._store.get(key)
        except Exception as exc:
            if not quiet:
                raise
            if not self._read_failing:  # log once per outage, not per request
                log.warning("price store unreadable (%s: %s)", type(exc).__name__, exc)
            self._read_failing = True
            return None
        self._read_failing = False
        if raw is None:
            return None
        try:
            return msgspec.json.decode(raw, type=kind)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            CORRUPT_ENTRIES.labels(kind="live_snapshot").inc()
            log.warning("ignoring undecodable %s at %r: %s", kind.__name__, key, exc)
            return None
