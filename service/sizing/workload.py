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

from service.runtime.errors import InputError
from service.sizing.profiles import ServeEngine, TrainFramework

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
GlobalBatch = Annotated[
    int,
    msgspec.Meta(
        ge=1,
        le=65_536,
        description="Sequences (images for an image model, pairs for DPO, responses for "
        "PPO/GRPO) per optimizer step: micro_batch_size x data-parallel replicas x "
        "gradient_accumulation_steps (DeepSpeed's `train_batch_size`, Megatron-LM's "
        "`--global-batch-size`). The job is not spread past global batch / "
        "micro_batch_size data-parallel replicas, and its time counts one gradient exchange "
        "per optimizer step at the accumulation this implies; default: 128 for a fine-tune "
        "or DPO (Stanford Alpaca's), fewer for a run too short for about 500 optimizer "
        "steps, verl's 256 prompts for PPO/GRPO, no bound for pre-training.",
    ),
]
"""Training only: serving has no optimizer step (the field is a 400 there)."""
ImageSize = Annotated[
    int,
    msgspec.Meta(
        ge=8, le=16_384, description="Input image side in pixels (image models); preset default."
    ),
]

Precision = Literal["bf16", "fp16", "fp32", "fp8"]
InferencePrecision = Literal["bf16", "fp16", "fp32", "fp8", "int8", "int4"]
KvPrecision = Literal["bf16", "fp16", "fp32", "fp8", "int8"]
Optimizer = Literal["adamw", "adamw_8bit", "paged_adamw", "paged_adamw_8bit", "sgd", "adafactor"]
Method = Literal["full", "lora", "qlora", "freeze"]
LoraTargets = Literal["attention", "all_linear"]
TimeBasis = Literal["steady", "run"]
Offload = Literal["none", "optimizer", "all"]


