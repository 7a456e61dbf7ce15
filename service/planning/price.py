"""Stage 4, price: each (offer group, timed placement) as a plan entry and its ranking key.

The planner's innermost loop (once per candidate the ranking walks), so the economics
and the key are written out here rather than spread over helpers. Money first when
ranking by cost; unknown prices are never cheap: a key's money tier is 0 when the job's
total is known (or, when open-ended serving, its price per token with the hourly price as
tie-break), 1 when only the hourly price is,
2 unpriced, and unpriced candidates are ordered among themselves by
:func:`service.planning.unpriced.unpriced_order`. Every key ends with its entry's index,
so the best are picked from plain tuples (``heapq.nsmallest``).

``balanced`` is keyed as ``cost`` here and re-keyed by
:func:`~service.planning.rank.balanced_plan` (the options within :func:`balanced_premium`
of the cheapest, fastest first); its second ranking keys by speed only the candidates
within that premium (``Pricer.within``).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from service.catalog.models import Offer
from service.planning.candidates import Cheapest
from service.planning.cost import (
    SPOT_INTERRUPTIONS_PER_HOUR,
    SpotOverhead,
    monthly_cost,
    monthly_pays_off,
    ranked_money_scale,
    spot_overhead,
)
from service.planning.filters import spot_above_on_demand
from service.planning.place import Variant
from service.planning.schema import Objective
from service.planning.unpriced import unpriced_order
from service.sizing.uncertainty import SPREADS, Spread

INF = math.inf
DEMOTED_TIER = 0.5
"""Added to a priced key's money tier (ranking by cost) for a device the serving engine's
current release does not run (review 4 F8): after every supported device at any price,
before the next tier (only an hourly price, 1; unpriced, 2)."""


def _indistinct(spread: Spread) -> float:
    """The largest premium at which two costs are each inside the other's calibrated
    range: a cost ``A`` estimated from hours (or a throughput) whose measured / estimated
    speed lies in ``[low, high]`` really costs between ``A / high`` and ``A / low``, so
    ``B = A (1 + p)`` and ``A`` cannot be told apart while ``B / high <= A`` and
    ``B <= A / low``: ``p = min(high, 1 / low) - 1``."""
    return min(spread.high, 1 / spread.low) - 1


TRAIN_PREMIUM = _indistinct(SPREADS["train_time"])
"""``balanced``, a finite or per-token training job: how much more than the cheapest an
option may cost and still count as about as cheap (29.8 % from the calibrated spread of
training time, measured / estimated speed 0.664-1.298 at the 5th-95th percentile of the
dev cases, :data:`~service.sizing.uncertainty.SPREADS`). The estimate cannot tell two
totals closer than that apart, so among them an expert takes the faster one; an option
costing more is a real extra spend. It follows the calibration: when the spread narrows,
so does the premium."""
SERVE_PREMIUM = _indistinct(SPREADS["inference_throughput"])
"""``balanced``, inference (batch jobs' totals, open-ended serving's price per token): the
same premium from the calibrated spread of serving throughput (0.772-1.282: 28.2 %)."""


def balanced_premium(inference: bool) -> float:
    """The premium over the cheapest within which ``balanced`` ranks by speed
    (:data:`TRAIN_PREMIUM`, :data:`SERVE_PREMIUM`)."""
    return SERVE_PREMIUM if inference else TRAIN_PREMIUM


Entry = tuple[Offer, Variant, float | None, float | None, float | None, tuple[str, ...]]
"""(offer, variant, price per hour for all nodes, job total, job hours, regions)."""


@dataclass(slots=True)
class Plan:
    """Stage 4's hand-off to ranking: the priced candidates and their keys."""

    entries: list[Entry]
    keys: list[tuple[float, ...]]
    removed: Counter[str]
    objective: Objective
    serving: bool
    """Open-ended serving: ranked per hour and by throughput (no job length)."""
    inference: bool = False
    on_demand: Mapping[tuple[str, str], float] = dataclasses.field(default_factory=dict)
    """Cheapest on-demand hourly price per (provider, instance type) that passes the
    filters: what a subscription's break-even is measured against."""
    hidden_spot: int = 0
    """Spot offers left out because their estimate is no cheaper than on-demand
    (:func:`~service.planning.filters.spot_above_on_demand`)."""
    demoted: Callable[[str | None], bool] | None = None
    """Accelerators ranked after the others (:data:`DEMOTED_TIER`)."""
    cheapest: Cheapest | None = None
    """``balanced``: the cheapest figure its keys weigh against
    (:func:`~service.planning.rank.balanced_plan`); ``None`` otherwise."""


