"""Framework and serving-engine profiles: what the software changes about memory and speed.

The same model and batch need different memory under different trainers, because they
compute the loss differently, keep different gradient buffers and recompute by default or
not; and the same model decodes at different speeds under different engines. Each profile
below is a few numbers with the place they come from, so the engine can say *why* an
estimate differs between, say, Hugging Face Trainer and torchtune.

Training profiles (``workload.framework``):

- ``logit_bytes``: bytes per logit (batch x sequence x vocabulary) alive at the loss's peak.
  Hugging Face Trainer/PEFT models upcast the logits to fp32 before the cross-entropy
  (``logits = logits.float()`` in ``LlamaForCausalLM.forward``, transformers 4.36-4.44;
  ``ForCausalLMLoss`` upcasts since 4.46): 16-bit logits (2) + fp32 copy (4) + fp32
  log-softmax saved for backward (4) + its fp32 gradient (4) + the 16-bit gradient (2) = 16.
  torchtune's ``CEWithChunkedOutputLoss`` (8 chunks) and Unsloth's fused cross-entropy
  kernel keep the 16-bit logits for the backward (2) and upcast one chunk at a time with
  its fp32 gradient (8 B / 8 chunks = 1): 3. Megatron's fused vocab-parallel
  cross-entropy keeps the 16-bit logits and one fp32 softmax that its backward overwrites
  in place (2 + 4 = 6). DeepSpeed's own 16-bit engines run no autocast, so the loss stays
  16-bit: logits, saved log-softmax and the two gradients of its backward, 4 x 2 = 8.
  ``generic`` keeps the v1 rule for autocast trainers (16-bit output + fp32 log-softmax
  and gradient = 10). ms-swift's 24 is a reserved-pool figure, not a tensor count: its
  benchmark reads ``torch.cuda.max_memory_reserved`` of unpacked variable-length runs,
  whose loss allocates about 12 B per logit at its peak while the caching allocator's pool
  holds 29-51 B per logit depending on how the dataset's lengths fall under
  ``max_length`` (docs/sizing.md, "ms-swift rows"); 24 matches its 8,192-token readings,
  which still hold cache: the full fine-tune of the same samples bounds the LoRA run's
  need at about 21 B per logit (tests/sizing/test_ms_swift_readings.py).
- ``grad_extra_bytes``: gradient buffers beyond the 2 B/param 16-bit gradient: DeepSpeed
  keeps an fp32 gradient partition (its estimators charge 20 B/param), Megatron-Core
  accumulates into an fp32 ``main_grad`` (18 B/param without the distributed optimizer,
  docs/source/api-guide/dist_optimizer.md).
- ``checkpointing``: the framework's default when the request does not say
  (LLaMA-Factory ``disable_gradient_checkpointing: false``, ms-swift
  ``gradient_checkpointing: true``, torchtune ``enable_activation_checkpointing: True`` in
  its recipes, Unsloth ``use_gradient_checkpointing="unsloth"`` which offloads the
  checkpoints to CPU RAM; PEFT's ``prepare_model_for_kbit_training`` turns it on for
  QLoRA; HF Trainer's own default is off but the sizing assumes it on, as almost every
  published recipe passes it — send ``gradient_checkpointing: false`` to size without).
- ``offloaded_checkpoints``: Unsloth keeps the layer-boundary checkpoints in host RAM, so
  the device holds one layer's activations, not one per layer.
- ``pipeline_keeps_unsharded``: torchtitan under pipeline parallelism keeps each stage's
  FSDP2 parameters gathered between micro-batches (``reshard_after_forward = not
  pp_enabled`` in torchtitan/models/llama3/parallelize.py,
  https://github.com/pytorch/torchtitan/blob/1ce7f761d76bc408c9e6f32e2bbd2cf9f2ac25ae/torchtitan/models/llama3/parallelize.py#L302-L376),
  and the pipeline schedule skips the gradient reduce-scatter until the last micro-batch
  (``set_requires_gradient_sync(False)`` in ``backward_maybe_with_nosync``,
  https://github.com/pytorch/pytorch/blob/88fa1e7170b48d369c6b00d545a89e97fb9e2e43/torch/distributed/pipelining/stage.py),
  so FSDP2 accumulates the stage's whole gradient in the reduce dtype
  (``FSDPParam.to_accumulated_grad_if_needed``: ``unsharded_accumulated_grad`` in fp32,
  torch/distributed/fsdp/_fully_shard/_fsdp_param.py). The stage holds its 16-bit
  weights and fp32 gradients unsharded; only the fp32 master weights and the optimizer
  states stay sharded.
- ``fp32_softmax``: without FlashAttention, Hugging Face models' eager attention runs the
  softmax in fp32 (``softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)``
  in ``eager_attention_forward``, transformers/models/llama/modeling_llama.py; Qwen-1's
  remote code ``softmax(attn_weights.float())``; autocast runs softmax in fp32 as well,
  https://pytorch.org/docs/stable/amp.html#cuda-ops-that-can-autocast-to-float32): the
  backward keeps the fp32 probabilities (4 B per score) and the 16-bit copy the
  value matmul saved (2 B). Megatron's fused softmax kernel returns 16-bit probabilities.
- ``kbit_upcast``: the Hugging Face QLoRA recipe (PEFT's ``prepare_model_for_kbit_training``,
  which TRL's SFTTrainer also calls for 4/8-bit models) casts every parameter that is not
  quantized, the embeddings, the head and the norms, to fp32 ("cast all non INT8
  parameters to fp32", src/peft/utils/other.py,
  https://github.com/huggingface/peft/blob/v0.10.0/src/peft/utils/other.py); LLaMA-Factory
  and ms-swift prepare the model themselves and keep them 16-bit, torchtune and Unsloth
  too.
- ``nonreentrant_checkpointing``: ms-swift replaces ``torch.utils.checkpoint.checkpoint``
  with a non-reentrant one on torch >= 2.1 (``fix_gradient_checkpointing_warning`` in
  swift/llm/utils/model.py, called after every model load,
  https://github.com/modelscope/ms-swift/blob/0004b835787a3d7430295b1b2ee7b71fede00822/swift/llm/utils/model.py;
  ``_use_reentrant = is_moe`` in its later releases). Non-reentrant checkpointing frees
  only what autograd saves through saved-tensor hooks; a tensor an autograd Function keeps
  as a plain ``ctx`` attribute stays alive. bitsandbytes before 0.43.2 did exactly that
  with each 4-bit linear's input (``ctx.tensors = (A, B)`` in ``MatMul4Bit.forward``,
  bitsandbytes/autograd/_functions.py,
  https://github.com/TimDettmers/bitsandbytes/blob/29e3420c6de4c62086603aff47107ef378062e91/bitsandbytes/autograd/_functions.py;
  0.43.2 keeps ``(None, B)``: "activations being unnecessary for frozen parameters, yet
  the memory for them was still erroneously allocated", CHANGELOG 0.43.2,
  https://github.com/TimDettmers/bitsandbytes/blob/main/CHANGELOG.md). Hugging Face
  Trainer/PEFT and LLaMA-Factory checkpoint reentrantly (the checkpointed forward runs
  under ``no_grad``, so nothing is kept).
- ``speed``: relative steady-state throughput against an optimized baseline (fused
  kernels, packed sequences); see :mod:`service.sizing.mfu`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

TrainFramework = Literal[
    "hf",
    "torchtune",
    "llama-factory",
    "deepspeed",
    "megatron",
    "torchtitan",
    "unsloth",
    "ms-swift",
    "mindspeed",
    "generic",
]
ServeEngine = Literal["vllm", "sglang", "lmdeploy", "tensorrt-llm", "hf", "mindie"]


@dataclass(frozen=True, slots=True)
class FrameworkProfile:
    """How one training framework spends memory and time (see the module docstring)."""

    name: str
    label: str
    logit_bytes: float
    """Bytes per logit at the loss's peak (16-bit training)."""
    loss_note: str
    grad_extra_bytes: float = 0.0
    """fp32 gradient buffer bytes per trainable parameter beyond the 16-bit gradient."""
    zero3_live_params: bool = False
    """ZeRO-3 gathers the largest layer whole (DeepSpeed's estimator charges it)."""
    checkpointing: bool = True
    offloaded_checkpoints: bool = False
    pipeline_keeps_unsharded: bool = False
    """Pipeline stages keep FSDP-gathered 16-bit weights and fp32 gradients whole."""
    fp32_softmax: bool = False
    """Eager (non-FlashAttention) attention keeps fp32 probabilities for the backward."""
    kbit_upcast: bool = False
    """QLoRA: the parameters left unquantized (embeddings, head, norms) are cast to fp32."""
    nonreentrant_checkpointing: bool = False
    """Gradient checkpointing is non-reentrant (tensors kept on ``ctx`` survive)."""
    speed: float = 1.0
    """Steady-state throughput relative to an optimized trainer (1.0)."""
    speed_note: str = ""
    label_zh: str = ""
    """The label in a Chinese sentence, where ``label`` carries English words (empty:
    the name reads the same in both, e.g. "torchtune")."""

    def label_in(self, lang: str) -> str:
        """The label as a sentence in ``lang`` names the framework (review 8 K17: "MindSpeed
        (Megatron on Ascend) 只切分优化器状态" mixed English into a zh sentence)."""
        return self.label_zh if lang == "zh" and self.label_zh else self.label