class ModelSpec(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A model given by its size (and optionally its architecture) instead of a preset.

    With only ``params_b`` the missing architecture is taken from the nearest preset of
    the same size (the response says which one in ``assumptions``): the nearest decoder,
    or with ``encoder_only`` the nearest encoder.
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
    gated_mlp: Annotated[
        bool | None,
        msgspec.Meta(
            description="Gated MLP (SwiGLU: gate, up and down matrices) as in Llama/Qwen; false "
            "for the two-matrix GELU MLP of GPT/OPT/BERT; default: the nearest preset's."
        ),
    ] = None
    experts: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=4096,
                description="Routed experts per MoE layer (e.g. 8 for Mixtral, 256 for "
                "DeepSeek-V3); 1 or absent = a dense model.",
            ),
        ]
        | None
    ) = None
    experts_per_token: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=4096,
                description="Routed experts each token uses (top-k); needs `experts`.",
            ),
        ]
        | None
    ) = None
    shared_experts: (
        Annotated[
            int,
            msgspec.Meta(
                ge=0,
                le=64,
                description="Always-active shared experts per MoE layer (DeepSeek/Qwen MoE); "
                "needs `experts`.",
            ),
        ]
        | None
    ) = None
    encoder_only: Annotated[
        bool | None,
        msgspec.Meta(
            description="True for an encoder-only model (BERT, RoBERTa, XLM-R and the "
            "bge/gte/e5 embedding and reranker models built on them): served as one forward "
            "pass over every token (sequences per second encoded, no decode, no KV cache), "
            "and fields not given are taken from the nearest encoder preset; default: a "
            "decoder (causal language model)."
        ),
    ] = None
    encoder_layers: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=1024,
                description="Encoder layers of an encoder-decoder model (T5); give with "
                "`decoder_layers`.",
            ),
        ]
        | None
    ) = None
    decoder_layers: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=1024,
                description="Decoder layers of an encoder-decoder model (T5); give with "
                "`encoder_layers`.",
            ),
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
    micro_batch_size: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=65_536,
                description="Sequences (or images) per device per step. Default 1; for a CNN "
                "32 (torchvision's recipe) and for a detector 16 (Ultralytics' default). "
                "Memory and time are both sized at this batch: small image batches do not "
                "fill the device.",
            ),
        ]
        | None
    ) = None
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
        Optimizer | None,
        msgspec.Meta(
            description="Optimizer: `adamw` (8 B/param of fp32 moments), `adamw_8bit` and "
            "`paged_adamw_8bit` (bitsandbytes, 2 B/param), `paged_adamw` (8 B/param, paged "
            "to host RAM under memory pressure), `sgd` (momentum, 4 B/param), `adafactor` "
            "(factored moments, about 0); default: `sgd` for a CNN (torchvision's reference "
            "recipe), `adamw` otherwise."
        ),
    ] = None
    gradient_checkpointing: Annotated[
        bool | Literal["selective"] | None,
        msgspec.Meta(
            description="Recompute activations in the backward pass: true (full: one extra "
            "forward pass of time), `selective` (save every other matmul output and recompute "
            "the rest, torchtitan's op policy) or false; default: the framework's own (on "
            "for LLaMA-Factory, ms-swift, torchtune, Unsloth and the HF recipes, off for "
            "Megatron/MindSpeed)."
        ),
    ] = None
    flash_attention: Annotated[
        bool,
        msgspec.Meta(
            description="Use FlashAttention (no seq_len x seq_len attention matrix in memory)."
        ),
    ] = True
    gradient_accumulation_steps: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=65_536,
                description="Micro-steps per optimizer step. With 1 on a single device the "
                "gradients are created while the backward frees the activations (and freed "
                "after the step), so the peak holds the larger of the two, not both; "
                "default: unknown, both are counted.",
            ),
        ]
        | None
    ) = None
    global_batch_size: GlobalBatch | None = None
    chunked_loss: Annotated[
        bool | None,
        msgspec.Meta(
            description="Cross-entropy computed in chunks on 16-bit logits (torchtune's "
            "CEWithChunkedOutputLoss, Liger/Unsloth fused kernels: about 3 B per logit) "
            "instead of on the whole fp32-upcast logits (about 16 B); default: the "
            "framework's own loss."
        ),
    ] = None
    compiled_loss: Annotated[
        bool | None,
        msgspec.Meta(
            description="The loss runs under torch.compile (torchtune's `compile: True`, "
            "which compiles the upcast and cross-entropy of each chunk of a chunked loss): "
            "the fused kernel never materializes a chunk's fp32 copy and gradient, so a "
            "chunked loss keeps about 2.25 B per logit instead of 3; default: not compiled."
        ),
    ] = None
    offload_activations: Annotated[
        bool | None,
        msgspec.Meta(
            description="Keep the recompute checkpoints in host RAM (torchtune "
            "enable_activation_offloading, Unsloth's gradient checkpointing): the device "
            "holds one layer's activations; default: the framework's (on for Unsloth)."
        ),
    ] = None
    framework: Annotated[
        TrainFramework,
        msgspec.Meta(
            description="Training framework, which sets how the loss is computed, the "
            "gradient buffers and the default checkpointing: `hf` (Transformers Trainer/PEFT, "
            "fp32 logits upcast), `llama-factory` and `ms-swift` (both on HF Trainer), "
            "`torchtune` and `unsloth` (chunked cross-entropy), `deepspeed` (DeepSpeed "
            "estimators: fp32 gradient buffer, 20 B/param), `megatron` and `mindspeed` "
            "(fused vocab-parallel loss, fp32 main gradients), `generic` (the v1 accounting)."
        ),
    ] = "hf"
    time_basis: Annotated[
        TimeBasis | None,
        msgspec.Meta(
            description="What the time estimate means: `steady` (benchmark-like steady-state "
            "throughput of the training loop; default for fine-tuning) or `run` (wall clock "
            "of a whole run incl. restarts, evaluation and checkpoints; default for "
            "pre-training)."
        ),
    ] = None
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
        LoraTargets | None,
        msgspec.Meta(
            description="Layers that get LoRA adapters: `attention` (query/key/value/output "
            "projections) or `all_linear` (also the MLP); default: `all_linear`, or "
            "`attention` on a diffusion UNet (diffusers' LoRA scripts)."
        ),
    ] = None
    bitsandbytes_version: (
        Annotated[
            str,
            msgspec.Meta(
                pattern=r"^[0-9]+\.[0-9]+(\.[0-9]+)?([.+-][0-9A-Za-z.+-]*)?$",
                max_length=40,
                description="bitsandbytes release the QLoRA run uses (e.g. `0.41.3.post2`); "
                "before 0.43.2 each 4-bit linear kept its input for the backward, which "
                "non-reentrant checkpointing (ms-swift) cannot free, so every layer holds "
                "those inputs; default: a current release. Only with qlora.",
            ),
        ]
        | None
    ) = None

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
    """Serving: weights + KV cache for ``concurrency`` sequences of ``context_len`` tokens.

    An encoder-only model (a BERT preset, or ``model.encoder_only``) instead encodes
    ``concurrency`` sequences of ``context_len`` tokens per forward pass, with no KV cache;
    its throughput counts tokens encoded."""

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
    context_len: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=1_048_576,
                description="Prompt + output tokens per sequence; default 4096. For an "
                "encoder-only model, the tokens of each sequence encoded (at most the model's "
                "positions); default: its positions (512 for BERT, 8192 for bge-m3).",
            ),
        ]
        | None
    ) = None
    concurrency: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=100_000,
                description="Sequences served at once; default 1. Left out with "
                "`target_tokens_per_s`, the planner batches each server as a serving engine "
                "does (continuous batching): as many sequences as its KV cache holds, at most "
                "the engine's default batch (vLLM 256), fewer when fewer reach the target; "
                "each option says the concurrency it assumed.",
            ),
        ]
        | None
    ) = None

    @property
    def streams(self) -> int:
        """Sequences sized at once: ``concurrency``, 1 when not given."""
        return self.concurrency or 1

    @property
    def context(self) -> int:
        """Tokens per sequence sized: ``context_len``, :data:`DEFAULT_CONTEXT_LEN` when not
        given (an encoder's own positions are filled in when it is resolved)."""
        return DEFAULT_CONTEXT_LEN if self.context_len is None else self.context_len

    output_tokens: (
        Annotated[
            float,
            msgspec.Meta(ge=1, le=1e15, description="Total tokens to generate (for time)."),
        ]
        | None
    ) = None
    target_tokens_per_s: (
        Annotated[
            float,
            msgspec.Meta(
                gt=0,
                le=1e9,
                description="Required decode throughput, tokens/s. For an encoder-only "
                "(embedding, rerank) model: tokens encoded per second, sequences per second × "
                "context_len (2,000 sequences/s of 512 tokens = 1024000).",
            ),
        ]
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
    prompt_len: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=1_048_576,
                description="Prompt tokens per sequence (the part of context_len that is "
                "prefilled); with it, throughput includes each request's prefill time and "
                "plain-transformers serving prefills exactly this many tokens at once.",
            ),
        ]
        | None
    ) = None
    engine: Annotated[
        ServeEngine | None,
        msgspec.Meta(
            description="Serving engine of a language model, which sets the decode bandwidth "
            "efficiency and the prefill workspace: `vllm`, `sglang`, `lmdeploy`, "
            "`tensorrt-llm`, `mindie` (chunked prefill) or `hf` (plain transformers: "
            "whole-prompt prefill, eager decode); default: `vllm` for a language model. An "
            "image model is served by its own PyTorch pipeline (diffusers, torchvision, timm), "
            "its default: any engine sent for one is a 400."
        ),
    ] = None

    @property
    def serving_engine(self) -> ServeEngine:
        """The engine a language model is sized under: ``engine``, vLLM when not sent
        (an image model's pipeline is none of them: see ``engine``)."""
        return self.engine or DEFAULT_ENGINE


