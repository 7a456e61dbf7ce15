"""The provider contract and the shared catalog models every plugin speaks.

A provider plugin imports only :mod:`service`; these structs are the whole vocabulary
between the core and a cloud. They are frozen msgspec structs so catalog rows are
hashable, cheap to copy across requests and decoded straight from the snapshot files.

Truth in data: every row carries ``source`` and ``as_of``. A field nobody could confirm
is ``None`` ("unknown"), never a guess; the planner keeps rows with a missing needed
field out of recommendations rather than filling them in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Literal, Protocol, runtime_checkable

import msgspec

Billing = Literal["on_demand", "monthly", "spot"]
"""How an instance is paid for: per hour, per month (subscription) or spot (preemptible)."""

Rdma = Literal["none", "rdma", "erdma"]
"""Cluster network: none, RDMA (InfiniBand/RoCE) or Alibaba-style elastic RDMA (eRDMA)."""

Stack = Literal["cuda", "cann"]
"""Software stack an accelerator needs: NVIDIA CUDA or Huawei Ascend CANN."""

Confidence = Literal["high", "medium", "low"]
Usage = Literal["training", "inference"]
"""What a row can run, where its source restricts it (a ModelArts public inference pool
flavor serves online inference only)."""

PriceSource = Literal["override", "live", "snapshot", "estimated"]
"""Where a price came from, in precedence order (an override beats everything)."""

AS_OF_PATTERN = r"^\d{4}(-\d{2}(-\d{2}([T ][0-9:.]+Z?)?)?)?$"
"""``as_of`` is an ISO-8601 date, possibly partial (``2025``, ``2025-06``) when the
source itself is dated only that precisely, or a full timestamp for live prices."""

AsOf = Annotated[str, msgspec.Meta(pattern=AS_OF_PATTERN)]
Source = Annotated[str, msgspec.Meta(min_length=3)]

HOURS_PER_MONTH = 730.0
"""The billing month the clouds use to convert monthly to hourly figures (8760 h / 12)."""

ALL_REGIONS = "*"
"""Region of a list price that the source gives without a region (e.g. Tencent's
"标准刊例价", which applies to mainland China in general): it prices the instance type
in every region where the type is sold."""


class AcceleratorSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One accelerator model (GPU or NPU) with its published dense figures.

    Throughput figures are *dense* (not the 2x "with sparsity" marketing numbers);
    ``None`` where the vendor publishes none (e.g. BF16 on Turing).
    """

    name: Annotated[
        str,
        msgspec.Meta(
            description="Canonical name, e.g. `A100-80GB`, `V100-32GB`, `H800`, `Ascend-910B3`."
        ),
    ]
    vendor: Annotated[str, msgspec.Meta(description="Vendor, e.g. NVIDIA or Huawei.")]
    memory_gib: Annotated[float, msgspec.Meta(description="Memory of one accelerator in GiB.")]
    mem_bandwidth_gbps: Annotated[
        float | None, msgspec.Meta(description="Memory bandwidth in GB/s; `null` when unpublished.")
    ] = None
    bf16_tflops: Annotated[
        float | None,
        msgspec.Meta(
            description="Dense BF16 peak in TFLOPS (not the 2x sparsity figure); `null` when "
            "unsupported or unpublished."
        ),
    ] = None
    fp16_tflops: Annotated[
        float | None,
        msgspec.Meta(description="Dense FP16 peak in TFLOPS; `null` when unpublished."),
    ] = None
    fp8_tflops: Annotated[
        float | None,
        msgspec.Meta(
            description="Dense FP8 peak in TFLOPS; `null` when unsupported or unpublished."
        ),
    ] = None
    int8_tops: Annotated[
        float | None, msgspec.Meta(description="Dense INT8 peak in TOPS; `null` when unpublished.")
    ] = None
    fp32_tflops: Annotated[
        float | None, msgspec.Meta(description="FP32 peak in TFLOPS; `null` when unpublished.")
    ] = None
    interconnect: Annotated[
        str | None,
        msgspec.Meta(
            description="Device-to-device interconnect, e.g. NVLink or HCCS; `null` when "
            "unpublished."
        ),
    ] = None
    interconnect_gbps: Annotated[
        float | None,
        msgspec.Meta(description="Interconnect bandwidth in GB/s; `null` when unpublished."),
    ] = None
    architecture: Annotated[
        str | None,
        msgspec.Meta(
            description="Generation (Pascal, Volta, Turing, Ampere, Ada, Hopper, DaVinci, ...)."
        ),
    ] = None
    supports_bf16: Annotated[
        bool, msgspec.Meta(description="True when the hardware computes in BF16.")
    ] = False
    supports_fp8: Annotated[
        bool, msgspec.Meta(description="True when the hardware computes in FP8.")
    ] = False
    stack: Annotated[
        Stack,
        msgspec.Meta(description="Software stack: `cuda` (NVIDIA) or `cann` (Huawei Ascend)."),
    ] = "cuda"
    aliases: Annotated[
        tuple[str, ...],
        msgspec.Meta(description="Other names that select this accelerator (e.g. `A100`, `910B`)."),
    ] = ()
    source: Annotated[
        Source,
        msgspec.Meta(
            description="Where the figures are published: a URL or a repository path at a commit."
        ),
    ]
    confidence: Annotated[
        Confidence,
        msgspec.Meta(description="How well the figures are sourced: `high`, `medium` or `low`."),
    ] = "high"
    notes: Annotated[
        str | None, msgspec.Meta(description="Caveats about the figures; `null` when none.")
    ] = None

    @property
    def dense_tflops_16bit(self) -> float | None:
        """Peak dense throughput for 16-bit training: BF16 when supported, else FP16."""
        if self.supports_bf16 and self.bf16_tflops:
            return self.bf16_tflops
        return self.fp16_tflops