CHUNKED_LOSS_BYTES = 3.0
CHUNKED_LOSS_NOTE = (
    "chunked cross-entropy: the 16-bit logits kept for the backward (2 B) plus one of 8 chunks "
    "upcast with its fp32 gradient at a time (8 B / 8) = 3 B per logit"
)
COMPILED_CHUNKED_LOSS_BYTES = 2.25
COMPILED_CHUNKED_LOSS_NOTE = (
    "chunked cross-entropy compiled with torch.compile (torchtune's compile_loss compiles "
    "each chunk's upcast + cross-entropy, torchtune/training/_compile.py, "
    "https://github.com/pytorch/torchtune/blob/fc451165b8835271d436f8e0ca3fcfbf5bd038e3/"
    "torchtune/training/_compile.py): the 16-bit logits kept for the backward (2 B) plus "
    "one of 8 chunks' 16-bit gradient (2 B / 8), the fused kernel writes no fp32 copy = "
    "2.25 B per logit"
)
UPCAST_LOSS_BYTES = 16.0
UPCAST_LOSS_NOTE = (
    "cross-entropy on fp32-upcast logits: 16-bit output + fp32 copy, log-softmax and gradient "
    "+ 16-bit gradient = 16 B per logit"
)
_HF_LOSS = (
    "logits upcast to fp32 before the cross-entropy: 16-bit output + fp32 copy, log-softmax "
    "and gradient + 16-bit gradient = 16 B per logit"
)
_HF_SPEED = (
    "HF Trainer/PEFT run unfused kernels on padded, unpacked batches: about 0.8x the "
    "steady throughput of fused trainers (Unsloth's and torchtune's published comparisons "
    "against the same HF baseline report 1.2-2x)"
)

