"""Localized sentences for options (reasons, warnings) and the one-line summary.

Chatbots read these to people as they are, so every sentence is complete, names its
numbers with units, and exists in Chinese and English.
"""

from __future__ import annotations

from service.planning.candidates import Candidate
from service.planning.cost import CHECKPOINT_INTERVAL_H, RESTART_H, SPOT_INTERRUPTIONS_PER_HOUR
from service.planning.schema import Lang, Objective

_T: dict[str, dict[Lang, str]] = {
    "fits": {
        "zh": "显存够用：每卡需 {need:.1f} GiB，共 {have:g} GiB，余量 {head:.1f} GiB{how}。",
        "en": "Fits: {need:.1f} GiB needed per device of {have:g} GiB, {head:.1f} GiB "
        "headroom{how}.",
    },
    "fits_high": {
        "zh": "按安全余量要求，以估算区间上限 {high:.1f} GiB 校核显存，仍放得下。",
        "en": "Because a safety headroom was asked for, the fit was also checked against the "
        "high end of the estimate's range, {high:.1f} GiB, and holds.",
    },
    "zero": {"zh": "（ZeRO-{z}）", "en": " (ZeRO-{z})"},
    "tp": {"zh": "（张量并行 {tp}）", "en": " (tensor parallel {tp})"},
    "pp": {"zh": "（流水线并行 {pp}）", "en": " (pipeline parallel {pp})"},
    "multi_node": {
        "zh": "{n} 台节点通过 {net} 互联（共 {d} 卡）。",
        "en": "{n} nodes over {net} ({d} devices in total).",
    },
    "cpu_fit": {
        "zh": "CPU 方案：{n} 台共 {v} vCPU、{m:g} GiB 内存，"
        "满足约 {need_v} vCPU / {need_m:.0f} GiB 的需求。",
        "en": "CPU-only: {n} node(s) with {v} vCPUs and {m:g} GiB RAM in total cover the "
        "~{need_v} vCPUs / {need_m:.0f} GiB needed.",
    },
    "rank_cost": {
        "zh": "按总费用排序：约 ¥{cost:,.2f}（{hours:.1f} 小时）。",
        "en": "Ranked by total cost: about ¥{cost:,.2f} for {hours:.1f} h.",
    },
    "rank_hourly": {
        "zh": "按每小时价格排序：¥{price:,.2f}/小时。",
        "en": "Ranked by hourly price: ¥{price:,.2f}/h.",
    },
    "rank_time": {
        "zh": "按耗时排序：约 {hours:.1f} 小时。",
        "en": "Ranked by time: about {hours:.1f} h.",
    },
    "rank_balanced": {
        "zh": "按费用与耗时的平衡排序。",
        "en": "Ranked by the balance of cost and time.",
    },
    "serving": {
        "zh": "解码吞吐约 {tps:,.0f} tokens/s，约 ¥{pmt:,.2f} / 百万 tokens。",
        "en": "Decode throughput about {tps:,.0f} tokens/s, about ¥{pmt:,.2f} per million tokens.",
    },
    "serving_unpriced": {
        "zh": "解码吞吐约 {tps:,.0f} tokens/s。",
        "en": "Decode throughput about {tps:,.0f} tokens/s.",
    },
    "monthly": {
        "zh": "包月：单节点任务超过 {even:.0f} 小时即比按量便宜。",
        "en": "Monthly: cheaper than on-demand once a node runs more than {even:.0f} h.",
    },
    "spot": {
        "zh": "竞价：预计被回收 {k:.2f} 次，额外 {extra:.2f} 小时"
        "（假设每 {per:.0f} 节点小时回收一次、每 {ck:g} 小时存检查点、重启 {rs:g} 小时）。",
        "en": "Spot: about {k:.2f} expected interruptions add {extra:.2f} h (assumes one "
        "reclaim per {per:.0f} node-hours, a checkpoint every {ck:g} h and a {rs:g} h restart).",
    },
    "price_source": {
        "zh": "价格来源：{src}（{as_of}，{kind}）。",
        "en": "Price source: {src} ({as_of}, {kind}).",
    },
    "unpriced": {
        "zh": "价格未知：没有可核实的公开价格，排在有价格的方案之后。",
        "en": "Price unknown: no verifiable public price, so it ranks after priced options.",
    },
    "hours_unknown": {
        "zh": "未给出 tokens，无法估计耗时与总费用。",
        "en": "No token count given, so time and total cost are not estimated.",
    },
    "low_confidence": {
        "zh": "目录可信度{conf}：{notes}",
        "en": "Catalog confidence {conf}: {notes}",
    },
    "ascend": {
        "zh": "昇腾 NPU 需要 CANN 迁移（torch_npu），非 CUDA 环境。",
        "en": "Ascend NPU: needs CANN migration (torch_npu), not CUDA.",
    },
    "supply": {
        "zh": "{acc} 供应受限，请先确认库存与地域。",
        "en": "{acc} is supply-limited; confirm stock and region first.",
    },
    "stale": {
        "zh": "价格日期为 {as_of}，可能已过时。",
        "en": "The price dates from {as_of} and may be stale.",
    },
    "live_stale": {
        "zh": "实时价格获取于 {as_of}，已超过刷新周期（刷新失败时继续使用上次成功的价格）。",
        "en": "Live price fetched at {as_of} is past its refresh interval (the last good "
        "price is served while refreshes fail).",
    },
    "estimated": {
        "zh": "价格为估计值：{basis}",
        "en": "Estimated price: {basis}",
    },
    "regions_unknown": {
        "zh": "可售地域未公开，请在控制台确认。",
        "en": "Regions where it is sold are not published; check the console.",
    },
}

