"""The planner's one memo seam: what an answer shares with other answers.

Which node counts hold a job depends on the model, precision, method, batch and
sequence — not on how many tokens it trains on, nor on the constraints that only rank.
Platforms ask about the same workload again and again with other token counts,
objectives, budgets or languages; those answers are cache misses, but most of their work
is not. The stages consult one :class:`PlanCache` for it, so that ranking, pricing and
explanations never handle memo machinery:

* per catalog: small indexes (regions, monthly prices, single-node counts), see
  :mod:`service.planning.indexes`;
* per filter: the buckets that pass it (:func:`service.planning.filters.passing`), whatever
  the workload;
* per workload memory signature: its resolved form, its placements per instance shape
  (:mod:`service.planning.place`), and per filter its lanes and their orders by bound
  (:mod:`service.planning.lanes`, :mod:`service.planning.bounds`);
* per offer and per fit: the parts of an option that do not depend on the job's length
  (:mod:`service.planning.options`);
* per class of answers — the same request at any job length (:func:`answer_signature`),
  in one language — what its answers share: the resolved filter and the explain stage's
  parts (:meth:`PlanCache.answer_class`). The bench's and platforms' commonest miss is
  exactly this: the same job asked at another token count.

The planner's own values (lanes, bounds, placements, variants) are msgspec Structs with
``gc=False``: they only point to immutable catalog and sizing values, never back, so the
cycle collector has nothing to find in them and need not walk the thousands a busy memo
holds.

Every store is bounded (:class:`~service.runtime.bounded.BoundedDict`, least recently used
first). A request without a shared cache gets a fresh one: the same code path, nothing
kept. The HTTP service plans on its event loop, but the in-process client backend may
plan from threads, so lookups and inserts hold a lock (values are built outside it: two
threads may build the same value, never corrupt a store).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TypeVar, cast

import msgspec

from service.runtime.bounded import BoundedDict
from service.sizing.resolve import LENGTH_FIELDS

T = TypeVar("T")
V = TypeVar("V")


class PlanCache:
    """Process-wide memo of the planner (see the module docstring).

    ``max_workloads`` bounds the placement tables (one per workload signature and the
    request fields placements depend on, each at most one entry per instance shape);
    ``max_shared`` the other values (lane indexes hold up to ``TOP_K_MAX`` groups per
    bucket, so far fewer are kept); ``max_templates`` the option templates;
    ``max_classes`` the classes of answers (each holds the options its answers showed,
    a few kB apiece, at most :data:`~service.planning.options.OPTION_PARTS` of them).
    """

    def __init__(
        self,
        max_workloads: int = 2048,
        max_shared: int = 256,
        max_templates: int = 4096,
        max_classes: int = 256,
    ) -> None:
        self._placements: BoundedDict[Hashable, dict[Hashable, object]] = BoundedDict(max_workloads)
        self._shared: BoundedDict[Hashable, object] = BoundedDict(max_shared)
        self._templates: BoundedDict[Hashable, object] = BoundedDict(max_templates)
        self._classes: BoundedDict[Hashable, object] = BoundedDict(max_classes)
        self._catalog: object = None
        self._lock = threading.Lock()

    def use_catalog(self, catalog: object) -> None:
        """Shared values are built over one catalog: when another one is loaded, drop
        them (they hold the old catalog alive) rather than wait for them to age out."""
        if catalog is not self._catalog:
            with self._lock:
                self._shared.clear()
                self._classes.clear()
                self._catalog = catalog

    def shared(self, key: Hashable, build: Callable[[], T]) -> T:
        """The value under ``key``, built on first use (callers own their key space, so
        the type is theirs to keep)."""
        return self._recent(self._shared, key, build)

    def catalog_shared(self, catalog: object, key: tuple[object, ...], build: Callable[[], T]) -> T:
        """:meth:`shared` for a value built over ``catalog`` (dropped with it).

        ``id()`` is safe in the key: the values are dropped when another catalog is used.
        """
        self.use_catalog(catalog)
        return self.shared((key[0], id(catalog), *key[1:]), build)

    def answer_class(self, catalog: object, key: Hashable, build: Callable[[], T]) -> T:
        """What the answers of one class share (``key``: :func:`answer_signature` and what
        else the class depends on besides ``catalog``), built on first use and dropped
        with the catalog."""
        self.use_catalog(catalog)
        return self._recent(self._classes, key, build)

    def _recent(
        self, store: BoundedDict[Hashable, object], key: Hashable, build: Callable[[], T]
    ) -> T:
        """``store``'s value under ``key`` (now the most recently used), built on first
        use (outside the lock; the least recently used entry goes first)."""
        with self._lock:
            value = store.touch(key)
        if value is None:
            value = build()
            with self._lock:
                store.put(key, value)
        return cast(T, value)

    def placement_table(self, prefix: Hashable) -> dict[Hashable, object]:
        """The placements of one workload (``prefix``: its signature and the request
        fields placements depend on) per instance shape, filled by the place stage
        (oldest first out: a workload asked again keeps its lanes in :meth:`shared`)."""
        table = self._placements.get(prefix)
        return table if table is not None else self._insert(self._placements, prefix, dict)

    def template(self, key: Hashable, build: Callable[[], T]) -> T:
        """An option's length-independent part (see :mod:`service.planning.options`;
        oldest first out: a lookup must cost less than the part)."""
        value = self._templates.get(key)
        return cast(T, value if value is not None else self._insert(self._templates, key, build))

    def _insert(self, store: BoundedDict[Hashable, V], key: Hashable, build: Callable[[], V]) -> V:
        """``build()`` inserted under ``key`` (the oldest entry goes first)."""
        value = build()
        with self._lock:
            store.put(key, value)
        return value


def memory_signature(workload: msgspec.Struct) -> bytes:
    """The workload without the fields that change time but never memory."""
    fields = {f: None for f in LENGTH_FIELDS if hasattr(workload, f)}
    return _signature_encoder.encode(msgspec.structs.replace(workload, **fields))


def answer_signature(request: msgspec.Struct, workload: msgspec.Struct) -> tuple[object, ...]:
    """``request`` (whose workload is ``workload``) without the job's length: what a class
    of answers is keyed by. Whether each length is given, and non-zero, stays in the key:
    that decides billing defaults, open-ended serving and whether hours are known."""
    kind = type(workload)
    nulls = _LENGTHS_OF.get(kind)
    if nulls is None:
        nulls = _LENGTHS_OF[kind] = dict.fromkeys(
            f for f in LENGTH_FIELDS if f in kind.__struct_fields__
        )
    if not nulls:
        return (_key_encoder.encode(request), ())
    given = []
    for field in nulls:
        value = getattr(workload, field)
        given.append((value is None, bool(value)))
    nulled = msgspec.structs.replace(workload, **nulls)
    key = _key_encoder.encode(msgspec.structs.replace(request, workload=nulled))
    return (key, tuple(given))


_LENGTHS_OF: dict[type, dict[str, None]] = {}
"""The length fields each workload type has, each set to ``None``."""
_key_encoder = msgspec.json.Encoder()
"""Field order is the Structs' own: equal requests encode equally (a dict in another
order would only miss the memo, never hit a wrong entry)."""
_signature_encoder = msgspec.json.Encoder(order="deterministic")