PROFILES: dict[str, FrameworkProfile] = {
    "hf": FrameworkProfile(
        name="hf",
        label="Hugging Face Trainer/PEFT",
        logit_bytes=16.0,
        loss_note=_HF_LOSS,
        speed=0.8,
        speed_note=_HF_SPEED,
        fp32_softmax=True,
        kbit_upcast=True,
    ),
    "llama-factory": FrameworkProfile(
        name="llama-factory",
        label="LLaMA-Factory (HF Trainer)",
        label_zh="LLaMA-Factory（基于 HF Trainer）",
        logit_bytes=16.0,
        loss_note=_HF_LOSS,
        speed=0.8,
        speed_note=_HF_SPEED,
        fp32_softmax=True,
    ),
    "ms-swift": FrameworkProfile(
        name="ms-swift",
        label="ms-swift (HF Trainer)",
        label_zh="ms-swift（基于 HF Trainer）",
        logit_bytes=24.0,
        loss_note="unfused loss on HF Trainer, as ms-swift reports it (peak "
        "torch.cuda.max_memory_reserved): the caching allocator still holds every transient "
        "buffer of the loss at its peak, 16-bit logits and shifted copy (2 + 2), fp32 upcast, "
        "log-softmax and gradient (4 + 4 + 4 + 4) and the 16-bit gradients (2 + 2) = 24 B per "
        "logit",
        speed=0.8,
        speed_note=_HF_SPEED,
        fp32_softmax=True,
        nonreentrant_checkpointing=True,
    ),
    "torchtune": FrameworkProfile(
        name="torchtune",
        label="torchtune",
        logit_bytes=CHUNKED_LOSS_BYTES,
        loss_note="CEWithChunkedOutputLoss (8 chunks): " + CHUNKED_LOSS_NOTE,
    ),
    "torchtitan": FrameworkProfile(
        name="torchtitan",
        label="torchtitan",
        logit_bytes=16.0,
        loss_note="cross-entropy on logits upcast to fp32 (`pred.float()` in its train loop) "
        "= 16 B per logit",
        pipeline_keeps_unsharded=True,
    ),
    "unsloth": FrameworkProfile(
        name="unsloth",
        label="Unsloth",
        logit_bytes=CHUNKED_LOSS_BYTES,
        loss_note="fused chunked cross-entropy kernel: " + CHUNKED_LOSS_NOTE,
        offloaded_checkpoints=True,
    ),
    "deepspeed": FrameworkProfile(
        name="deepspeed",
        label="DeepSpeed",
        logit_bytes=8.0,
        loss_note="16-bit loss (DeepSpeed's 16-bit engines run no autocast): logits, saved "
        "log-softmax and the two 16-bit gradients of its backward = 8 B per logit",
        grad_extra_bytes=4.0,
        zero3_live_params=True,
        # no speed factor: the earlier 0.9x ("without fused kernels", a prior with no
        # anchor) decided GRPO on A100 against Ascend under MindSpeed (review 5 G9), and the
        # dev measurements (DeepSpeed-Chat step 3, ZeRO runs) fit as well without it
        fp32_softmax=True,
    ),
    "megatron": FrameworkProfile(
        name="megatron",
        label="Megatron-LM",
        logit_bytes=6.0,
        loss_note="fused vocab-parallel cross-entropy: 16-bit logits + one fp32 softmax "
        "reused for the gradient = 6 B per logit",
        grad_extra_bytes=2.0,
        checkpointing=False,
    ),
    "mindspeed": FrameworkProfile(
        name="mindspeed",
        label="MindSpeed (Megatron on Ascend)",
        label_zh="MindSpeed（昇腾上的 Megatron）",
        logit_bytes=6.0,
        loss_note="Megatron's fused vocab-parallel cross-entropy = 6 B per logit",
        grad_extra_bytes=2.0,
        checkpointing=False,
    ),
    "generic": FrameworkProfile(
        name="generic",
        label="generic (v1 accounting)",
        label_zh="通用口径（v1）",
        logit_bytes=10.0,
        loss_note="16-bit output + fp32 log-softmax and gradient = 10 B per logit (v1 rule)",
        speed=0.9,
        speed_note="generic trainer: 0.9x an optimized trainer (prior)",
    ),
}


