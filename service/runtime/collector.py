"""The cycle collector's policy in a serving process: collect the young generation after
10,000 net new container objects instead of CPython's 700.

Why: a request of ``/v1/recommend`` that misses the cache builds its answer out of a few
thousand short-lived containers (candidates, options, sentences, the response structs),
freed by reference counting as soon as the answer is encoded, while the benchmark's 32
connections keep as many requests in flight (coroutines, closures, scopes). Under
granian with the default threshold a distinct-tokens stream ran a young collection
about every 36 requests, and each one walked the half-built answer and every catalog
row it points to: about 330 µs of the event loop's CPU per collection, 9-12 µs per
request (``time.thread_time`` in ``gc.callbacks``, 2-core build machine under load). Each
collection also promotes what is in flight into the old generation (about 3 objects per
request), which brings the full collection closer: about 60-80 ms of CPU for the ~137k
objects a worker holds, once per 6-14k such requests. With 10,000 the same stream ran no
collection at all over 10k requests: its live objects do not grow (the caches are
bounded), so the threshold is never crossed. A stream of new job shapes, whose memo
does grow, still collects in proportion to what it keeps.

Reference cycles are still collected (exceptions with tracebacks, closures), after at
most 10,000 net new containers, which bounds what such garbage can hold. The older
generations keep CPython's thresholds.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000
"""Net new container objects (allocations minus deallocations) between two collections
of the young generation (CPython's default: 700)."""


def tune_for_serving() -> None:
    """Raise the young generation's threshold (see the module); idempotent."""
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
