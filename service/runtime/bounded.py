"""A bounded, insertion-ordered mapping: the one eviction policy of every in-process memo.

``del d[next(iter(d))]`` on a plain dict looks O(1) but scans the slots left by earlier
deletions (CPython compacts only on resize): about 1.6 µs per eviction at 10k entries,
against 0.17 µs for ``OrderedDict.popitem(last=False)``. Caches that evict on every
miss under load (the response store, the planner's memo) use this instead.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")
Obj = TypeVar("Obj")


class BoundedDict(OrderedDict[K, V]):
    """At most ``max_entries`` items; :meth:`put` drops the oldest (or, for entries
    refreshed with :meth:`touch`, the least recently used) first."""

    def __init__(self, max_entries: int) -> None:
        super().__init__()
        self.max_entries = max(1, max_entries)

    def put(self, key: K, value: V) -> None:
        """Insert or replace ``key`` as the newest entry, evicting the oldest if full."""
        if key in self:
            del self[key]
        elif len(self) >= self.max_entries:
            self.popitem(last=False)
        self[key] = value

    def touch(self, key: K) -> V | None:
        """The value under ``key`` (now the most recently used), or ``None``."""
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value


class IdentityMemo(Generic[Obj, V]):
    """A value kept per object, by identity: for immutable inputs that copies of one
    request share (a training budget), where hashing the object would cost what the memo
    saves. Each entry holds its object, so that its ``id`` stays its own while kept; at
    most ``max_entries`` objects, the oldest dropped first (:class:`BoundedDict`)."""

    def __init__(self, max_entries: int) -> None:
        self._kept: BoundedDict[int, tuple[Obj, V]] = BoundedDict(max_entries)
        self._lock = threading.Lock()

    def get(self, obj: Obj) -> V | None:
        """The value kept for this very object, or ``None``."""
        kept = self._kept.get(id(obj))
        return kept[1] if kept is not None and kept[0] is obj else None

    def put(self, obj: Obj, value: V) -> None:
        """Keep ``value`` for ``obj`` (writers of a worker's threads take turns)."""
        with self._lock:
            self._kept.put(id(obj), (obj, value))