def framework_profile(name: str) -> FrameworkProfile:
    """The profile of ``name`` (the Literal type guarantees it exists)."""
    return PROFILES[name]


MOE_KERNEL_LATENCY_S = 27e-6
"""Fixed time of one Triton ``fused_moe`` call (vLLM's kernel, which SGLang's
``fused_moe_triton`` ports) at decode batch 1, beyond its expert bytes at the 0.85
streaming share: the token's routed experts are a few MB, too few tiles to fill the GPU,
and the call also runs the routing alignment (``moe_align_block_size``), the activation and
the top-k sum. Kernel times published with the engines' own tuning scripts (CUDA-graph
replay) at batch 1: 31.70 µs for Qwen3-235B-A22B FP8 at TP8 on H200 (8 experts x 3 x 4096 x
192 B = 18.9 MB, 3.9 µs at 4.8 TB/s; sgl-project/sglang PR #11730,
https://github.com/sgl-project/sglang/pull/11730), 29.45 µs for Qwen3-Next-80B-A3B FP8 at
TP4 on H100 (10 x 3 x 2048 x 128 B = 7.9 MB, 2.4 µs at 3.35 TB/s; vllm-project/vllm PR
#44830, https://github.com/vllm-project/vllm/pull/44830), 39.61 µs for a Qwen3-30B-A3B-shaped
BF16 MoE (E=128, N=768) on B200 (8 x 3 x 2048 x 768 x 2 B = 75.5 MB, 9.4 µs at 8 TB/s;
vllm-project/vllm PR #31448, https://github.com/vllm-project/vllm/pull/31448). Less the
bytes at 0.85 of those bandwidths (NVIDIA's H200 4.8 TB/s, H100 SXM 3.35 TB/s, B200 8 TB/s):
27.1, 26.7 and 28.5 µs, so 27 µs a call, one call per MoE layer and step, whatever the
part."""


