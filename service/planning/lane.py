"""A :class:`Lane`: one bucket of the catalog as one request's filters see it.

Its own module because both :mod:`service.planning.lanes` (which builds lanes) and
:mod:`service.planning.bounds` (which bounds and orders them) need the type, and
``lanes`` uses ``bounds``: the shared record sits below both.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.catalog.models import InstanceType, Offer
from service.planning.variants import Placements


@dataclass(frozen=True, slots=True)
class Lane:
    """A bucket that survives a request's filters: its placements and the offer groups
    (cheapest first, regions already narrowed) that pass the region and price checks."""

    row: InstanceType
    placements: Placements | None
    """``None`` for CPU-only rows (sized per request from the job's data)."""
    groups: tuple[tuple[Offer, tuple[str, ...], int], ...]
    """(first offer, regions, offers folded) per group; at most ``TOP_K_MAX``, since
    no answer can use more groups of one bucket (:data:`~service.planning.schema.TOP_K_MAX`)."""
    priced_bucket: bool
    """The bucket's cheapest offer has a price (buckets are ordered priced first)."""