class Pricer:
    """Prices (group, variant) pairs into plan entries and their ranking keys."""

    def __init__(
        self,
        serving: bool,
        objective: Objective,
        budget: float | None,
        deadline_hours: float | None,
        on_demand: Mapping[tuple[str, str], float] | None = None,
        to_target: bool = False,
        price_cap: float | None = None,
        monthly_asked: bool = False,
        demoted: Callable[[str | None], bool] | None = None,
        within: tuple[float, float] | None = None,
        batch_job: bool = False,
    ) -> None:
        self.serving = serving
        self.batch_job = batch_job
        """An offline batch inference job: unpriced, it ranks by accelerator-hours
        (:func:`~service.planning.unpriced.unpriced_order`)."""
        self.within = within
        """``balanced``'s fast ranking (:func:`~service.planning.rank.balanced_plan`):
        only candidates whose cost key starts at most at this (tier, money) are entered,
        keyed by speed, then that money, devices and nodes."""
        self.demoted = demoted
        """Per accelerator: ranked after the others (see :data:`DEMOTED_TIER`); decided
        once per accelerator by the caller (:meth:`~service.planning.place.Placer.outdated`)."""
        self.price_cap = price_cap
        """``max_price_per_hour``: checked against what the option costs per hour the job
        uses, all nodes together (a subscription's month over the job's hours), where the
        filter could only check a node's price spread over a whole month."""
        self.monthly_asked = monthly_asked
        """The user asked for monthly billing: a finite job shorter than the break-even
        may then be billed by the month (its option says what the month commits)."""
        self.to_target = to_target
        """Sized to a throughput target: ranked by the hour (see ``Job.to_target``)."""
        self.on_demand: Mapping[tuple[str, str], float] = {} if on_demand is None else on_demand
        """Spot estimates at or above these prices are not entered (see Plan)."""
        self.objective = objective
        self.budget = budget
        self.deadline_hours = deadline_hours
        self.entries: list[Entry] = []
        self.keys: list[tuple[float, ...]] = []
        self.removed: Counter[str] = Counter()

    def hidden(self, offer: Offer) -> bool:
        """A spot estimate no cheaper than on-demand, which :meth:`add` leaves out (the
        on-demand prices are a lazy view: looked up per type, never sized); a ranking
        skips a spot lane whose groups all fail it
        (:meth:`~service.planning.lanes.LaneIndex.hidden_groups`)."""
        return offer.billing == "spot" and spot_above_on_demand(offer, self.on_demand)

    def add(
        self,
        offer: Offer,
        regions: tuple[str, ...],
        variants: list[Variant],
        offers: int,
        abroad: bool = False,
    ) -> None:
        """One entry per variant, unless the deadline or budget rules it out (charged
        ``offers`` removals). ``abroad``: every region is outside mainland China, the
        last tie-break (an equal price in Johannesburg after one in Guiyang)."""
        serving, objective, within = self.serving, self.objective, self.within
        deadline = None if serving else self.deadline_hours
        budget = self.budget  # open-ended serving: on the commitment (see _committed)
        keys, entries = self.keys, self.entries
        price = offer.price
        hourly = None if price is None else price.price_per_hour
        monthly = (
            price.price_per_month if price is not None and offer.billing == "monthly" else None
        )
        spot = offer.billing == "spot"
        if spot and spot_above_on_demand(offer, self.on_demand):  # self.hidden(offer)
            return
        rank_scale = ranked_money_scale(offer)
        row = offer.instance
        demoted = self.demoted is not None and self.demoted(row.accelerator)
        last = float(abroad)
        cap = self.price_cap
        subscribed = offer.billing == "monthly" and not self.monthly_asked and not serving
        short_month = subscribed and monthly is not None
        od = self.on_demand.get((offer.provider, row.instance_type)) if short_month else None
        for v in variants:
            hours = v.hours
            per_hour = total = None
            if hourly is not None:
                per_hour = hourly * v.nodes
                if spot and v.spot is not None:
                    hours = spot_of(offer, v).effective_hours
                if hours is not None:
                    total = monthly_cost(monthly, v.nodes, hours) if monthly else per_hour * hours
            if cap is not None and per_hour is not None:
                used = total / hours if total is not None and hours else per_hour
                if used > cap * (1 + 1e-9):
                    self.removed["max_price_per_hour"] += offers
                    continue
            if hours is None and subscribed:
                # a finite job this device cannot time (an RLHF rollout without a
                # bandwidth): of unknown length here, so never a subscription by default
                self.removed["monthly_unknown_length"] += offers
                continue
            if short_month and hours is not None and not monthly_pays_off(monthly, od, hours):
                self.removed["monthly_short_job"] += offers
                continue
            if deadline is not None and (hours or INF) > deadline:
                self.removed["deadline_hours"] += offers
                continue
            if budget is not None:
                # unknown money is not over the budget: the option stays (ranked after
                # the priced ones) and says the budget could not be checked (review 6 H1)
                spend = total if not serving else committed(monthly, per_hour, v.nodes)
                if spend is not None and spend > budget:
                    self.removed["budget"] += offers
                    continue
            per_token = None
            if per_hour is None:
                tier, money = 2.0, INF
            elif serving or total is None:
                tier, money = (0.0 if serving else 1.0), per_hour * rank_scale
                if not serving and v.hours_per_token:
                    per_token = money * training_hours_per_token(offer, v)
            else:
                tier, money = 0.0, total * rank_scale
            speed = -(v.throughput or 0.0) if serving else (INF if hours is None else hours)
            if objective == "time" and within is None:
                key: tuple[float, ...] = (speed, tier, money, v.nodes, last, len(keys))
            elif tier == 2.0:  # unknown price: smallest sufficient first (one rule, one place)
                if within is not None:
                    continue
                order = unpriced_order(
                    v.devices, row.accelerator_memory_gib, row.vcpus, row.memory_gib, v.nodes,
                    speed, v.fit.pipeline_parallel if serving and v.fit is not None else 1,
                    v.devices * hours if self.batch_job and hours is not None else None,
                )  # fmt: skip
                key = (tier, money, *order, last, len(keys))
            elif serving and tier == 0.0:
                # Open-ended serving: price per token first (a cheap hour on a slow card
                # can cost several times more per token), the hourly price as tie-break;
                # an unknown rate never ranks as cheap.
                per_token = money / v.throughput if v.throughput else INF
                if self.to_target:  # every option serves the target: the hour decides
                    key = (tier + demoted * DEMOTED_TIER, money, per_token, v.nodes, last,
                           len(keys))  # fmt: skip
                else:
                    key = (tier + demoted * DEMOTED_TIER, per_token, money, v.nodes, last,
                           len(keys))  # fmt: skip
            elif per_token is not None:
                # Training of unknown length: cost per training token (a cheap hour on a
                # slow card can train each token for more), the hourly price as tie-break
                key = (tier + demoted * DEMOTED_TIER, per_token, money, v.devices, v.nodes,
                       last, len(keys))  # fmt: skip
            else:
                # Equal cost: the smallest sufficient machine first (time that scales with
                # the device count makes 1 and 2 GPUs tie; fewer are easier to get and lose
                # less when scaling is imperfect), then the faster. "Equal" is what the
                # answer shows: a total is compared to the cent (1 and 2 V100s at ¥285.20
                # differ in the 12th digit).
                if tier == 0.0:
                    money = round(money, 2)  # cents(money), inline: once per candidate
                key = (tier + demoted * DEMOTED_TIER, money, v.devices, speed, v.nodes, last,
                       len(keys))  # fmt: skip
            if within is not None:  # balanced's fast ranking: about as cheap, by speed
                fast = balanced_speed(offer, v, hours, serving)
                if fast == INF or key[0] != within[0] or key[1] > within[1]:
                    continue
                key = (fast, key[1], v.devices, v.nodes, last, len(keys))
            keys.append(key)
            entries.append((offer, v, per_hour, total, hours, regions))

    def plan(self, inference: bool) -> Plan:
        plan = Plan(self.entries, self.keys, self.removed, self.objective, self.serving, inference)
        plan.demoted = self.demoted
        return plan


