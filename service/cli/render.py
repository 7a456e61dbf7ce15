"""Rich tables for the CLI, laid out like ``dstack offer`` and ``sky show-gpus``.

Each function takes the API's JSON document (the same one ``--json`` prints) and prints
it for a person: unknown prices read ``unknown`` (never a zero), estimated prices are
marked ``~`` (with a footnote), and the summary sentence closes the recommendation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

Json = Any

UNKNOWN = Text("unknown", style="dim")


def money(value: float | None, estimated: bool = False) -> Text:
    if value is None:
        return UNKNOWN
    text = f"¥{value:,.2f}"
    return Text(f"~{text}" if estimated else text, style="yellow" if estimated else "")


ESTIMATED = {
    "en": "~ estimated price, not a quote (--json shows what each estimate stands on)",
    "zh": "~ 为估算价格，非报价（加 --json 可看每个估算的依据）",
}
_CONSTRAINTS = {
    "providers": ("the provider filter", "云厂商限制"),
    "regions": ("the region filter", "地域限制"),
    "accelerators": ("the accelerator filter", "加速卡限制"),
    "cuda_required": ("the CUDA requirement", "CUDA 要求"),
    "billing": ("the billing modes", "计费方式限制"),
    "max_price_per_hour": ("the price cap", "单价上限"),
    "min_vcpus": ("the vCPU minimum", "vCPU 下限"),
    "min_memory_gib": ("the host RAM minimum", "内存下限"),
    "budget": ("the budget", "预算"),
    "deadline_hours": ("the deadline", "截止时间"),
}
"""A constraint the answer's ``relax`` names -> how a person says it (en, zh)."""


def relax_line(hint: Json, lang: str) -> str:
    """One ``relax`` hint as a sentence in the answer's language: the constraint in
    words (not its field name), how many more candidates, the nearest one."""
    constraint = hint["constraint"]
    en, zh = _CONSTRAINTS.get(constraint, (constraint.replace("_", " "),) * 2)
    nearest = hint.get("nearest")
    if lang == "zh":
        return f"- 放宽{zh}可多 {hint['removed']} 个候选" + (f"，例如 {nearest}" if nearest else "")
    return f"- without {en}: {hint['removed']} more candidates" + (
        f", e.g. {nearest}" if nearest else ""
    )


def number(value: float | None, unit: str = "", digits: int = 1) -> str:
    if value is None:
        return "?"
    return f"{value:,.{digits}f}{unit}"


def resources(item: Json) -> str:
    """``16xCPU, 96GB, 2xA100-80GB (80GB)`` (dstack's RESOURCES column)."""
    parts = [
        f"{item['vcpus']}xCPU" if item.get("vcpus") is not None else "?xCPU",
        f"{item['memory_gib']:g}GB" if item.get("memory_gib") is not None else "?GB",
    ]
    acc = item.get("accelerator")
    if acc:
        memory = acc.get("memory_gib")
        size = f"{memory:g}GB" if memory else "?GB"
        parts.append(f"{acc['count']}x{acc['name']} ({size})")
    return ", ".join(parts)


_BILLING = {
    "en": {"on_demand": "on-demand", "monthly": "monthly", "spot": "spot"},
    "zh": {"on_demand": "按量", "monthly": "包月", "spot": "竞价"},
}


def billing(value: str | None, lang: str = "en") -> str:
    return _BILLING[lang].get(value or "", "?")


def offers(console: Console, page: Json) -> None:
    if page.get("groups") is not None:
        offer_groups(console, page)
        return
    if not page["items"]:
        console.print(f"No offer matches these filters ({page['total']} in all pages).")
        _warnings(console, page.get("warnings", ()))
        return
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for column in ("#", "PROVIDER", "REGION", "INSTANCE TYPE", "RESOURCES", "BILLING"):
        table.add_column(column, no_wrap=column != "RESOURCES")
    table.add_column("¥/H", justify="right")
    table.add_column("¥/ACC·H", justify="right")
    for index, item in enumerate(page["items"], start=page.get("offset", 0) + 1):
        table.add_row(
            str(index),
            item["provider"],
            _where(item, unknown="?"),
            item["instance_type"],
            resources(item),
            billing(item.get("billing")),
            money(item.get("price_per_hour"), item.get("price_estimated", False)),
            money(item.get("price_per_accelerator_hour"), item.get("price_estimated", False)),
        )
    console.print(table)
    priced = [i["price_per_hour"] for i in page["items"] if i.get("price_per_hour") is not None]
    shown = len(page["items"])
    if any(i.get("price_estimated") for i in page["items"]):
        console.print(Text(ESTIMATED["en"], style="dim"))
    footer = f"Shown {shown} of {page['total']} offers ({page['priced']} priced)"
    if priced:
        footer += f", ¥{max(priced):,.2f}/h max on this page"
    console.print(Text(footer, style="dim"))
    _warnings(console, page.get("warnings", ()))


