"""The workload request structs: what a client tells the sizing engine about its job.

``Workload`` is a msgspec tagged union on ``kind`` (``pretrain``, ``finetune``,
``inference``, ``preprocess``). Every numeric field carries msgspec bounds, so absurd
values (zero layers, a 10^20-token run) are rejected by the decoder with a 400 that names
the field, before any arithmetic runs. Checks that involve two fields (``quant_bits``
without QLoRA, heads that do not divide hidden) live in :func:`validate_workload`, not in
``__post_init__``, so the error can name the *request path* of the offending field.

Unknown fields are refused (``forbid_unknown_fields``): a misspelt ``seq_length`` or
``methd`` silently dropped would answer a different job than the one asked, which is the
mistake chatbots make most. The 400 names the full path and the closest valid names
(:mod:`service.api.body`).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec

from service.errors import InputError

# --- bounded scalar types (the bounds are part of the public contract) -------------

ModelName = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=128,
        description="A preset id or alias from GET /v1/models, e.g. `llama-2-7b`, "
        "`Qwen/Qwen2.5-7B-Instruct`.",
    ),
]
ParamsB = Annotated[
    float,
    msgspec.Meta(
        ge=1e-6,
        le=3000,
        description="Parameters in billions (total, incl. all experts); at least 1e-6 "
        "(1,000 parameters).",
    ),
]
Layers = Annotated[int, msgspec.Meta(ge=1, le=1024, description="Transformer layers.")]
Hidden = Annotated[int, msgspec.Meta(ge=1, le=131_072, description="Hidden size (d_model).")]
Heads = Annotated[int, msgspec.Meta(ge=1, le=4096, description="Attention (query) heads.")]
KvHeads = Annotated[
    int, msgspec.Meta(ge=1, le=4096, description="Key/value heads (GQA); = heads for MHA.")
]
HeadDim = Annotated[int, msgspec.Meta(ge=1, le=4096, description="Per-head dimension.")]
Intermediate = Annotated[
    int, msgspec.Meta(ge=1, le=1_048_576, description="MLP intermediate size (per expert).")
]
Vocab = Annotated[int, msgspec.Meta(ge=1, le=4_194_304, description="Vocabulary size.")]
SeqLen = Annotated[
    int, msgspec.Meta(ge=1, le=1_048_576, description="Training sequence length in tokens.")
]
Tokens = Annotated[
    float,
    msgspec.Meta(
        ge=1,
        le=1e15,
        description="Training tokens (dataset tokens x epochs). For image models "
        "(cnn/detector/diffusion presets): training samples.",
    ),
]
MicroBatch = Annotated[
    int, msgspec.Meta(ge=1, le=65_536, description="Sequences (or images) per device per step.")
]
ImageSize = Annotated[
    int,
    msgspec.Meta(
        ge=8, le=16_384, description="Input image side in pixels (image models); preset default."
    ),
]

Precision = Literal["bf16", "fp16", "fp32", "fp8"]
InferencePrecision = Literal["bf16", "fp16", "fp32", "fp8", "int8", "int4"]
KvPrecision = Literal["bf16", "fp16", "fp32", "fp8", "int8"]
Optimizer = Literal["adamw", "adamw_8bit", "sgd", "adafactor"]
Method = Literal["full", "lora", "qlora", "freeze"]
LoraTargets = Literal["attention", "all_linear"]
Framework = Literal["generic", "deepspeed"]
Offload = Literal["none", "optimizer", "all"]


class ModelSpec(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A model given by its size (and optionally its architecture) instead of a preset.

    With only ``params_b`` the missing architecture is taken from the nearest preset of
    the same size (the response says which one in ``assumptions``).
    """

    params_b: ParamsB
    layers: Layers | None = None
    hidden: Hidden | None = None
    heads: Heads | None = None
    kv_heads: KvHeads | None = None
    head_dim: HeadDim | None = None
    intermediate: Intermediate | None = None
    vocab: Vocab | None = None
    tied_embeddings: Annotated[
        bool | None,
        msgspec.Meta(
            description="True when input and output embeddings share one matrix (counted once); "
            "default: the nearest preset's."
        ),
    ] = None
    active_params_b: (
        Annotated[
            float,
            msgspec.Meta(ge=1e-6, le=3000, description="Parameters active per token (MoE)."),
        ]
        | None
    ) = None


ModelRef = ModelName | ModelSpec