@dataclass(frozen=True, slots=True)
class EngineProfile:
    """How one serving engine uses memory bandwidth, launches kernels and prefills.

    A decode step costs its bytes over the achievable bandwidth (times
    ``bandwidth_efficiency``, the engine's share of a streaming read) plus fixed
    overheads: ``step_overhead_s`` per step (scheduling, sampling, detokenizing on the
    CPU) and ``layer_overhead_s`` per layer (kernel launches: CUDA-graph engines replay a
    captured graph, eager PyTorch launches some 60-80 kernels per layer at 5-10 µs each).
    Small models are dominated by the overheads, which is why one bandwidth fraction
    cannot fit 0.5B and 70B models at once. ``chunked_prefill`` engines prefill
    ``prefill_chunk`` tokens per step; the others prefill the whole prompt.
    """

    name: str
    label: str
    bandwidth_efficiency: float
    step_overhead_s: float
    layer_overhead_s: float
    chunked_prefill: bool
    prefill_chunk: int
    note: str
    fused_int4: bool = False
    """Own fused w4a16 kernels that keep near-full bandwidth on 4-bit weights."""
    kv_passes: float = 1.0
    """Times a decode step moves the KV cache it keeps: once (the attention read) for
    paged-KV engines. Plain transformers (3) also appends each token by ``torch.cat``
    (``DynamicCache.update``: a read of the layer's cache and a write of the grown copy,
    https://github.com/huggingface/transformers/blob/v4.46.0/src/transformers/cache_utils.py).
    Its flash-attention path does not gather (unpad) K and V at batch 1: the models pass
    no mask to it unless the mask has padding (``_update_causal_mask``: ``if
    attention_mask is not None and 0.0 in attention_mask: return attention_mask; return
    None``, e.g. transformers v4.46.0 ``models/llama/modeling_llama.py``), and
    ``generate()`` here serves one request at a time."""
    gqa_expanded_kv: bool = False
    """The attention materializes the grouped KV heads at full width before the kernel:
    transformers' ``repeat_kv`` (``expand`` + ``reshape`` copies K and V to all query
    heads) runs in its eager and SDPA attention and, through 4.47, in the flash-attention
    classes of Qwen2, Mistral and the models copied from them (``Qwen2FlashAttention2``:
    "repeat k/v heads if n_kv_heads < n_heads" before ``_flash_attention_forward``,
    https://github.com/huggingface/transformers/blob/v4.46.0/src/transformers/models/qwen2/modeling_qwen2.py).
    With g = heads / KV heads the copy reads the cache once (in place of the attention's
    own read), writes g copies and the attention reads the g copies: 2g passes more, 3 + 2g
    in all (13 for Qwen2.5-14B's 40 query over 8 KV heads). The Qwen2.5 speed benchmark
    (transformers 4.46.0, ``attn_implementation="flash_attention_2"``) shows it: Qwen2.5-14B
    slows from 24.74 to 8.20 tokens/s at 30,720 prompt tokens, the same in BF16 and
    GPTQ-Int4 (8.14), so the cost is the cache's, not the weights'. The newer attention
    integration (``integrations/flash_attention.py``, 4.48+) passes the grouped heads to
    flash-attention as they are; the sizing keeps the expanded copies, the slower path
    that eager/SDPA users and older releases run (the Qwen3 benchmark's 4.51.3 one-token
    rows barely notice: their caches are small)."""
    expert_overhead_s: float = 0.0
    """Per routed expert and MoE layer: plain transformers' sparse-MoE blocks loop over
    every expert in Python (mask, gather, three matmuls, scale, scatter: some 8 launches),
    fused-MoE engines run one grouped kernel."""
    moe_layer_latency_s: float = 0.0
    """Per MoE layer and decode step, the fixed cost of the engine's fused-MoE operator
    beyond the bytes it reads (:data:`MOE_KERNEL_LATENCY_S`); 0 for engines whose MoE kernels
    have no published small-batch timing here."""
    reservation: str = ""
    """How much device memory the engine takes at start-up whatever the job needs (its
    KV-cache pool): what nvidia-smi shows, not what the estimate sizes."""
    memory_fraction: float | None = None
    """The fraction of each device the engine's default budget covers (weights,
    activations and KV-cache pool together): a plan needing more than it does not start
    with the defaults, and what it leaves is the pool's only spare room (review 4 F8).
    ``None``: not a fixed fraction of the device."""
    max_batch: int = 256
    """Sequences the engine's scheduler runs at once by default (continuous batching), the
    ceiling of :mod:`service.sizing.batch`. vLLM ``max_num_seqs``: 256 for the V0 engine
    (the one Volta runs; 1024 for V1 there), vllm-project/vllm@001999d2
    vllm/engine/arg_utils.py ``EngineArgs.__post_init__`` — the smaller kept. LMDeploy
    ``max_batch_size``: 128 on CUDA devices other than A100/A800 (384) and
    H100/H800/H200 (1024), 256 on Ascend, InternLM/lmdeploy@726c5fe9 lmdeploy/utils.py
    ``get_max_batch_size`` — the common 128 kept. SGLang sizes ``max_running_requests``
    from its KV pool, and no default of TensorRT-LLM or MindIE is checked here: vLLM's
    256. Plain transformers ``generate()`` has no continuous batching: 1 (each replica
    serves one request at a time)."""
    label_zh: str = ""
    """The label in a Chinese sentence where ``label`` carries English words or half-width
    brackets (empty: the label reads the same in both)."""

    def label_in(self, lang: str) -> str:
        """The label as a sentence in ``lang`` names the engine (session 11 W2: "MindIE
        (Ascend) 的默认值未核实" in a zh reason)."""
        return self.label_zh if lang == "zh" and self.label_zh else self.label


