"""Which parallel layouts each training framework can actually launch.

The memory ladder (:func:`service.sizing.memory.training_layouts`) would otherwise try
every (ZeRO stage, tensor degree, pipeline stages) that makes the job fit, whether or not
the trainer the request names can run it: Hugging Face Trainer/PEFT with ZeRO-3 *and*
tensor parallelism, or Unsloth's single-GPU trainer with ZeRO-3 over four GPUs. Each row
below says what the framework runs for training, with the public page that says so:

- ``stages``: the data-parallel sharding it offers, as ZeRO stages (0 = plain DDP,
  1/2/3 = DeepSpeed ZeRO or the FSDP equivalent, FSDP FULL_SHARD / FSDP2 = 3).
- ``tensor_parallel`` / ``pipeline_parallel``: whether its training path shards layers
  (Megatron-style TP) or stages them (1F1B pipelines), and ``model_parallel_stages``:
  the ZeRO stages it combines with them.
- ``kbit_stages``: the stages a bitsandbytes 4-bit (NF4) base trains under (QLoRA);
  8-bit bases and tensor/pipeline parallelism never combine with a k-bit base here:
  bitsandbytes ``Linear4bit``/``Linear8bitLt`` weights are not shardable by the TP plans,
  and PEFT's sharded QLoRA path (ZeRO-3/FSDP) needs the 4-bit ``bnb_4bit_quant_storage``.

Hardware adds one rule of its own (:func:`tensor_parallel_limit`): tensor parallelism runs
two all-reduces per layer on the critical path, so it stays inside one server whose
accelerators talk over NVLink/NVSwitch or HCCS (Megatron-LM's guidance: TP within a
node, PP and DP across nodes, Narayanan et al. 2021 §3.3,
https://arxiv.org/abs/2104.04473); PCIe servers (A10, L20, T4, ...) get none, and parts
paired by an NVLink bridge at most 2.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.catalog.models import AcceleratorSpec
from service.sizing.profiles import framework_profile

ALL_STAGES = (0, 1, 2, 3)

DISTRIBUTED_OPTIMIZER_SOURCE = (
    "https://github.com/NVIDIA/Megatron-LM/blob/50b073cc788271efb5d4fbc92d987aeed2384f4f/"
    "docs/source/api-guide/dist_optimizer.md"
)
"""Megatron-LM's "Distributed Optimizer" page: it distributes the optimizer state evenly
across data-parallel ranks (not the gradients, not the parameters), after ZeRO
(arXiv 1910.02054); turned on by ``--use-distributed-optimizer``."""
DISTRIBUTED_OPTIMIZER = frozenset({"megatron", "mindspeed"})
"""Trainers whose optimizer-state sharding (the ladder's stage 1) is Megatron's distributed
optimizer, not DeepSpeed's ZeRO-1 (MindSpeed-LLM runs Megatron-LM on Ascend): their
sentences name it so (review 9 K17: "（ZeRO-1，张量并行 4）" for MindSpeed)."""


def sharding_words(framework: str | None, stage: int, lang: str) -> str:
    """The data-parallel sharding ``stage`` as a layout names it under ``framework``:
    "distributed optimizer" / "分布式优化器" for stage 1 of a Megatron-family trainer,
    else "ZeRO-{stage}" (DeepSpeed's and FSDP's own words)."""
    if framework in DISTRIBUTED_OPTIMIZER and stage == 1:
        return "分布式优化器" if lang == "zh" else "distributed optimizer"
    return f"ZeRO-{stage}"


def sharded_traffic(framework: str | None, lang: str) -> str:
    """What the data-parallel traffic of ``framework`` is named after, beside "data
    parallel" ("data-parallel/ZeRO traffic"; "data-parallel/distributed-optimizer" for
    a Megatron-family trainer), as it stands before "通信" in zh (Latin words spaced)."""
    if framework in DISTRIBUTED_OPTIMIZER:
        return "分布式优化器" if lang == "zh" else "distributed-optimizer"
    return "ZeRO " if lang == "zh" else "ZeRO"


@dataclass(frozen=True, slots=True)
class Parallelism:
    """What one training framework runs (see the module docstring)."""

    stages: tuple[int, ...]
    tensor_parallel: bool
    pipeline_parallel: bool
    model_parallel_stages: tuple[int, ...]
    kbit_stages: tuple[int, ...]
    source: str
    """Public pages (docs, issues) the row is read from."""
    multi_device: bool = True
    limit_en: str = ""
    """What the framework rules out, as a sentence for the answer (English)."""
    limit_zh: str = ""

    def allows(self, stage: int, tensor: int, pipeline: int, *, bits: int | None) -> bool:
        """Whether the framework can run ZeRO ``stage`` with ``tensor`` x ``pipeline``
        model parallelism on more than one device (``bits``: a 4/8-bit base, QLoRA)."""
        if not self.multi_device:
            return False
        if tensor > 1 and not self.tensor_parallel:
            return False
        if pipeline > 1 and not self.pipeline_parallel:
            return False
        model_parallel = tensor > 1 or pipeline > 1
        if bits is not None:
            if model_parallel or stage not in self.kbit_stages:
                return False
            if bits == 8 and stage == 3:
                return False  # PEFT's sharded QLoRA path quantizes to 4-bit storage only
        allowed = self.model_parallel_stages if model_parallel else self.stages
        return stage in allowed


_HF_SOURCE = (
    "ZeRO 1-3 through the DeepSpeed/FSDP integration of Trainer/Accelerate "
    "(https://huggingface.co/docs/transformers/deepspeed); QLoRA under ZeRO-3/FSDP since "
    "PEFT 0.10 with bnb_4bit_quant_storage "
    "(https://huggingface.co/docs/peft/accelerate/deepspeed#use-peft-qlora-and-deepspeed-"
    "with-zero3-for-finetuning-large-models-on-multiple-gpus); no Megatron-style tensor or "
    "pipeline parallelism in the Trainer/PEFT training path"
)
_HF_LIMIT_EN = (
    "{label} trains with data parallelism and ZeRO/FSDP only (no tensor or pipeline "
    "parallelism), so no layout here splits the layers"
)
_HF_LIMIT_ZH = (
    "{label} 只支持数据并行与 ZeRO/FSDP（不支持张量并行或流水线并行），因此这里的方案不切分层"
)
_MEGATRON_LIMIT_EN = (
    "{label} shards the optimizer (distributed optimizer) but not the weights: large "
    "models are split by tensor and pipeline parallelism instead of ZeRO-3"
)
_MEGATRON_LIMIT_ZH = (
    "{label} 只切分优化器状态（分布式优化器），不切分权重："
    "大模型靠张量并行和流水线并行而不是 ZeRO-3"
)


def _hf_trainer(source: str) -> Parallelism:
    """A trainer built on Hugging Face Trainer (data parallelism and ZeRO/FSDP at every
    stage, 4/8-bit bases too, no tensor or pipeline parallelism): one row per launcher,
    differing in its source."""
    return Parallelism(
        stages=ALL_STAGES,
        tensor_parallel=False,
        pipeline_parallel=False,
        model_parallel_stages=(),
        kbit_stages=ALL_STAGES,
        source=source,
        limit_en=_HF_LIMIT_EN,
        limit_zh=_HF_LIMIT_ZH,
    )


FRAMEWORK_PARALLELISM: dict[str, Parallelism] = {
    "hf": _hf_trainer(_HF_SOURCE),
    "llama-factory": _hf_trainer(
        "LLaMA-Factory runs on HF Trainer: DeepSpeed ZeRO-0/2/3 configs and FSDP "
        "(+QLoRA) examples in examples/deepspeed and examples/extras/fsdp_qlora "
        "(https://github.com/hiyouga/LlamaFactory/tree/main/examples); no tensor or pipeline "
        "parallelism in that path. " + _HF_SOURCE
    ),
    "ms-swift": _hf_trainer(
        "ms-swift's `swift sft` runs HF Trainer with DeepSpeed ZeRO-2/3 "
        "(https://swift.readthedocs.io/en/latest/Instruction/Command-line-parameters.html, "
        "--deepspeed); tensor/pipeline parallelism is its separate `megatron sft` entry "
        "point (Megatron-SWIFT), which this profile does not model. " + _HF_SOURCE
    ),
    "torchtune": Parallelism(
        stages=(3,),
        tensor_parallel=False,
        pipeline_parallel=False,
        model_parallel_stages=(),
        kbit_stages=(3,),
        source="torchtune's *_distributed recipes shard with FSDP2 (fully_shard), LoRA and "
        "QLoRA (torchao NF4) included (https://docs.pytorch.org/torchtune/stable/"
        "tutorials/qlora_finetune.html, recipes/lora_finetune_distributed.py); no DDP or "
        "ZeRO-1/2 mode, no pipeline parallelism",
        limit_en="{label} shards every multi-GPU run with FSDP (ZeRO-3 equivalent) and "
        "splits no layers (no tensor or pipeline parallelism)",
        limit_zh="{label} 多卡训练一律用 FSDP（相当于 ZeRO-3）切分，不做张量并行或流水线并行",
    ),
    "torchtitan": Parallelism(
        stages=(0, 3),
        tensor_parallel=True,
        pipeline_parallel=True,
        model_parallel_stages=(0, 3),
        kbit_stages=(),
        source="torchtitan composes FSDP2 (or DDP/HSDP replicas), tensor parallelism, "
        "pipeline parallelism and context parallelism "
        "(https://github.com/pytorch/torchtitan/blob/main/docs/composability.md, "
        "data_parallel_shard_degree/data_parallel_replicate_degree/tensor_parallel_degree/"
        "pipeline_parallel_degree in torchtitan/config/job_config.py); no bitsandbytes bases",
    ),
    "unsloth": Parallelism(
        stages=(0,),
        tensor_parallel=False,
        pipeline_parallel=False,
        model_parallel_stages=(),
        kbit_stages=(),
        multi_device=False,
        source="Unsloth's open-source trainer runs on one GPU: 'Unsloth free version does not "
        "support Multi-GPU training' and LLaMA-Factory raises 'ValueError: Unsloth is "
        "incompatible with DeepSpeed ZeRO-3' (https://github.com/hiyouga/LlamaFactory/"
        "issues/6940); 'unsloth 不支持 zero3' (https://github.com/hiyouga/LlamaFactory/"
        "issues/3949); 'do not use deepspeed together with unsloth' "
        "(https://github.com/hiyouga/LlamaFactory/issues/3425)",
        limit_en="{label} (open source) trains on one GPU only, so only single-GPU layouts "
        "are considered",
        limit_zh="{label}（开源版）只支持单卡训练，因此只考虑单卡方案",
    ),
    "deepspeed": Parallelism(
        stages=ALL_STAGES,
        tensor_parallel=True,
        pipeline_parallel=True,
        model_parallel_stages=(0, 1),
        kbit_stages=ALL_STAGES,
        source="DeepSpeed ZeRO 1-3 (https://www.deepspeed.ai/tutorials/zero/); AutoTP "
        "training combines tensor parallelism with ZeRO stage 0, 1 or 2, not 3 "
        "(https://www.deepspeed.ai/tutorials/autotp-training); its pipeline engine runs "
        "with ZeRO-1 at most (https://www.deepspeed.ai/tutorials/pipeline/): stages 0-1 "
        "with any model parallelism. QLoRA under ZeRO-3: see the PEFT guide above",
        limit_en="{label} combines tensor or pipeline parallelism only with ZeRO-0/1 (AutoTP "
        "and its pipeline engine), never with ZeRO-3",
        limit_zh="{label} 的张量并行或流水线并行只能与 ZeRO-0/1 组合"
        "（AutoTP 与其流水线引擎），不能与 ZeRO-3 组合",
    ),
    "megatron": Parallelism(
        stages=(0, 1),
        tensor_parallel=True,
        pipeline_parallel=True,
        model_parallel_stages=(0, 1),
        kbit_stages=(),
        source="Megatron-LM: tensor, pipeline, context and data parallelism with the "
        "distributed optimizer (--use-distributed-optimizer shards the optimizer states "
        "over data-parallel ranks, ZeRO-1-like; " + DISTRIBUTED_OPTIMIZER_SOURCE + "); "
        "no bitsandbytes bases",
        limit_en=_MEGATRON_LIMIT_EN,
        limit_zh=_MEGATRON_LIMIT_ZH,
    ),
    "mindspeed": Parallelism(
        stages=(0, 1),
        tensor_parallel=True,
        pipeline_parallel=True,
        model_parallel_stages=(0, 1),
        kbit_stages=(),
        source="MindSpeed-LLM runs Megatron-LM on Ascend (tensor/pipeline parallelism and "
        "the distributed optimizer, https://gitee.com/ascend/MindSpeed-LLM, "
        "docs/features); no bitsandbytes bases",
        limit_en=_MEGATRON_LIMIT_EN,
        limit_zh=_MEGATRON_LIMIT_ZH,
    ),
    "generic": Parallelism(
        stages=ALL_STAGES,
        tensor_parallel=True,
        pipeline_parallel=True,
        model_parallel_stages=ALL_STAGES,
        kbit_stages=ALL_STAGES,
        source="no framework named: the v1 accounting, every layout a trainer could run "
        "(tensor/pipeline parallelism still never with a k-bit base)",
    ),
}


def framework_parallelism(name: str) -> Parallelism:
    """The capability row of training framework ``name``."""
    return FRAMEWORK_PARALLELISM[name]


NVLINK_CLASS_GBPS = 64.0
"""Bidirectional device-to-device bandwidth above PCIe 4.0 x16 (64 GB/s, the registry's
figure for parts without NVLink): what marks an NVLink/NVSwitch or HCCS part."""
BRIDGED_TP_MAX = 2
"""An NVLink bridge joins two cards; a TP group over more would cross PCIe."""


def tensor_parallel_limit(accelerator: AcceleratorSpec, per_node: int) -> int:
    """Largest tensor-parallel degree training may use on ``per_node`` x ``accelerator``
    in one server: all of them over NVLink/NVSwitch/HCCS, 2 over an NVLink bridge, 1 over
    PCIe (see the module docstring)."""
    name = (accelerator.interconnect or "").lower()
    gbps = accelerator.interconnect_gbps or 0.0
    if gbps <= NVLINK_CLASS_GBPS:
        return 1
    if "bridge" in name:
        return min(BRIDGED_TP_MAX, max(per_node, 1))
    return max(per_node, 1)


def limits(framework: str, devices: int, stage: int | None, tensor: int, pipeline: int) -> bool:
    """Whether ``framework``'s capability shaped a training layout on ``devices``: a
    single-GPU trainer always (only one-device servers qualify); on more devices, a
    ZeRO-3/FSDP layout where the framework has no tensor parallelism to offer instead (or
    FSDP is its only mode), or tensor/pipeline parallelism where it has no ZeRO-3 or
    cannot combine the two (DeepSpeed: only layouts that split the layers)."""
    cap = FRAMEWORK_PARALLELISM[framework]
    if not cap.limit_en:
        return False
    if not cap.multi_device:
        return True
    if devices <= 1:
        return False
    if 3 not in cap.stages:
        return tensor > 1 or pipeline > 1
    if (cap.tensor_parallel or cap.pipeline_parallel) and 3 not in cap.model_parallel_stages:
        # a rule about which ZeRO stages combine with split layers (DeepSpeed) shaped only
        # the layouts that split them; a ZeRO-3 layout without tensor or pipeline
        # parallelism is the framework's plain sharding (review 4 F15)
        return tensor > 1 or pipeline > 1
    return stage == 3


def framework_limit(framework: str, lang: str) -> str:
    """The sentence (no final stop) saying what ``framework`` rules out, in ``lang``."""
    cap = FRAMEWORK_PARALLELISM[framework]
    label = framework_profile(framework).label_in(lang)
    if lang == "zh":  # no space after a full-width bracket ("MindSpeed（昇腾上的 Megatron）只切分")
        return cap.limit_zh.format(label=label).replace("） ", "）")
    return cap.limit_en.format(label=label)