class _Training(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Fields shared by pre-training and fine-tuning."""

    model: Annotated[
        ModelRef,
        msgspec.Meta(
            description="The model: a preset id or alias from GET /v1/models (a string), or "
            "its size and optionally its architecture (`{params_b, ...}`)."
        ),
    ]
    seq_len: SeqLen = 2048
    micro_batch_size: MicroBatch = 1
    precision: Annotated[
        Precision,
        msgspec.Meta(description="Training number format: `bf16`, `fp16`, `fp32` or `fp8`."),
    ] = "bf16"
    mixed_precision: Annotated[
        bool,
        msgspec.Meta(
            description="Keep fp32 master weights and optimizer states (standard mixed "
            "precision); false = pure 16-bit training."
        ),
    ] = True
    optimizer: Annotated[
        Optimizer,
        msgspec.Meta(
            description="Optimizer, which sets the bytes of optimizer state per parameter: "
            "`adamw` (12 B with mixed precision), `adamw_8bit`, `sgd` or `adafactor`."
        ),
    ] = "adamw"
    gradient_checkpointing: Annotated[
        bool,
        msgspec.Meta(
            description="Recompute activations in the backward pass (less memory, about a third "
            "more compute)."
        ),
    ] = True
    flash_attention: Annotated[
        bool,
        msgspec.Meta(
            description="Use FlashAttention (no seq_len x seq_len attention matrix in memory)."
        ),
    ] = True
    framework: Annotated[
        Framework,
        msgspec.Meta(
            description="Byte accounting of model states: `generic` (ZeRO paper, 16 B/param "
            "for mixed-precision AdamW) or `deepspeed` (DeepSpeed's estimators: fp32 "
            "gradient buffer, 20 B/param; ZeRO-3 live-parameter term)."
        ),
    ] = "generic"
    offload: Annotated[
        Offload,
        msgspec.Meta(
            description="DeepSpeed ZeRO-Offload: `optimizer` moves optimizer states and "
            "gradients to CPU RAM, `all` also the parameters (ZeRO-3 only)."
        ),
    ] = "none"
    image_size: ImageSize | None = None


class Pretrain(_Training, frozen=True, kw_only=True, tag="pretrain", tag_field="kind"):
    """Pre-training from scratch: every parameter trains; ``tokens`` is required."""

    kind: ClassVar[Literal["pretrain"]] = "pretrain"
    """The ``kind`` tag (msgspec keeps tags out of the fields; this makes it readable)."""

    tokens: Tokens


class Finetune(_Training, frozen=True, kw_only=True, tag="finetune", tag_field="kind"):
    """Fine-tuning: full, LoRA, QLoRA or freeze (last layers only)."""

    kind: ClassVar[Literal["finetune"]] = "finetune"
    """The ``kind`` tag (msgspec keeps tags out of the fields; this makes it readable)."""

    tokens: Tokens | None = None
    method: Annotated[
        Method,
        msgspec.Meta(
            description="`full` (every parameter trains), `lora`, `qlora` (LoRA on a 4- or 8-bit "
            "frozen base) or `freeze` (only the last layers train)."
        ),
    ] = "lora"
    quant_bits: (
        Annotated[
            Literal[4, 8],
            msgspec.Meta(description="QLoRA base-model bits; default 4 (NF4). Only with qlora."),
        ]
        | None
    ) = None
    lora_rank: Annotated[int, msgspec.Meta(ge=1, le=4096, description="LoRA rank r.")] = 16
    lora_targets: Annotated[
        LoraTargets,
        msgspec.Meta(
            description="Layers that get LoRA adapters: `attention` (query/key/value/output "
            "projections) or `all_linear` (also the MLP)."
        ),
    ] = "all_linear"

    @property
    def effective_quant_bits(self) -> int | None:
        """Bits of the frozen base: 4 by default for QLoRA, ``None`` otherwise."""
        if self.method != "qlora":
            return None
        return self.quant_bits or 4


class Inference(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    tag="inference",
    tag_field="kind",
    forbid_unknown_fields=True,
):
    """Serving: weights + KV cache for ``concurrency`` sequences of ``context_len`` tokens."""

    kind: ClassVar[Literal["inference"]] = "inference"
    """The ``kind`` tag (msgspec keeps tags out of the fields; this makes it readable)."""

    model: Annotated[
        ModelRef,
        msgspec.Meta(
            description="The model: a preset id or alias from GET /v1/models (a string), or "
            "its size and optionally its architecture (`{params_b, ...}`)."
        ),
    ]
    precision: Annotated[
        InferencePrecision,
        msgspec.Meta(
            description="Weight format for serving: `bf16`, `fp16`, `fp32`, `fp8`, `int8` or "
            "`int4`."
        ),
    ] = "bf16"
    context_len: Annotated[
        int,
        msgspec.Meta(ge=1, le=1_048_576, description="Prompt + output tokens per sequence."),
    ] = 4096
    concurrency: Annotated[
        int, msgspec.Meta(ge=1, le=100_000, description="Sequences served at once.")
    ] = 1
    output_tokens: (
        Annotated[
            float,
            msgspec.Meta(ge=1, le=1e15, description="Total tokens to generate (for time)."),
        ]
        | None
    ) = None
    target_tokens_per_s: (
        Annotated[float, msgspec.Meta(gt=0, le=1e9, description="Required decode throughput.")]
        | None
    ) = None
    kv_cache_precision: Annotated[
        KvPrecision | None,
        msgspec.Meta(
            description="KV cache number format; default: the weights' 16-bit format (fp32 for "
            "fp32 weights)."
        ),
    ] = None
    image_size: ImageSize | None = None


class Preprocess(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    tag="preprocess",
    tag_field="kind",
    forbid_unknown_fields=True,
):
    """CPU-only data preparation (decode, clean, tokenize): vCPU, RAM, disk and IO."""

    kind: ClassVar[Literal["preprocess"]] = "preprocess"
    """The ``kind`` tag (msgspec keeps tags out of the fields; this makes it readable)."""

    data_gb: Annotated[
        float,
        msgspec.Meta(
            ge=0.001, le=1e7, description="Input data volume in GB (10^9 bytes); at least 1 MB."
        ),
    ]
    target_hours: (
        Annotated[
            float,
            msgspec.Meta(
                ge=0.01, le=100_000, description="Desired wall-clock hours (at least 0.01)."
            ),
        ]
        | None
    ) = None


Workload = Pretrain | Finetune | Inference | Preprocess


class Placement(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Where the job runs: an accelerator from the registry and how many of them."""

    accelerator: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=128,
            description="Accelerator name or alias from GET /v1/accelerators, e.g. `A100-80GB`.",
        ),
    ]
    count: Annotated[int, msgspec.Meta(ge=1, le=4096, description="Accelerators in total.")] = 1
    zero_stage: (
        Annotated[
            Literal[0, 1, 2, 3],
            msgspec.Meta(description="ZeRO stage; default: the smallest that fits (training)."),
        ]
        | None
    ) = None