DEFAULT_CONTEXT_LEN = 4096
"""A decoder's ``context_len`` when the request leaves it out."""

DEFAULT_ENGINE: ServeEngine = "vllm"
"""The engine a language model is served by when the request names none."""


RlhfAlgorithm = Literal["ppo", "grpo", "dpo"]


class Rlhf(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    tag="rlhf",
    tag_field="kind",
    forbid_unknown_fields=True,
):
    """Preference / reinforcement fine-tuning with several models on the same devices.

    PPO trains an actor and a critic and runs a frozen reference and reward model; GRPO
    trains the actor against a frozen reference (rewards from a rule or an optional reward
    model, no critic); DPO trains the policy against a frozen reference on chosen and
    rejected sequences.
    """

    kind: ClassVar[Literal["rlhf"]] = "rlhf"
    """The ``kind`` tag (msgspec keeps tags out of the fields; this makes it readable)."""

    model: Annotated[
        ModelRef,
        msgspec.Meta(description="The policy (actor) model: a preset id or a model size."),
    ]
    algorithm: Annotated[
        RlhfAlgorithm,
        msgspec.Meta(
            description="`ppo` (actor + critic trained, reference + reward frozen), `grpo` "
            "(actor trained, reference frozen, no critic) or `dpo` (policy trained, "
            "reference frozen, chosen + rejected sequences)."
        ),
    ] = "grpo"
    critic_model: Annotated[
        ModelRef | None,
        msgspec.Meta(description="PPO critic (value model); default: the policy's shape."),
    ] = None
    reward_model: Annotated[
        ModelRef | None,
        msgspec.Meta(
            description="Reward model run frozen; default: the policy's shape for PPO, none "
            "for GRPO (rule-based rewards) and DPO."
        ),
    ] = None
    method: Annotated[
        Literal["full", "lora"],
        msgspec.Meta(
            description="How the trained models train; with `lora` the reference is the "
            "frozen base itself (no second copy)."
        ),
    ] = "full"
    lora_rank: Annotated[int, msgspec.Meta(ge=1, le=4096, description="LoRA rank r.")] = 16
    seq_len: Annotated[
        int,
        msgspec.Meta(ge=1, le=1_048_576, description="Prompt + response tokens per sequence."),
    ] = 2048
    response_len: Annotated[
        int,
        msgspec.Meta(
            ge=1, le=1_048_576, description="Generated tokens per sequence (PPO/GRPO rollouts)."
        ),
    ] = 1024
    micro_batch_size: MicroBatch = 1
    global_batch_size: GlobalBatch | None = None
    rollout_batch_size: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=65_536,
                description="Sequences each device generates at once in the rollout (PPO/GRPO); "
                "default 16, DeepSpeed-Chat's per_device_generation_batch_size (vLLM-based "
                "rollouts batch more).",
            ),
        ]
        | None
    ) = None
    tokens: (
        Annotated[
            float,
            msgspec.Meta(
                ge=1,
                le=1e15,
                description="Sequence tokens processed in training (sequences x epochs x "
                "seq_len); for DPO count each pair once.",
            ),
        ]
        | None
    ) = None
    precision: Annotated[
        Precision, msgspec.Meta(description="Training precision of the trained models.")
    ] = "bf16"
    mixed_precision: Annotated[
        bool,
        msgspec.Meta(description="fp32 master weights and optimizer states (see finetune)."),
    ] = True
    optimizer: Annotated[
        Optimizer, msgspec.Meta(description="Optimizer of the trained models (see finetune).")
    ] = "adamw"
    gradient_checkpointing: Annotated[
        bool | Literal["selective"] | None,
        msgspec.Meta(description="Recompute policy of the trained models (see finetune)."),
    ] = None
    flash_attention: Annotated[
        bool, msgspec.Meta(description="FlashAttention (no s x s score matrices).")
    ] = True
    framework: Annotated[
        TrainFramework,
        msgspec.Meta(description="Training framework of the trained models (see finetune)."),
    ] = "deepspeed"
    time_basis: Annotated[
        TimeBasis | None,
        msgspec.Meta(description="`steady` (default) or `run`, as for finetune."),
    ] = None


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