def balanced_speed(offer: Offer, v: Variant, hours: float | None, serving: bool) -> float:
    """What ``balanced`` ranks about-as-cheap options by, lowest first, in both of its
    rankings (:func:`~service.planning.rank.balanced_plan`): the job's hours (spot:
    effective, ``hours``), minus the throughput for open-ended serving, hours per training
    token for training of unknown length; ``inf`` when unknown."""
    if serving:
        return -v.throughput if v.throughput else INF
    if hours is not None:
        return hours
    if v.hours_per_token:
        return training_hours_per_token(offer, v)
    return INF


def committed(monthly: float | None, per_hour: float | None, nodes: int) -> float | None:
    """What open-ended serving commits before it can stop, the money its ``budget`` is
    checked against (review 5 G3: a ¥1,000 budget got a ¥16,676 monthly plan): a
    subscription's first month for all nodes, else one hour of all nodes on demand or spot
    (the smallest block to start and stop; the option says how long the budget lasts).
    A serving job has no total, so this is the only spend that is known before it runs."""
    if monthly:
        return monthly * nodes
    return per_hour


def training_hours_per_token(offer: Offer, v: Variant) -> float:
    """Wall-clock hours per training token of ``v`` (spot: with the expected reclaim
    overhead, which is linear in the hours) — of a job of unknown length."""
    assert v.hours_per_token is not None
    if offer.billing != "spot":
        return v.hours_per_token
    price = offer.price
    rate = None if price is None else price.interruption_rate_per_hour
    if rate is None:
        rate = SPOT_INTERRUPTIONS_PER_HOUR
    return spot_overhead(v.hours_per_token, v.nodes, rate).effective_hours


def cents(money: float) -> float:
    """``money`` to the cent it is shown at: monotone, so a bound on the money is a
    bound on its cents (:func:`service.planning.rank._bounded_lanes` compares both)."""
    return round(money, 2)


def spot_of(offer: Offer, v: Variant) -> SpotOverhead:
    """The variant's spot overhead at the reclaim rate its price states (the provider's
    spot rules), else the model's default rate."""
    assert v.spot is not None
    price = offer.price
    rate = None if price is None else price.interruption_rate_per_hour
    if rate is None or rate == SPOT_INTERRUPTIONS_PER_HOUR or v.hours is None:
        return v.spot
    return spot_overhead(v.hours, v.nodes, rate)