class InstanceType(msgspec.Struct, frozen=True, kw_only=True):
    """One rentable instance type (a catalog row), exactly as the cloud names it."""

    instance_type: str
    """Exact API name, e.g. ``ecs.gn7i-c8g1.2xlarge`` or ``GN7.2XLARGE32``."""
    family: str
    accelerator: str | None = None
    """Canonical accelerator name from the registry; ``None`` for CPU-only types."""
    accelerator_count: int = 0
    accelerator_memory_gib: float | None = None
    """Memory per accelerator."""
    vcpus: int | None = None
    memory_gib: float | None = None
    network_gbps: float | None = None
    rdma: Rdma | None = None
    """``None`` when unknown; ``"none"`` only when the source says so."""
    rdma_gbps: float | None = None
    """Gbit/s of the server's RDMA network to other servers, all its RDMA NICs together,
    where a source states it apart from ``network_gbps`` (e.g. 8 x 400 Gbit/s InfiniBand
    next to a 96 Gbit/s VPC); ``None`` otherwise (eRDMA runs over the VPC network)."""
    local_nvme: str | None = None
    cpu_model: str | None = None
    regions: tuple[str, ...] = ()
    """Regions a source places the type in; empty when no source says where (unknown).
    A region constraint keeps the row only in these regions."""
    zones: tuple[str, ...] = ()
    """Availability zones a source names (e.g. ``ap-guangzhou-4``); empty when none does."""
    regions_note: str | None = None
    """Why the region list is short or empty (e.g. the cloud documents the family only
    as sold in "some regions"), so an empty list reads as unknown, not as unsold."""
    source: Source
    as_of: AsOf
    confidence: Confidence = "high"
    notes: str | None = None
    usage: tuple[Usage, ...] = ()
    """What the type can run when its source restricts it (``("inference",)``: an
    inference pool); empty when no source restricts it. Training jobs skip a row whose
    usage leaves training out."""
    usage_note: str | None = None
    """Where the restriction comes from (the source's words)."""

    @property
    def runs_training(self) -> bool:
        return not self.usage or "training" in self.usage

    @property
    def is_cpu_only(self) -> bool:
        return self.accelerator is None

    @property
    def missing_fields(self) -> tuple[str, ...]:
        """Fields the planner needs but the catalog could not confirm."""
        needed: dict[str, object] = {"vcpus": self.vcpus, "memory_gib": self.memory_gib}
        if not self.is_cpu_only:
            needed["accelerator_memory_gib"] = self.accelerator_memory_gib
        return tuple(name for name, value in needed.items() if value is None)


class SpotRules(msgspec.Struct, frozen=True, kw_only=True):
    """A provider's documented spot (preemptible) rules, the basis of spot estimates.

    ``None`` fields are rules the provider does not publish; without ``discount_floor``
    no spot price is estimated (a spot quote from the live adapter still counts).
    """

    discount_floor: Annotated[
        float | None,
        msgspec.Meta(
            description="Lowest documented spot price as a fraction of on demand (0.1 = 90% off)."
        ),
    ] = None
    discount_cap: Annotated[
        float,
        msgspec.Meta(description="Highest spot price as a fraction of on demand (the bid cap)."),
    ] = 1.0
    protection_hours: Annotated[
        float | None,
        msgspec.Meta(description="Hours after purchase during which it is not reclaimed."),
    ] = None
    notice_minutes: Annotated[
        float | None, msgspec.Meta(description="Warning given before a reclaim, in minutes.")
    ] = None
    interruption_rate_per_hour: Annotated[
        float | None,
        msgspec.Meta(
            description="Reclaims per node-hour the interruption model assumes "
            "(no cloud publishes one)."
        ),
    ] = None
    source: Annotated[
        Source, msgspec.Meta(description="Where the rules are published (URLs or repo paths).")
    ]
    as_of: Annotated[AsOf, msgspec.Meta(description="Date of the newest rule source.")]
    notes: Annotated[
        str | None, msgspec.Meta(description="What the rules leave open; `null` when nothing.")
    ] = None


class PriceRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A superseded price kept for provenance: what it was, where it came from, when."""

    price_per_hour: float | None
    price_per_month: float | None = None
    source: Source
    as_of: AsOf
    notes: str | None = None


class Price(msgspec.Struct, frozen=True, kw_only=True):
    """A price for one instance type in one region and billing mode (CNY)."""

    instance_type: str
    region: str
    """Region id, or ``"*"`` (:data:`ALL_REGIONS`) for a list price given without region."""
    billing: Billing
    price_per_hour: float | None
    """CNY per hour; for ``monthly`` the month's price divided by 730 h."""
    price_per_month: float | None = None
    currency: str = "CNY"
    source: Source
    as_of: AsOf
    price_source: PriceSource = "snapshot"
    estimated: bool = False
    """True for a price not quoted by the cloud (e.g. a marketplace reference); ``basis``
    then says what it stands on and responses label it as estimated."""
    basis: str | None = None
    basis_zh: str | None = None
    """The same basis in Chinese (estimates made by the price model)."""
    price_low: float | None = None
    """Estimates only: the low end of the estimate's range (CNY per hour)."""
    price_high: float | None = None
    """Estimates only: the high end of the estimate's range (CNY per hour); ranking
    treats an estimate as cheaper than a confirmed price only below this bound."""
    interruption_rate_per_hour: float | None = None
    """Spot only: expected reclaims per node-hour used by the interruption model."""
    history: tuple[PriceRecord, ...] = ()
    """Older prices this one replaced (same type, region and billing), newest first."""
    notes: str | None = None

    @property
    def ranking_price(self) -> float | None:
        """The price ranking uses: an estimate counts at the top of its range, so it ranks
        ahead of a confirmed price only when it is clearly (beyond its range) cheaper."""
        if self.estimated and self.price_high is not None:
            return self.price_high
        return self.price_per_hour

    @property
    def ranking_month(self) -> float | None:
        """The month's price ranking uses: an estimate scaled to the top of its range."""
        month = self.price_per_month
        if month is None or not self.estimated or not self.price_high or not self.price_per_hour:
            return month
        return month * self.price_high / self.price_per_hour


class AcceleratorRef(msgspec.Struct, frozen=True, kw_only=True):
    """The accelerators of an instance type as responses show them (pinned field names)."""

    name: Annotated[
        str, msgspec.Meta(description="Canonical accelerator name (as in GET /v1/accelerators).")
    ]
    count: Annotated[int, msgspec.Meta(description="Accelerators in one server.")]
    memory_gib: Annotated[
        float | None,
        msgspec.Meta(
            description="Memory of each accelerator in GiB; `null` when the catalog could not "
            "confirm it."
        ),
    ]

    @classmethod
    def of(cls, row: InstanceType) -> AcceleratorRef | None:
        if row.accelerator is None:
            return None
        return cls(
            name=row.accelerator, count=row.accelerator_count, memory_gib=row.accelerator_memory_gib
        )


class Offer(msgspec.Struct, frozen=True, kw_only=True):
    """An instance type joined with one price (or none): what the planner ranks."""

    provider: str
    instance: InstanceType
    region: str
    billing: Billing
    price: Price | None = None

    @property
    def price_per_hour(self) -> float | None:
        return None if self.price is None else self.price.price_per_hour

    @property
    def ranking_price(self) -> float | None:
        """Price per hour for ranking (an estimate at the top of its range)."""
        return None if self.price is None else self.price.ranking_price

    @property
    def estimated(self) -> bool:
        return self.price is not None and self.price.estimated


@runtime_checkable
class Provider(Protocol):
    """What a cloud plugin returns from ``suanli_register_providers``.

    Methods are synchronous and cheap: they serve a snapshot held in memory. Network I/O
    (live prices) lives in a separate :class:`LivePriceSource`, run by the refresh job,
    never on the request path.
    """

    name: str
    display_name: str
    currency: str

    def regions(self) -> Sequence[str]: ...

    def instance_types(self) -> Sequence[InstanceType]: ...

    def prices(self, region: str | None = None) -> Sequence[Price]: ...


@runtime_checkable
class LivePriceSource(Protocol):
    """Optional: a provider that can fetch today's prices through its cloud's SDK."""

    def live_prices_available(self) -> tuple[bool, str | None]:
        """(usable, reason when not): SDK installed and credentials configured."""
        ...

    def live_prices(self, region: str, instance_types: Sequence[str]) -> Sequence[Price]: ...


_ALIAS_JUNK = re.compile(r"[\s_\-/().]+")


_CHINESE_WORDS = (("英伟达", "nvidia"), ("华为", "huawei"), ("昇腾", "ascend"), ("显卡", ""))
"""Vendor and family words as Chinese users type them (``昇腾910B`` = ``Ascend 910B``)."""


def normalize_name(name: str) -> str:
    """Fold a user-typed accelerator or model name to a comparison key.

    ``"NVIDIA A100 80G"``, ``"a100-80gb"`` and ``"A100_80GB"`` all become ``"a10080gb"``.
    """
    key = name.strip().lower()
    for word, latin in _CHINESE_WORDS:
        key = key.replace(word, latin)
    key = _ALIAS_JUNK.sub("", key)
    key = key.removeprefix("nvidia").removeprefix("huawei")
    if key.endswith("g") and key[:-1][-2:].isdigit():
        key += "b"
    return key