Workload = Pretrain | Finetune | Inference | Rlhf | Preprocess


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
    nodes: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=512,
                description="Servers the accelerators are spread over (an equal share each); "
                "default: one server up to 8 accelerators, else the fewest servers of at most 8. "
                "Serving runs one model replica per server (tensor parallel within it), or "
                "pipeline stages across servers when the model does not fit one; training needs "
                "RDMA between servers.",
            ),
        ]
        | None
    ) = None
    zero_stage: (
        Annotated[
            Literal[0, 1, 2, 3],
            msgspec.Meta(description="ZeRO stage; default: the smallest that fits (training)."),
        ]
        | None
    ) = None
    tensor_parallel: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=64,
                description="Tensor-parallel degree (Megatron-style; must divide the attention "
                "heads and the device count); default: the smallest that fits for training, "
                "and for serving with `target_tokens_per_s` and no `concurrency` the smallest "
                "whose copies reach the target (the server's other accelerators run further "
                "copies); with the sequences fixed (a `concurrency`, a batch job) or a target "
                "no degree reaches on one server, the one that serves them fastest.",
            ),
        ]
        | None
    ) = None
    pipeline_parallel: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=256,
                description="Pipeline-parallel stages for training (each stage holds its "
                "share of the layers); default: 1, or the smallest that fits when tensor "
                "parallelism alone does not.",
            ),
        ]
        | None
    ) = None
    network_gbps: (
        Annotated[
            float,
            msgspec.Meta(
                gt=0,
                le=1e5,
                description="Network between the servers of a multi-server training job, "
                "Gbit/s per server (all its RDMA/eRDMA NICs together, e.g. 3200 for 8 x 400 "
                "Gbit/s InfiniBand); default: 100 Gbit/s per accelerator (stated in the "
                "assumptions).",
            ),
        ]
        | None
    ) = None


