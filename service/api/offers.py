"""``GET /v1/offers``: one cross-provider list of offers, filtered, sorted and paged.

The query string is the :class:`~service.offers.OfferQuery` struct, parsed strictly
(:mod:`service.api.query`): an unknown parameter is a 400 naming the closest known one,
never silently ignored. The listing itself is :func:`service.offers.list_offers`, the
same function the CLI and the MCP tool call.
"""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get

from service.api.query import parse_query
from service.api.state import SuanliDep
from service.offers import OfferPage, OfferQuery, list_offers
from service.runtime.errors import error_lang

DESCRIPTION = """Every provider's offers in one list: one instance type in one region
under one billing mode, with its price (CNY), the price's source and date, and the
instance's specs with their source. Filters combine with AND; repeat a list parameter to
give several values (`?accelerator=A100&accelerator=H800`). Unknown prices are `null`,
sort after every priced offer whatever the `sort`, and never pass `max_price` or
`billing`. `group_by` adds one summary per accelerator, provider and/or region (counts,
price ranges, the best offer). Unknown parameters and names are a 400 with the closest
valid ones."""


class OffersController(Controller):
    path = "/v1/offers"
    tags = ["catalog"]

    @get(
        operation_id="listOffers",
        summary="List offers across providers (filter, sort, group, page)",
        description=DESCRIPTION,
        sync_to_thread=False,
        opt={"query": OfferQuery},
    )
    def list_offers(self, request: Request[Any, Any, Any], suanli: SuanliDep) -> OfferPage:
        query = parse_query(request.query_params.multi_items(), OfferQuery)
        lang = error_lang(None, request.headers.get("accept-language"))
        return list_offers(query, suanli.catalog.snapshot, suanli.accelerators, lang)
