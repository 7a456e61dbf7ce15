"""Why an option fits and ranks, and what to watch for: its ``reasons`` and ``warnings``.

Most of the text depends only on the offer and its placement (memory fit, network,
price source, row confidence), never on the job's length, so that part is memoized
(:func:`static_texts`, keyed by value); per request only the sentences with the job's
numbers are written (ranking, spot overhead, break-even, serving price per token).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from service.planning import texts
from service.planning.advice import SUPPLY_LIMITED
from service.planning.candidates import Candidate
from service.planning.schema import Lang, Objective
from service.providers import Offer
from service.sizing import Fit, HostRequirements

STALE_BEFORE = "2025"
"""Prices dated before this year are flagged as possibly stale."""


@dataclass(frozen=True, slots=True)
class StaticTexts:
    """The job-length-independent sentences of one option, in the order shown."""

    fit: tuple[str, ...]
    """How it holds the job (memory fit, ZeRO/TP, multi-node network)."""
    price: tuple[str, ...]
    """Where the price comes from."""
    price_warnings: tuple[str, ...]
    """Stale, estimated or unknown price."""
    row_warnings: tuple[str, ...]
    """Low-confidence row, Ascend/CANN, supply-limited accelerator."""


@functools.lru_cache(maxsize=4096)
def static_texts(
    offer: Offer, fit: Fit | None, nodes: int, devices: int, serving: bool, cann: bool, lang: Lang
) -> StaticTexts:
    row = offer.instance
    fit_texts: list[str] = []
    if fit is not None:
        how = ""
        if not serving and fit.zero_stage:
            how = texts.t("zero", lang, z=fit.zero_stage)
        elif fit.tensor_parallel and fit.tensor_parallel > 1:
            how = texts.t("tp", lang, tp=fit.tensor_parallel)
        fit_texts.append(
            texts.t(
                "fits",
                lang,
                need=fit.memory.per_device_gib,
                have=row.accelerator_memory_gib or 0,
                head=fit.headroom_gib,
                how=how,
            )
        )
    if nodes > 1 and not serving and not row.is_cpu_only:
        net = {"rdma": "RDMA", "erdma": "eRDMA"}.get(row.rdma or "", "VPC")
        fit_texts.append(texts.t("multi_node", lang, n=nodes, net=net, d=devices))
    price = offer.price
    price_texts: list[str] = []
    price_warnings: list[str] = []
    if price is not None:
        kind = texts.price_kind(price.price_source, lang)
        source = texts.clip(price.source)
        price_texts.append(texts.t("price_source", lang, src=source, as_of=price.as_of, kind=kind))
        if price.as_of < STALE_BEFORE and price.price_source == "snapshot":
            price_warnings.append(texts.t("stale", lang, as_of=price.as_of))
        if price.estimated:
            price_warnings.append(texts.t("estimated", lang, basis=price.basis or ""))
    else:
        price_warnings.append(texts.t("unpriced", lang))
    row_warnings = []
    if row.confidence != "high":
        row_warnings.append(
            texts.t("low_confidence", lang, conf=row.confidence, notes=row.notes or "")
        )
    if cann:
        row_warnings.append(texts.t("ascend", lang))
    if row.accelerator in SUPPLY_LIMITED:
        row_warnings.append(texts.t("supply", lang, acc=row.accelerator))
    return StaticTexts(
        tuple(fit_texts), tuple(price_texts), tuple(price_warnings), tuple(row_warnings)
    )


def option_texts(
    c: Candidate,
    objective: Objective,
    serving: bool,
    open_ended: bool,
    cann: bool,
    live_stale: bool,
    lang: Lang,
    need: HostRequirements | None,
) -> tuple[list[str], list[str]]:
    """``(reasons, warnings)`` of candidate ``c``. ``cann``: its accelerator runs CANN;
    ``live_stale``: its live price is past its TTL."""
    row = c.offer.instance
    static = static_texts(c.offer, c.fit, c.nodes, c.devices, serving, cann, lang)
    reasons: list[str] = []
    if c.fit is None and row.is_cpu_only and row.vcpus and row.memory_gib:
        assert need is not None
        reasons.append(
            texts.t(
                "cpu_fit",
                lang,
                n=c.nodes,
                v=row.vcpus * c.nodes,
                m=row.memory_gib * c.nodes,
                need_v=need.vcpus,
                need_m=need.ram_gib,
            )
        )
    reasons.extend(static.fit)
    ranked = texts.rank_reason(c, objective, open_ended, lang)
    if ranked:
        reasons.append(ranked)
    if serving and c.throughput_tokens_per_s:
        key = "serving" if c.price_per_million_tokens is not None else "serving_unpriced"
        reasons.append(
            texts.t(key, lang, tps=c.throughput_tokens_per_s, pmt=c.price_per_million_tokens)
        )
    if c.break_even_hours is not None:
        reasons.append(texts.t("monthly", lang, even=c.break_even_hours))
    if c.spot is not None:
        reasons.append(texts.spot_reason(c, lang))
    reasons.extend(static.price)
    warnings = list(static.price_warnings)
    price = c.offer.price
    if price is not None and price.price_source == "live" and live_stale:
        warnings.append(texts.t("live_stale", lang, as_of=price.as_of))
    if c.hours is None and not open_ended:
        warnings.append(texts.t("hours_unknown", lang))
    warnings.extend(static.row_warnings)
    if not c.regions:
        warnings.append(texts.t("regions_unknown", lang))
    return reasons, warnings