def validate_workload(workload: Workload, placement: Placement | None = None) -> None:
    """Cross-field checks the decoder cannot express; raise :class:`InputError` naming
    the request path (``workload.quant_bits``, ``workload.model.kv_heads``, ...)."""
    for qlora_only in ("quant_bits", "bitsandbytes_version"):
        if (
            isinstance(workload, Finetune)
            and getattr(workload, qlora_only) is not None
            and workload.method != "qlora"
        ):
            raise InputError(
                f"workload.{qlora_only}",
                f"{qlora_only} applies only to method 'qlora' (method is {workload.method!r})",
                zh=f"{qlora_only} 只适用于 'qlora' 方法（当前方法为 {workload.method!r}）",
            )
    model = getattr(workload, "model", None)
    if isinstance(model, ModelSpec):
        validate_model_spec(model)
    if isinstance(workload, Rlhf):
        _validate_rlhf(workload)
    if isinstance(workload, Pretrain | Finetune | Rlhf):
        _validate_global_batch(workload)
    if (
        isinstance(workload, Inference)
        and workload.prompt_len is not None
        and workload.prompt_len > workload.context
    ):
        raise InputError(
            "workload.prompt_len",
            f"prompt_len ({workload.prompt_len}) exceeds context_len "
            f"({workload.context}), which counts prompt and output together",
            zh=f"prompt_len（{workload.prompt_len}）超过了 context_len（{workload.context}）；"
            "context_len 包含提示与输出两部分",
        )
    if placement is not None:
        _validate_layout(workload, placement)
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
            zh=f"offload 'all'（参数也卸载）需要 ZeRO 第 3 阶段（placement.zero_stage 为 "
            f"{placement.zero_stage}）",
        )
    if (
        placement is not None
        and placement.zero_stage is not None
        and isinstance(workload, Inference | Preprocess)
    ):
        raise InputError(
            "placement.zero_stage",
            f"ZeRO stages apply to training workloads, not {workload.kind!r}",
            zh=f"ZeRO 阶段只适用于训练任务，不适用于 {workload.kind!r}",
        )


