"""The parameters of the three questions (recommend, estimate, offers), declared once.

The ``suanli`` command (:mod:`service.cli.main`) turns each :class:`Param` into an
option and the MCP server (:mod:`service.mcp.server`) into a tool argument, so the two
front doors cannot drift apart: a parameter added here reaches both, with one type and
one choice list. A parameter's ``name`` is the tool argument's name and the keyword
:mod:`service.clients.forms` reads it under; the CLI adds flags, and says a thing its
own way only where a shell differs from a JSON call (``--gpu A100 --gpu V100`` against
``["A100", "V100"]``, ``20M`` tokens, ``--set key=value``, ``suanli models`` against
``list_models``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["pretrain", "finetune", "inference", "preprocess"]
Method = Literal["full", "lora", "qlora", "freeze"]
Objective = Literal["cost", "time", "balanced"]
Lang = Literal["zh", "en"]
Billing = Literal["on_demand", "monthly", "spot"]
Sort = Literal["price", "price_per_accelerator", "memory", "total_memory"]
GroupKey = Literal["accelerator", "provider", "region"]

_SAME: Any = object()


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a question, as a CLI option and as an MCP tool argument."""

    name: str
    """The tool argument, and the keyword :mod:`service.clients.forms` reads."""
    type: Any
    """Its type without ``None`` (``| None`` is added where the default is ``None``)."""
    help: str
    """What it means, in the CLI's ``--help`` and the tool's schema."""
    flags: tuple[str, ...] = ()
    """The CLI option's names; none: a tool argument only."""
    metavar: str | None = None
    default: Any = None
    tool: bool = True
    """False: a CLI option only (a shell form the tool says with other arguments)."""
    tool_help: str = _SAME
    """The tool's description, where it names things otherwise (arguments, other tools)."""
    shell_type: Any = _SAME
    """The CLI's type, where the shell form differs (``20M`` tokens are a string)."""
    tool_default: Any = _SAME

    @property
    def description(self) -> str:
        return self.help if self.tool_help is _SAME else self.tool_help

    @property
    def option_type(self) -> Any:
        return self.type if self.shell_type is _SAME else self.shell_type

    @property
    def argument_default(self) -> Any:
        return self.default if self.tool_default is _SAME else self.tool_default


def cli_params(params: tuple[Param, ...]) -> tuple[Param, ...]:
    return tuple(p for p in params if p.flags)


def tool_params(params: tuple[Param, ...]) -> tuple[Param, ...]:
    return tuple(p for p in params if p.tool)


# --- the workload (recommend and estimate) --------------------------------------------

MODEL = Param(
    "model",
    str,
    "Preset id or alias (see `suanli models`), or a size such as 13b.",
    ("--model", "-m"),
    "MODEL",
    tool_help="Model preset id or alias from list_models (e.g. 'llama-2-7b', "
    "'Qwen/Qwen2.5-7B-Instruct'), or a bare size such as '13b' for a custom model. "
    "Required except for kind='preprocess'.",
)
METHOD = Param(
    "method",
    Method,
    "Fine-tuning method (default lora).",
    ("--method",),
    tool_help="Fine-tuning method (default 'lora'). 微调方法。",
)
TOKENS = Param(
    "tokens",
    float,
    "Training tokens (dataset x epochs): 2e7, 20M, 1.5B.",
    ("--tokens", "-t"),
    "N",
    shell_type=str,
    tool_help="Training tokens = dataset tokens x epochs (e.g. 20000000). Needed for "
    "time and cost of training.",
)
SEQ_LEN = Param("seq_len", int, "Training sequence length in tokens.", ("--seq-len",))
KIND = Param(
    "kind",
    Kind,
    "Job kind; default finetune (inference with --context-len or --concurrency, "
    "preprocess with --data-gb).",
    ("--kind",),
    tool_help="Job kind. Default 'finetune'; 'inference' when context_len or "
    "concurrency is given; 'preprocess' when data_gb is given.",
)
CONTEXT_LEN = Param("context_len", int, "Inference: prompt + output tokens.", ("--context-len",))
CONCURRENCY = Param("concurrency", int, "Inference: sequences served at once.", ("--concurrency",))
PRECISION = Param(
    "precision",
    str,
    "bf16 (default), fp16, fp32, fp8; inference also int8, int4.",
    ("--precision",),
)
DATA_GB = Param("data_gb", float, "Preprocessing: input data in GB.", ("--data-gb",))
EXTRA = Param(
    "extra",
    list[str],
    "Any other workload field, KEY=VALUE (repeatable), e.g. "
    "--set lora_rank=64 --set framework=deepspeed.",
    ("--set",),
    "KEY=VALUE",
    tool=False,
)
WORKLOAD_EXTRA = Param(
    "workload_extra",
    dict[str, Any],
    "Any other workload field of the REST API, e.g. {'lora_rank': 64, "
    "'framework': 'deepspeed', 'output_tokens': 1e6}.",
)
SERVING = (CONTEXT_LEN, CONCURRENCY, PRECISION, DATA_GB, EXTRA, WORKLOAD_EXTRA)

# --- filters (recommend and offers) ---------------------------------------------------