def validate_workload(workload: Workload, placement: Placement | None = None) -> None:
    """Cross-field checks the decoder cannot express; raise :class:`InputError` naming
    the request path (``workload.quant_bits``, ``workload.model.kv_heads``, ...)."""
    if (
        isinstance(workload, Finetune)
        and workload.quant_bits is not None
        and workload.method != "qlora"
    ):
        raise InputError(
            "workload.quant_bits",
            f"quant_bits applies only to method 'qlora' (method is {workload.method!r})",
        )
    model = getattr(workload, "model", None)
    if isinstance(model, ModelSpec):
        validate_model_spec(model)
    if (
        isinstance(workload, Pretrain | Finetune)
        and workload.offload == "all"
        and placement is not None
        and placement.zero_stage not in (None, 3)
    ):
        raise InputError(
            "workload.offload",
            "offload 'all' (parameters too) needs ZeRO stage 3 "
            f"(placement.zero_stage is {placement.zero_stage})",
        )
    if (
        placement is not None
        and placement.zero_stage is not None
        and isinstance(workload, Inference | Preprocess)
    ):
        raise InputError(
            "placement.zero_stage",
            f"ZeRO stages apply to training workloads, not {workload.kind!r}",
        )


def validate_model_spec(spec: ModelSpec, path: str = "workload.model") -> None:
    """Architecture consistency: the shapes must describe a buildable transformer."""
    if spec.active_params_b is not None and spec.active_params_b > spec.params_b:
        raise InputError(
            f"{path}.active_params_b",
            f"active_params_b ({spec.active_params_b}) exceeds params_b ({spec.params_b})",
        )
    if (
        spec.heads is not None
        and spec.hidden is not None
        and spec.head_dim is None
        and spec.hidden % spec.heads
    ):
        raise InputError(
            f"{path}.heads",
            f"heads ({spec.heads}) must divide hidden ({spec.hidden}) unless head_dim is given",
        )
    if (
        spec.kv_heads is not None
        and spec.heads is not None
        and (spec.kv_heads > spec.heads or spec.heads % spec.kv_heads)
    ):
        raise InputError(
            f"{path}.kv_heads",
            f"kv_heads ({spec.kv_heads}) must divide heads ({spec.heads})",
        )