ENGINES: dict[str, EngineProfile] = {
    "vllm": EngineProfile(
        name="vllm",
        label="vLLM",
        bandwidth_efficiency=1.0,
        step_overhead_s=1.5e-3,
        layer_overhead_s=60e-6,
        chunked_prefill=True,
        prefill_chunk=2048,
        moe_layer_latency_s=MOE_KERNEL_LATENCY_S,
        note="vLLM: CUDA graphs and paged attention, a Python scheduler per step; chunked "
        "prefill (max_num_batched_tokens 2048 for online serving)",
        reservation="vLLM pre-allocates gpu_memory_utilization of each device (0.9 by "
        "default, 0.92 in recent releases: vllm/config/cache.py) for the weights and a KV-cache "
        "pool, so nvidia-smi shows about that much whatever the estimate; the pool beyond the "
        "estimated KV cache holds more concurrent sequences",
        memory_fraction=0.9,  # EngineArgs.gpu_memory_utilization = 0.90 (vllm/engine/arg_utils.py)
    ),
    "sglang": EngineProfile(
        name="sglang",
        label="SGLang",
        bandwidth_efficiency=1.0,
        step_overhead_s=1.0e-3,
        layer_overhead_s=50e-6,
        chunked_prefill=True,
        prefill_chunk=8192,
        moe_layer_latency_s=MOE_KERNEL_LATENCY_S,
        note="SGLang: CUDA graphs, overlapped CPU scheduling; chunked_prefill_size 8192",
        reservation="SGLang pre-allocates mem_fraction_static of each device (set by the "
        "device's size, about 0.8-0.9; sglang server_args.py) for the weights and its KV-cache "
        "pool, so nvidia-smi shows about that much whatever the estimate",
    ),
    "lmdeploy": EngineProfile(
        name="lmdeploy",
        label="LMDeploy (TurboMind)",
        label_zh="LMDeploy（TurboMind）",
        bandwidth_efficiency=1.0,
        step_overhead_s=1.0e-3,
        layer_overhead_s=40e-6,
        chunked_prefill=True,
        prefill_chunk=8192,
        note="LMDeploy TurboMind: C++ engine with fused kernels (max_prefill_token_num 8192)",
        fused_int4=True,
        max_batch=128,
        reservation="LMDeploy TurboMind gives its KV-cache pool cache_max_entry_count (0.8) of "
        "the memory left free after loading the weights (TurbomindEngineConfig), so nvidia-smi "
        "shows more than the estimate",
    ),
    "tensorrt-llm": EngineProfile(
        name="tensorrt-llm",
        label="TensorRT-LLM",
        bandwidth_efficiency=1.0,
        step_overhead_s=0.8e-3,
        layer_overhead_s=30e-6,
        chunked_prefill=True,
        prefill_chunk=8192,
        note="TensorRT-LLM: compiled engine with in-flight batching (max_num_tokens 8192)",
        fused_int4=True,
        reservation="TensorRT-LLM gives its KV-cache pool free_gpu_memory_fraction (0.9) of "
        "the memory left free after loading the engine (KvCacheConfig, "
        "https://nvidia.github.io/TensorRT-LLM/examples/kvcacheconfig.html), so nvidia-smi "
        "shows more than the estimate",
    ),
    "hf": EngineProfile(
        name="hf",
        label="Hugging Face transformers generate()",
        bandwidth_efficiency=1.0,
        step_overhead_s=2.0e-3,
        layer_overhead_s=0.6e-3,
        chunked_prefill=False,
        prefill_chunk=0,
        note="plain transformers: eager PyTorch (no CUDA graphs, some 60-80 kernel launches per "
        "layer: 0.45-0.8 ms per layer in the Qwen speed benchmarks depending on the host CPU, "
        "0.6 ms assumed; a Python loop over the experts of MoE layers), layers split over "
        "devices and run in turn, whole-prompt prefill",
        expert_overhead_s=80e-6,
        kv_passes=3.0,
        gqa_expanded_kv=True,
        max_batch=1,
    ),
    "mindie": EngineProfile(
        name="mindie",
        label="MindIE (Ascend)",
        label_zh="MindIE",  # Ascend's own engine: no bracket to say where it runs
        bandwidth_efficiency=0.9,
        step_overhead_s=2.0e-3,
        layer_overhead_s=80e-6,
        chunked_prefill=True,
        prefill_chunk=8192,
        note="MindIE on Ascend: graph-compiled decode, chunked prefill (no public overhead "
        "figures: vLLM's, a little slower)",
    ),
}