def validate_model_spec(spec: ModelSpec, path: str = "workload.model") -> None:
    """Architecture consistency: the shapes must describe a buildable transformer."""
    if spec.experts is None and (
        spec.experts_per_token is not None or spec.shared_experts is not None
    ):
        field = "experts_per_token" if spec.experts_per_token is not None else "shared_experts"
        raise InputError(
            f"{path}.{field}",
            f"{field} needs experts (the routed expert count)",
            zh=f"{field} 需要同时给出 experts（路由专家数）",
        )
    if (
        spec.experts is not None
        and spec.experts_per_token is not None
        and spec.experts_per_token > spec.experts
    ):
        raise InputError(
            f"{path}.experts_per_token",
            f"experts_per_token ({spec.experts_per_token}) exceeds experts ({spec.experts})",
            zh=f"experts_per_token（{spec.experts_per_token}）超过了 experts（{spec.experts}）",
        )
    if (spec.encoder_layers is None) != (spec.decoder_layers is None):
        field = "decoder_layers" if spec.encoder_layers is not None else "encoder_layers"
        raise InputError(
            f"{path}.{field}",
            "an encoder-decoder model needs both encoder_layers and decoder_layers",
            zh="编码器-解码器模型需要同时给出 encoder_layers 和 decoder_layers",
        )
    if spec.encoder_layers is not None and spec.layers is not None:
        total = spec.encoder_layers + (spec.decoder_layers or 0)
        if spec.layers != total:
            raise InputError(
                f"{path}.layers",
                f"layers ({spec.layers}) must equal encoder_layers + decoder_layers ({total}) "
                "or be left out",
                zh=f"layers（{spec.layers}）必须等于 encoder_layers + decoder_layers（{total}），"
                "或者不填",
            )
    if spec.encoder_only:
        clash = next(
            (
                f
                for f in ("encoder_layers", "decoder_layers", "experts", "active_params_b")
                if getattr(spec, f) is not None
            ),
            None,
        )
        if clash is not None:
            raise InputError(
                f"{path}.encoder_only",
                f"an encoder-only model has neither a decoder nor routed experts, so "
                f"encoder_only cannot be given with {clash}",
                zh=f"仅编码器模型没有解码器，也没有路由专家，encoder_only 不能与 {clash} 同时给出",
            )
    if spec.active_params_b is not None and spec.active_params_b > spec.params_b:
        raise InputError(
            f"{path}.active_params_b",
            f"active_params_b ({spec.active_params_b}) exceeds params_b ({spec.params_b})",
            zh=f"active_params_b（{spec.active_params_b}）超过了 params_b（{spec.params_b}）",
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
            zh=f"heads（{spec.heads}）必须整除 hidden（{spec.hidden}），除非给出 head_dim",
        )
    if (
        spec.kv_heads is not None
        and spec.heads is not None
        and (spec.kv_heads > spec.heads or spec.heads % spec.kv_heads)
    ):
        raise InputError(
            f"{path}.kv_heads",
            f"kv_heads ({spec.kv_heads}) must divide heads ({spec.heads})",
            zh=f"kv_heads（{spec.kv_heads}）必须整除 heads（{spec.heads}）",
        )


def _validate_global_batch(w: Pretrain | Finetune | Rlhf) -> None:
    """A global batch is micro-batch x data-parallel replicas x accumulation steps
    (DeepSpeed asserts ``train_batch_size`` equals that product,
    https://www.deepspeed.ai/docs/config-json/ ; Megatron-LM asserts the global batch is
    divisible by micro-batch x data-parallel size, NVIDIA/Megatron-LM
    ``megatron/core/num_microbatches_calculator.py``@00caa53a,
    ``ConstantNumMicroBatchesCalculator``): one that no whole number of replicas makes up
    with the micro-batch (and accumulation) sent is refused here."""
    batch = w.global_batch_size
    if batch is None:
        return
    micro = w.micro_batch_size or 1
    if batch < micro:
        raise InputError(
            "workload.global_batch_size",
            f"a global batch of {batch} is smaller than the micro-batch of {micro}: an "
            "optimizer step takes at least one micro-batch on every data-parallel replica",
            zh=f"全局批量 {batch} 小于微批量 {micro}：每个优化步在每个数据并行副本上至少要"
            "处理一个微批量",
        )
    if batch % micro:
        raise InputError(
            "workload.global_batch_size",
            f"a global batch of {batch} is not a whole number of micro-batches of {micro}: it "
            "is the micro-batch times the data-parallel replicas times the accumulation steps, "
            "and DeepSpeed and Megatron-LM refuse any other value",
            zh=f"全局批量 {batch} 不是微批量 {micro} 的整数倍：全局批量等于微批量 × 数据并行"
            "副本数 × 梯度累积步数，DeepSpeed 与 Megatron-LM 都不接受其他取值",
        )
    accumulation = getattr(w, "gradient_accumulation_steps", None)
    if accumulation is not None and batch % (micro * accumulation):
        raise InputError(
            "workload.global_batch_size",
            f"a global batch of {batch} is not a multiple of the micro-batch times the "
            f"accumulation steps ({micro} × {accumulation} = {micro * accumulation}), so no "
            "whole number of data-parallel replicas makes it up",
            zh=f"全局批量 {batch} 不是微批量 × 梯度累积步数（{micro} × {accumulation} = "
            f"{micro * accumulation}）的整数倍，任何整数个数据并行副本都凑不出它",
        )


