"""Offers across every provider: filter, sort, group and page (``GET /v1/offers``).

The ``sky show-gpus`` / ``dstack offer`` view as a pure function over one catalog
snapshot: :func:`list_offers` (query + snapshot + accelerator registry -> page). The HTTP
route, the CLI (``suanli offers``) and the MCP tool (``list_offers``) all call it with
an :class:`OfferQuery`, so they answer the same thing and refuse the same input.
"""

from service.offers.listing import known_regions, list_offers
from service.offers.schema import (
    GroupKey,
    OfferGroupItem,
    OfferItem,
    OfferPage,
    OfferQuery,
    SortKey,
)

__all__ = [
    "GroupKey",
    "OfferGroupItem",
    "OfferItem",
    "OfferPage",
    "OfferQuery",
    "SortKey",
    "known_regions",
    "list_offers",
]