_KIND: dict[str, dict[Lang, str]] = {
    "override": {"zh": "运营方覆盖价", "en": "operator override"},
    "live": {"zh": "实时价格", "en": "live price"},
    "snapshot": {"zh": "公开价格快照", "en": "published price snapshot"},
    "estimated": {"zh": "估计价", "en": "estimated"},
}

_BILLING: dict[str, dict[Lang, str]] = {
    "on_demand": {"zh": "按量", "en": "on-demand"},
    "monthly": {"zh": "包月", "en": "monthly"},
    "spot": {"zh": "竞价", "en": "spot"},
}


def t(key: str, lang: Lang, **values: object) -> str:
    return _T[key][lang].format(**values)


def clip(text: str, limit: int = 120) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters, with "…" when cut
    (a source citation inside a sentence must not end mid-word)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:(")
    return f"{cut}…"


def price_kind(source: str, lang: Lang) -> str:
    return _KIND[source][lang]


def billing_name(billing: str, lang: Lang) -> str:
    return _BILLING[billing][lang]


def spot_reason(c: Candidate, lang: Lang) -> str:
    assert c.spot is not None
    return t(
        "spot",
        lang,
        k=c.spot.expected_interruptions,
        extra=c.spot.overhead_hours,
        per=1 / SPOT_INTERRUPTIONS_PER_HOUR,
        ck=CHECKPOINT_INTERVAL_H,
        rs=RESTART_H,
    )


def rank_reason(c: Candidate, objective: Objective, serving: bool, lang: Lang) -> str | None:
    if objective == "balanced":
        return t("rank_balanced", lang)
    if objective == "time" and c.hours is not None and not serving:
        return t("rank_time", lang, hours=c.hours)
    if c.price_per_hour is None:
        return None
    if c.total_cost is not None and c.hours is not None and not serving:
        return t("rank_cost", lang, cost=c.total_cost, hours=c.hours)
    return t("rank_hourly", lang, price=c.price_per_hour)


def summary(
    lang: Lang,
    display_name: str,
    c: Candidate | None,
    accel: str,
    serving: bool,
    no_fit_reason: str | None = None,
) -> str:
    if c is None:
        if lang == "zh":
            return f"没有满足约束的方案：{no_fit_reason or '请放宽约束'}。"
        return f"No option meets the constraints: {no_fit_reason or 'relax them'}."
    offer = c.offer
    billing = billing_name(offer.billing, lang)
    name = offer.instance.instance_type
    nodes = f"{c.nodes}×" if c.nodes > 1 else ""
    if lang == "zh":
        head = f"推荐{display_name} {nodes}{name}（{accel}，{billing}"
        price = (
            f" ¥{c.price_per_hour:,.2f}/小时）" if c.price_per_hour is not None else "，价格未知）"
        )
        if serving:
            tps = c.throughput_tokens_per_s or 0
            return f"{head}{price}，预计解码吞吐约 {tps:,.0f} tokens/秒。"
        if c.hours is None:
            return f"{head}{price}；未给出 tokens，无法估计耗时。"
        cost = f"，总费用约 ¥{c.total_cost:,.2f}" if c.total_cost is not None else "，总费用未知"
        return f"{head}{price}，预计 {c.hours:.1f} 小时{cost}。"
    head = f"Rent {nodes}{name} on {display_name} ({accel}, {billing}"
    price = (
        f" at ¥{c.price_per_hour:,.2f}/h)" if c.price_per_hour is not None else ", price unknown)"
    )
    if serving:
        tps = c.throughput_tokens_per_s or 0
        return f"{head}{price}; expect about {tps:,.0f} decode tokens/s."
    if c.hours is None:
        return f"{head}{price}; without a token count the time is not estimated."
    cost = (
        f", about ¥{c.total_cost:,.2f} in total" if c.total_cost is not None else ", cost unknown"
    )
    return f"{head}{price}: about {c.hours:.1f} h{cost}."