ON_ASCEND: dict[str, EngineProfile] = {
    "lmdeploy": replace(
        ENGINES["lmdeploy"],
        label="LMDeploy (PyTorch engine, dlinfer)",
        label_zh="LMDeploy（PyTorch 引擎，dlinfer）",
        note="LMDeploy's PyTorch engine on Ascend: dlinfer kernels; TurboMind is CUDA-only",
        reservation="LMDeploy's PyTorch engine gives its KV-cache pool cache_max_entry_count "
        "(0.8) of the memory left free after loading the weights (PytorchEngineConfig), so "
        "npu-smi shows more than the estimate",
    ),
}
"""The engines that run another back end on an Ascend NPU, as its words name it (review
13s S6): LMDeploy's TurboMind is CUDA-only; on Ascend LMDeploy runs its PyTorch engine
through dlinfer ("The usage of lmdeploy on a Huawei Ascend device is almost the same as
its usage on CUDA with PytorchEngine", ``PytorchEngineConfig(device_type="ascend")``,
``lmdeploy serve api_server --backend pytorch --device ascend``,
InternLM/lmdeploy@a5418b39 docs/en/get_started/ascend/get_started.md; its prebuilt images
are ``lmdeploy_dlinfer/ascend``). ``PytorchEngineConfig`` keeps ``cache_max_entry_count``
0.8 of the free memory, and its ``max_batch_size`` default ``None`` is set "according to
the device": 256 on Ascend (InternLM/lmdeploy@9f134dc4 lmdeploy/messages.py,
InternLM/lmdeploy@726c5fe9 lmdeploy/utils.py ``get_max_batch_size``). The sizing keeps
:attr:`EngineProfile.max_batch` 128 (the plan's batch ceiling is one per request class,
not per device); :func:`service.sizing.batch.batch_limit_words` says both figures."""

ASCEND_PREFILL_TOKENS: dict[str, int] = {"lmdeploy": 4096}
"""An engine's own default prefill tokens per step on Ascend where they differ from
:attr:`EngineProfile.prefill_chunk`: ``PytorchEngineConfig.max_prefill_token_num`` 4096
(TurboMind's ``TurbomindEngineConfig`` 8192), InternLM/lmdeploy@9f134dc4
lmdeploy/messages.py. The workspace stays sized at the profile's 8192 (the larger)."""

ASCEND_MAX_BATCH: dict[str, int] = {"lmdeploy": 256}
"""An engine's own default batch limit on Ascend where it differs from
:attr:`EngineProfile.max_batch` (LMDeploy ``get_max_batch_size("ascend")``: 256,
InternLM/lmdeploy@726c5fe9 lmdeploy/utils.py)."""


def engine_profile(name: str, ascend: bool = False) -> EngineProfile:
    """The profile of serving engine ``name`` (``ascend``: as it runs on an Ascend NPU,
    :data:`ON_ASCEND`)."""
    if ascend:
        return ON_ASCEND.get(name, ENGINES[name])
    return ENGINES[name]