def _validate_rlhf(w: Rlhf) -> None:
    if isinstance(w.model, ModelSpec) and w.model.encoder_only:
        raise InputError(
            "workload.model.encoder_only",
            "the policy of preference or reinforcement fine-tuning generates its responses, "
            "so it must be a decoder; an encoder can be the reward model",
            zh="偏好/强化微调的策略模型要生成回复，必须是解码器；编码器可以作为奖励模型",
        )
    for name in ("critic_model", "reward_model"):
        spec = getattr(w, name)
        if isinstance(spec, ModelSpec):
            validate_model_spec(spec, f"workload.{name}")
    if w.critic_model is not None and w.algorithm != "ppo":
        raise InputError(
            "workload.critic_model",
            f"only PPO trains a critic; {w.algorithm.upper()} has none",
            zh=f"只有 PPO 训练价值模型（critic）；{w.algorithm.upper()} 没有",
        )
    if w.reward_model is not None and w.algorithm == "dpo":
        raise InputError(
            "workload.reward_model",
            "DPO learns from preference pairs and runs no reward model",
            zh="DPO 直接从偏好对学习，不运行奖励模型",
        )
    if w.response_len > w.seq_len:
        raise InputError(
            "workload.response_len",
            f"response_len ({w.response_len}) exceeds seq_len ({w.seq_len}), which counts "
            "prompt and response together",
            zh=f"response_len（{w.response_len}）超过了 seq_len（{w.seq_len}）；"
            "seq_len 包含提示与回复两部分",
        )


def _validate_layout(workload: Workload, placement: Placement) -> None:
    t = placement.tensor_parallel or 1
    pp = placement.pipeline_parallel or 1
    if placement.pipeline_parallel is not None and isinstance(workload, Inference | Preprocess):
        raise InputError(
            "placement.pipeline_parallel",
            "pipeline stages are sized for training workloads; serving uses tensor_parallel",
            zh="流水线并行只用于训练任务；推理请用 tensor_parallel",
        )
    if placement.tensor_parallel is not None and isinstance(workload, Preprocess):
        raise InputError(
            "placement.tensor_parallel",
            "preprocessing runs on CPUs: no tensor parallelism",
            zh="预处理在 CPU 上运行，没有张量并行",
        )
    for field in ("network_gbps",):
        if getattr(placement, field) is not None and isinstance(workload, Inference | Preprocess):
            raise InputError(
                f"placement.{field}",
                f"{field} describes the servers of a training job; serving and preprocessing "
                "do not use it",
                zh=f"{field} 描述训练任务所用的服务器；推理与预处理不使用它",
            )
    if placement.count % (t * pp):
        raise InputError(
            "placement.count" if placement.tensor_parallel is None else "placement.tensor_parallel",
            f"tensor_parallel x pipeline_parallel ({t} x {pp}) must divide the device count "
            f"({placement.count})",
            zh=f"tensor_parallel × pipeline_parallel（{t} × {pp}）必须整除设备数"
            f"（{placement.count}）",
        )
    heads = None
    model = getattr(workload, "model", None)
    if isinstance(model, ModelSpec):
        heads = model.heads
    if heads is not None and heads % t:
        raise InputError(
            "placement.tensor_parallel",
            f"tensor_parallel ({t}) must divide the attention heads ({heads})",
            zh=f"tensor_parallel（{t}）必须整除注意力头数（{heads}）",
        )