def offer_groups(console: Console, page: Json) -> None:
    groups = page["groups"]
    keys = list(groups[0]["key"]) if groups else []
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for key in keys:
        table.add_column(key.upper(), no_wrap=True)
    for column in ("OFFERS", "COUNTS", "¥/ACC·H", "¥/H", "BEST OFFER"):
        table.add_column(
            column, justify="right" if column != "BEST OFFER" else "left", no_wrap=True
        )
    for group in groups:
        best = group["best"]
        where = best.get("region") or "?"
        if "provider" not in keys:
            where = f"{best['provider']} {where}"
        table.add_row(
            *[str(group["key"][k] or ("CPU only" if k == "accelerator" else "?")) for k in keys],
            f"{group['offers']} ({group['priced']} priced)",
            ",".join(str(c) for c in group["accelerator_counts"]) or "-",
            _range(
                group["min_price_per_accelerator_hour"],
                group["max_price_per_accelerator_hour"],
                group.get("estimated", 0) > 0,
            ),
            _range(
                group["min_price_per_hour"],
                group["max_price_per_hour"],
                group.get("estimated", 0) > 0,
            ),
            f"{best['instance_type']} ({where})",
        )
    console.print(table)
    if any(group.get("estimated") for group in groups):
        console.print(Text("~ the range includes estimated prices (not quotes)", style="dim"))
    console.print(Text(f"{len(groups)} groups of {page['total']} offers", style="dim"))
    _warnings(console, page.get("warnings", ()))


def _range(low: float | None, high: float | None, estimated: bool = False) -> Text:
    """``¥low..high``; ``~`` when some prices of the range are estimates."""
    if low is None or high is None:
        return UNKNOWN
    mark = "~" if estimated else ""
    style = "yellow" if estimated else ""
    if abs(low - high) < 0.005:
        return Text(f"{mark}¥{low:,.2f}", style=style)
    return Text(f"{mark}¥{low:,.2f}..{high:,.2f}", style=style)


_HEADERS = {
    "en": ("#", "PROVIDER", "REGION", "INSTANCE TYPE", "ACCELERATORS", "BILLING", "¥/H",
           "HOURS", "TOTAL", "GPU MEM"),
    "zh": ("#", "云厂商", "地域", "实例规格", "加速卡", "计费", "¥/小时", "小时", "总价", "显存"),
}  # fmt: skip
_PARETO = {"en": "* on the cost–time Pareto front", "zh": "* 位于成本–时间帕累托前沿"}


def recommendation(console: Console, answer: Json) -> None:
    """Options in the answer's language (the headers too), then the summary sentence."""
    options = answer.get("options", [])
    lang = "zh" if answer.get("lang") == "zh" else "en"
    if options:
        table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
        headers = _HEADERS[lang]
        for index, column in enumerate(headers):
            right = index >= 6
            table.add_column(
                column, justify="right" if right else "left", no_wrap=index != 2 or right
            )
        for option in options:
            acc = option.get("accelerator")
            nodes = option.get("nodes", 1)
            accel = (
                ("CPU only" if lang == "en" else "仅 CPU")
                if not acc
                else f"{acc['count']}x{acc['name']}"
            )
            if nodes > 1:
                accel = f"{nodes} nodes x {accel}" if lang == "en" else f"{nodes} 节点 x {accel}"
            fit = "-"
            if option.get("per_device_gib") is not None and option.get("headroom_gib") is not None:
                used, free = option["per_device_gib"], option["headroom_gib"]
                fit = f"{used:.1f}/{used + free:.0f} GiB"
            estimated = option.get("price_estimated", False)
            table.add_row(
                str(option["rank"]) + (" *" if option.get("pareto") else ""),
                option["provider"],
                _where(option),
                option["instance_type"],
                accel,
                billing(option.get("billing"), lang),
                money(option.get("price_per_hour"), estimated),
                number(option.get("hours")),
                money(option.get("total_cost"), estimated),
                fit,
            )
        console.print(table)
        if any(option.get("pareto") for option in options):
            console.print(Text(_PARETO[lang], style="dim"))
        if any(option.get("price_estimated") for option in options):
            console.print(Text(ESTIMATED[lang], style="dim"))
    console.print()
    console.print(Text(answer.get("summary", ""), style="bold"))
    for hint in answer.get("relax", []):
        console.print(relax_line(hint, lang), markup=False)
    _warnings(console, answer.get("warnings", ()))
    for advice in answer.get("advice", []):
        console.print(Text(f"- {advice['text']}", style="dim"))