PROVIDERS = Param(
    "providers",
    list[str],
    "Only this provider (repeatable).",
    ("--provider", "-p"),
    "NAME",
    tool_help="Only these providers, e.g. ['alibaba'].",
)
ACCELERATORS = Param(
    "accelerators",
    list[str],
    "Only this accelerator or family: A100, H800, 910B (repeatable).",
    ("--gpu", "-g"),
    "NAME",
    tool_help="Only these accelerators or families, e.g. ['A100', '910B'].",
)
REGIONS = Param(
    "regions",
    list[str],
    "Only this region (repeatable).",
    ("--region", "-r"),
    "REGION",
    tool_help="Only these regions, e.g. ['cn-beijing'].",
)


def _billing(tool_help: str) -> Param:
    """Billing modes: the same flag for recommend and offers; the defaults differ."""
    return Param(
        "billing",
        list[Billing],
        "on_demand, monthly, spot (repeatable).",
        ("--billing",),
        "MODE",
        shell_type=list[str],
        tool_help=tool_help,
    )


_MAX_PRICE = "At most this many CNY per hour."

RECOMMEND: tuple[Param, ...] = (
    MODEL,
    METHOD,
    TOKENS,
    SEQ_LEN,
    KIND,
    PROVIDERS,
    ACCELERATORS,
    REGIONS,
    Param(
        "objective",
        Objective,
        "Rank by total cost (default), time, or balanced (the fastest of the options "
        "within about 30 % of the cheapest, then the rest by cost).",
        ("--objective",),
    ),
    Param("top_k", int, "How many options (1-50, default 5).", ("--top-k", "-k")),
    Param(
        "lang", Lang, "Language of reasons, advice and summary: zh (default) or en.", ("--lang",)
    ),
    _billing(
        "Allowed billing modes (default on_demand and monthly, plus spot for "
        "interruptible training)."
    ),
    Param("max_price_per_hour", float, _MAX_PRICE, ("--max-price",)),
    Param("budget", float, "Total CNY at most.", ("--budget",)),
    Param("deadline_hours", float, "Must finish within this many hours.", ("--deadline",)),
    *SERVING,
)
"""``suanli recommend`` and the ``recommend_servers`` tool."""

ESTIMATE: tuple[Param, ...] = (
    MODEL,
    METHOD,
    TOKENS,
    SEQ_LEN,
    KIND,
    Param(
        "accelerator",
        str,
        "Place on this accelerator, e.g. A100-80GB, T4.",
        ("--gpu", "-g"),
        "NAME",
    ),
    Param(
        "count",
        int,
        "Accelerators in total (with --gpu).",
        ("--count", "-n"),
        tool_help="Accelerators in total (default 1).",
    ),
    Param(
        "zero_stage", int, "ZeRO stage 0-3 (default: the smallest that fits).", ("--zero-stage",)
    ),
    *SERVING,
)
"""``suanli estimate`` and the ``estimate_resources`` tool."""

OFFERS: tuple[Param, ...] = (
    ACCELERATORS,
    Param(
        "count",
        str,
        "Accelerators per instance: 8, 2..8, 4..",
        ("--count", "-n"),
        "N|MIN..MAX",
        tool=False,
    ),
    Param("min_accelerators", int, "At least this many accelerators per instance."),
    Param(
        "max_accelerators",
        int,
        "At most this many accelerators per instance; 0 lists CPU-only types only.",
    ),
    PROVIDERS,
    REGIONS,
    Param("max_price", float, _MAX_PRICE, ("--max-price",)),
    _billing("Only these billing modes."),
    Param(
        "min_accelerator_memory_gib",
        float,
        "At least this much memory per accelerator (GiB).",
        ("--min-gpu-memory",),
    ),
    Param("min_vcpus", int, "vCPUs, at least.", ("--min-vcpus",), tool=False),
    Param("min_memory", float, "Host RAM in GiB, at least.", ("--min-memory",), tool=False),
    Param(
        "include_cpu",
        bool,
        "Also list CPU-only instance types.",
        ("--include-cpu",),
        default=False,
        tool=False,
    ),
    Param(
        "priced_only",
        bool,
        "Leave out offers whose price is unknown.",
        ("--priced-only",),
        default=False,
    ),
    Param(
        "all_regions",
        bool,
        "One row per region (default: one per type and price, its regions folded).",
        ("--all-regions",),
        default=False,
        tool=False,
    ),
    Param(
        "fold_regions",
        bool,
        "One offer per instance type and price with all its regions in `regions` "
        "(default true); false = one offer per region.",
        default=True,
    ),
    Param("sort", Sort, "Order of the list (default price).", ("--sort",)),
    Param(
        "group_by",
        list[GroupKey],
        "accelerator, provider, region (repeatable or a,b).",
        ("--group-by",),
        "KEY",
        shell_type=list[str],
        tool_help="Summarise per accelerator, provider and/or region.",
    ),
    Param("limit", int, "Offers to return (1-500).", ("--limit",), tool_default=20),
    Param("offset", int, "Offers to skip (paging).", ("--offset",), tool_default=0),
)
"""``suanli offers`` and the ``list_offers`` tool."""