def _where(option: Json, unknown: str = "any") -> str:
    """The region, and how many more regions share the same offer (``cn-beijing +3``)."""
    regions = [r for r in option.get("regions") or [] if r != option.get("region")]
    if option.get("region"):
        regions.insert(0, option["region"])
    if not regions:
        return unknown
    more = f" +{len(regions) - 1}" if len(regions) > 1 else ""
    return f"{regions[0]}{more}"


def estimate(console: Console, answer: Json) -> None:
    memory = answer["memory"]
    console.print(Text("Memory per device", style="bold"))
    table = Table(show_edge=False, box=None, header_style="bold")
    table.add_column("PART")
    table.add_column("GiB", justify="right")
    for key in ("weights", "gradients", "optimizer", "activations", "kv_cache", "overhead"):
        value = memory.get(f"{key}_gib")
        if value is not None:
            table.add_row(key.replace("_", " "), f"{value:.2f}")
    total = f"{memory['per_device_gib']:.2f}"
    table.add_row(Text("per device", style="bold"), Text(total, style="bold"))
    console.print(table)
    compute = answer.get("compute") or {}
    if compute.get("flops"):
        tokens = compute.get("tokens") or 0
        console.print(f"Compute: {compute['flops']:.3g} FLOPs over {tokens:.3g} tokens")
    timing = answer.get("time")
    if timing:
        mfu = timing.get("mfu")
        console.print(
            f"Time: about {timing['hours']:.1f} h ({timing['device_hours']:.1f} device-hours"
            + (f", MFU {mfu:.2f})" if mfu is not None else ")")
        )
    placement = answer.get("placement")
    if placement:
        verdict = "fits" if placement["fits"] else "does NOT fit"
        console.print(
            f"Placement: {placement['count']}x{placement['accelerator']} {verdict}"
            f" (headroom {placement['headroom_gib']:.1f} GiB per device)"
        )
    host = answer.get("host") or {}
    if host:
        console.print(
            f"Host: {host.get('vcpus')}-{host.get('vcpus_recommended')} vCPUs, "
            f"{number(host.get('ram_gib'), ' GiB RAM')}, "
            f"{number(host.get('disk_gib'), ' GiB disk')}"
        )
    assumptions = answer.get("assumptions", [])
    if assumptions:
        console.print(Text("Assumptions:", style="bold"))
        for line in assumptions:
            console.print(Text(f"- {line}", style="dim"))


def models(console: Console, presets: Sequence[Json]) -> None:
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for column in ("ID", "NAME", "KIND", "PARAMS (B)", "LAYERS", "HIDDEN", "HEADS", "KV", "VOCAB"):
        table.add_column(column, justify="right" if column[0] in "PLHKV" else "left")
    for p in presets:
        table.add_row(
            p["id"],
            p["display_name"],
            p["kind"],
            f"{p['params_b']:.2f}",
            *(_cell(p.get(k)) for k in ("layers", "hidden", "heads", "kv_heads", "vocab")),
        )
    console.print(table)
    console.print(Text(f"{len(presets)} presets; pass an id or alias to --model", style="dim"))


def _cell(value: object) -> str:
    return "-" if value is None else str(value)


def accelerators(console: Console, specs: Sequence[Json]) -> None:
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for column in ("NAME", "VENDOR", "MEMORY", "BF16 TFLOPS", "FP16 TFLOPS", "GB/S", "STACK"):
        left = column in ("NAME", "VENDOR", "STACK")
        table.add_column(column, justify="left" if left else "right")
    for spec in specs:
        table.add_row(
            spec["name"],
            spec["vendor"],
            f"{spec['memory_gib']:g} GiB",
            number(spec.get("bf16_tflops"), digits=0),
            number(spec.get("fp16_tflops"), digits=0),
            number(spec.get("mem_bandwidth_gbps"), digits=0),
            spec.get("stack", "cuda"),
        )
    console.print(table)


def _warnings(console: Console, warnings: Sequence[str]) -> None:
    for warning in warnings:
        console.print(Text(f"! {warning}", style="yellow"))
