"""Advice an experienced cloud architect gives, localized (zh/en), only when relevant.

The practice comes from the two seed articles (``shared/seeds``): CPU:GPU 4–8:1 and RAM,
object storage + parallel file system and ESSD PL levels for IO, spot with checkpoints,
container images pinning CUDA/driver versions, GPU utilization under 50% meaning a
data-loading bottleneck, Ascend's CANN migration, supply limits of A800/H800/H20,
quantization and autoscaling for serving, and sales-negotiated clusters for 100B+
pretraining. Their *instance* claims are not used (several are wrong).
"""

from __future__ import annotations

from dataclasses import dataclass

from service.planning.schema import Advice, Lang
from service.sizing.moe import EXPERT_LOOP_FACTOR, ZERO3_EXPERT_GATHER_FACTOR

_ZERO3_MOE = EXPERT_LOOP_FACTOR * ZERO3_EXPERT_GATHER_FACTOR

SUPPLY_LIMITED = frozenset({"A800-40GB", "A800-80GB", "H800", "H20"})
QUANTIZED = frozenset({"fp8", "int8", "int4"})

_TEXT: dict[str, dict[Lang, str]] = {
    "cpu_ratio": {
        "zh": "CPU 与内存：每张卡配 4–8 个 vCPU（本方案约需 {vcpus} vCPU、{ram:.0f} GiB 内存），"
        "否则数据加载会让 {dev} 空等。",
        "en": "CPU and RAM: plan 4–8 vCPUs per accelerator (about {vcpus} vCPUs and "
        "{ram:.0f} GiB RAM here) so data loading never starves the {dev}s.",
    },
    "cpu_ratio_any": {
        "zh": "CPU 与内存：每张卡配 4–8 个 vCPU，否则数据加载会让 {dev} 空等。",
        "en": "CPU and RAM: plan 4–8 vCPUs per accelerator so data loading never starves "
        "the {dev}s.",
    },
    "cpu_ratio_serving": {
        "zh": "CPU 与内存：推理服务的 CPU 负责分词、HTTP 前端与请求调度，每张卡配 4–8 个 vCPU"
        "（本方案约需 {vcpus} vCPU、{ram:.0f} GiB 内存，内存需能暂存一份权重以便加载），"
        "否则高并发时首 token 时延会被 CPU 拖慢。",
        "en": "CPU and RAM: a serving engine's CPUs run tokenization, the HTTP front end and "
        "request scheduling; plan 4–8 vCPUs per accelerator (about {vcpus} vCPUs and "
        "{ram:.0f} GiB RAM here, enough to stage the weights while loading), or time to "
        "first token suffers under load.",
    },
    "cpu_ratio_encoder": {
        "zh": "CPU 与内存：编码服务的 CPU 负责分词、HTTP 前端与组批，每张卡配 4–8 个 vCPU"
        "（本方案约需 {vcpus} vCPU、{ram:.0f} GiB 内存，内存需能暂存一份权重以便加载），"
        "否则高并发时分词会让 {dev} 空等。",
        "en": "CPU and RAM: an encoding server's CPUs run tokenization, the HTTP front end and "
        "batching; plan 4–8 vCPUs per accelerator (about {vcpus} vCPUs and {ram:.0f} GiB RAM "
        "here, enough to stage the weights while loading), or tokenization starves the {dev} "
        "under load.",
    },
    "cpu_ratio_encoder_any": {
        "zh": "CPU 与内存：编码服务的 CPU 负责分词、HTTP 前端与组批，每张卡配 4–8 个 vCPU，"
        "内存需能暂存一份权重以便加载。",
        "en": "CPU and RAM: an encoding server's CPUs run tokenization, the HTTP front end and "
        "batching; plan 4–8 vCPUs per accelerator and RAM enough to stage the weights while "
        "loading.",
    },
    # review 8: a served image model (SDXL, a CNN, a ViT) has no tokens or KV cache: its
    # host decodes and encodes the images, and its rate is set by batching and, for a
    # diffusion model, by the denoising steps (diffusers' pipelines run one UNet forward
    # per step, https://huggingface.co/docs/diffusers/using-diffusers/write_own_pipeline)
    "cpu_ratio_image_serving": {
        "zh": "CPU 与内存：图像推理服务的 CPU 负责图像的解码与编码、HTTP 前端与组批，"
        "每张卡配 4–8 个 vCPU（本方案约需 {vcpus} vCPU、{ram:.0f} GiB 内存，内存需能暂存一份"
        "权重以便加载），否则高并发时图像处理会让 {dev} 空等。",
        "en": "CPU and RAM: an image server's CPUs decode and encode the images, run the HTTP "
        "front end and batch the requests; plan 4–8 vCPUs per accelerator (about {vcpus} "
        "vCPUs and {ram:.0f} GiB RAM here, enough to stage the weights while loading), or "
        "image handling starves the {dev} under load.",
    },
    "cpu_ratio_image_serving_any": {
        "zh": "CPU 与内存：图像推理服务的 CPU 负责图像的解码与编码、HTTP 前端与组批，"
        "每张卡配 4–8 个 vCPU，内存需能暂存一份权重以便加载。",
        "en": "CPU and RAM: an image server's CPUs decode and encode the images, run the HTTP "
        "front end and batch the requests; plan 4–8 vCPUs per accelerator and RAM enough to "
        "stage the weights while loading.",
    },
    "monitoring_image_serving": {
        "zh": "监控：观察 GPU 利用率、显存、批量大小与排队时延（DCGM 与服务自身的指标）；"
        "利用率低通常是批量太小，而不是需要更大的 GPU。",
        "en": "Monitoring: watch GPU utilization, memory, batch sizes and queueing (DCGM and "
        "the server's own metrics); low utilization usually means batches that are too "
        "small, not a need for a bigger GPU.",
    },
    "serving_images": {
        "zh": "推理上线：图像模型的每个请求都是完整的前向计算（扩散模型每个去噪步一次 UNet 前向），"
        "吞吐取决于请求合批与去噪步数；可用 torch.compile 或 TensorRT "
        "编译模型，并按请求量弹性伸缩副本。",
        "en": "Serving: every request to an image model is whole forward passes (a diffusion "
        "model runs its UNet once per denoising step), so batching and the number of "
        "denoising steps set the throughput; compile the model (torch.compile or TensorRT) "
        "and autoscale replicas with the request rate.",
    },
    # TorchAir, torch_npu's graph-mode library, gives torch.compile its NPU backend
    # (torchair.get_npu_backend(); inference is its focus):
    # https://www.hiascend.com/document/detail/zh/Pytorch/710/modthirdparty/torchairuseguide
    "serving_images_ascend": {
        "zh": "推理上线：图像模型的每个请求都是完整的前向计算（扩散模型每个去噪步一次 UNet 前向），"
        "吞吐取决于请求合批与去噪步数；在昇腾上可用 torch.compile 配合 TorchAir 的 NPU 后端"
        "（torchair.get_npu_backend()）编译模型，并按请求量弹性伸缩副本。",
        "en": "Serving: every request to an image model is whole forward passes (a diffusion "
        "model runs its UNet once per denoising step), so batching and the number of "
        "denoising steps set the throughput; on Ascend, compile the model with torch.compile "
        "and TorchAir's NPU backend (torchair.get_npu_backend()), and autoscale replicas with "
        "the request rate.",
    },
    "cpu_ratio_serving_any": {
        "zh": "CPU 与内存：推理服务的 CPU 负责分词、HTTP 前端与请求调度，每张卡配 4–8 个 vCPU，"
        "内存需能暂存一份权重以便加载。",
        "en": "CPU and RAM: a serving engine's CPUs run tokenization, the HTTP front end and "
        "request scheduling; plan 4–8 vCPUs per accelerator and RAM enough to stage the "
        "weights while loading.",
    },
    "cpu_ratio_images": {
        "zh": "CPU 与内存：图像模型的 JPEG 解码与数据增强在 CPU 上运行，每个 vCPU 一个数据加载"
        "进程；每张卡配 8–16 个 vCPU（本方案约需 {vcpus} vCPU、{ram:.0f} GiB 内存），"
        "否则 {dev} 会空等数据。",
        "en": "CPU and RAM: an image model's JPEG decoding and augmentation run on the CPU, "
        "one data-loader worker per vCPU; plan 8–16 vCPUs per accelerator (about {vcpus} "
        "vCPUs and {ram:.0f} GiB RAM here) so the {dev}s never wait for data.",
    },
    "cpu_ratio_images_any": {
        "zh": "CPU 与内存：图像模型的 JPEG 解码与数据增强在 CPU 上运行，每个 vCPU 一个数据加载"
        "进程；每张卡配 8–16 个 vCPU，否则 {dev} 会空等数据。",
        "en": "CPU and RAM: an image model's JPEG decoding and augmentation run on the CPU, "
        "one data-loader worker per vCPU; plan 8–16 vCPUs per accelerator so the {dev}s "
        "never wait for data.",
    },
    "storage": {
        "zh": "存储：约 {disk:.0f} GiB 数据与检查点。原始数据放对象存储（{objects}），"
        "通过并行文件系统（{pfs}）或高性能云盘{disks_zh}读取，磁盘吞吐至少数百 MB/s。",
        "en": "Storage: about {disk:.0f} GiB of data and checkpoints. Keep raw data in object "
        "storage ({objects}) and read it through a parallel file system ({pfs}) or "
        "high-IOPS disks{disks_en}; aim for hundreds of MB/s or more.",
    },
    "storage_serving": {
        "zh": "存储：约 {disk:.0f} GiB 系统盘与模型权重。权重放对象存储（{objects}）"
        "或打进镜像，启动时拷到本地 NVMe 或高性能云盘，新副本才能快速上线。",
        "en": "Storage: about {disk:.0f} GiB for the system image and the model weights. Keep "
        "the weights in object storage ({objects}) or bake them into the image, and "
        "copy them to local NVMe or a fast cloud disk at start so new replicas come up "
        "quickly.",
    },
    "storage_preprocess": {
        "zh": "存储：约 {disk:.0f} GiB 输入数据与中间结果。原始数据放对象存储（{objects}），"
        "中间结果写本地 NVMe 或高 IOPS 云盘{disks_zh}，磁盘吞吐至少数百 MB/s。",
        "en": "Storage: about {disk:.0f} GiB of input data and intermediate results. Keep raw "
        "data in object storage ({objects}) and write intermediates to local NVMe or "
        "high-IOPS disks{disks_en}; aim for hundreds of MB/s or more.",
    },
    "spot": {
        "zh": "抢占式/竞价实例通常只需按量价格的一到三折，但可能被回收："
        "每 {interval:g} 小时保存一次检查点，并用自动伸缩替换被回收的节点。",
        "en": "Spot instances often cost 10–30% of on-demand but can be reclaimed: checkpoint "
        "every {interval:g} h and let an auto-scaling group replace reclaimed nodes.",
    },
    "no_spot": {
        "zh": "该任务不可中断，已排除抢占式实例。",
        "en": "The job is not interruptible, so spot instances were left out.",
    },
    "containers": {
        "zh": "环境：使用云厂商的 AI 镜像或自建 Docker 镜像，固定 CUDA、驱动与框架版本，"
        "换机器时一键拉起。",
        "en": "Environment: use the cloud's AI images or your own Docker image that pins "
        "CUDA, driver and framework versions, so a new machine starts identically.",
    },
    "monitoring": {
        "zh": "监控：用 nvtop / DCGM 观察 GPU 利用率；若长期低于 50%，瓶颈在数据加载或 IO，"
        "先优化 DataLoader，而不是换更大的 GPU。",
        "en": "Monitoring: watch GPU utilization (nvtop/DCGM). Below 50% for long means a "
        "data-loading or IO bottleneck: fix the DataLoader before buying a bigger GPU.",
    },
    "monitoring_serving": {
        "zh": "监控：观察 GPU 利用率、KV 缓存占用、排队时延与首 token 时延（推理引擎的 /metrics、"
        "DCGM）；利用率低通常是并发或批量不足，而不是需要更大的 GPU。",
        "en": "Monitoring: watch GPU utilization, KV-cache usage, queueing and time to first "
        "token (the engine's /metrics, DCGM); low utilization usually means too little "
        "concurrency or batching, not a need for a bigger GPU.",
    },
    "monitoring_encoder": {
        "zh": "监控：观察 GPU 利用率、批量大小与排队时延（推理引擎的 /metrics、DCGM）；"
        "编码是计算密集的一次前向，利用率低通常是批量太小，而不是需要更大的 GPU。",
        "en": "Monitoring: watch GPU utilization, batch sizes and queueing (the engine's "
        "/metrics, DCGM); encoding is one compute-bound forward pass, so low utilization "
        "usually means batches that are too small, not a need for a bigger GPU.",
    },
    "monitoring_ascend_encoder": {
        "zh": "监控：用 npu-smi 观察 NPU 利用率与显存，并看推理引擎的批量大小与排队时延；"
        "利用率低通常是批量太小，而不是需要更大的机器。",
        "en": "Monitoring: watch NPU utilization and memory with npu-smi, and the engine's "
        "batch sizes and queueing; low utilization usually means batches that are too small, "
        "not a need for a bigger machine.",
    },
    "monitoring_ascend_image_serving": {
        "zh": "监控：用 npu-smi 观察 NPU 利用率与显存，并看服务自身的批量大小与排队时延；"
        "利用率低通常是批量太小，而不是需要更大的机器。",
        "en": "Monitoring: watch NPU utilization and memory with npu-smi, and the server's own "
        "batch sizes and queueing; low utilization usually means batches that are too small, "
        "not a need for a bigger machine.",
    },
    "monitoring_ascend": {
        "zh": "监控：用 npu-smi 观察 NPU 利用率与显存（可配合 MindStudio Insight 做性能分析）；"
        "若长期低于 50%，瓶颈在数据加载或 IO，先优化数据管道，而不是换更大的机器。",
        "en": "Monitoring: watch NPU utilization and memory with npu-smi (profile with "
        "MindStudio Insight). Below 50% for long means a data-loading or IO bottleneck: fix "
        "the input pipeline before buying a bigger machine.",
    },
    "monitoring_ascend_serving": {
        "zh": "监控：用 npu-smi 观察 NPU 利用率与显存，并看推理引擎的 KV 缓存占用、排队时延与"
        "首 token 时延；利用率低通常是并发或批量不足，而不是需要更大的机器。",
        "en": "Monitoring: watch NPU utilization and memory with npu-smi, and the engine's "
        "KV-cache usage, queueing and time to first token; low utilization usually means too "
        "little concurrency or batching, not a need for a bigger machine.",
    },
    "containers_ascend": {
        "zh": "环境：使用云厂商的昇腾 AI 镜像或自建 Docker 镜像，固定 CANN、NPU 驱动/固件、"
        "torch_npu 与框架版本，换机器时一键拉起。",
        "en": "Environment: use the cloud's Ascend AI images or your own Docker image that pins "
        "CANN, the NPU driver and firmware, torch_npu and framework versions, so a new machine "
        "starts identically.",
    },
    "concurrency": {
        "zh": "吞吐目标按并发 1 计算：每个副本一次只解码一条序列，{target:,.0f} tokens/秒 只能靠"
        "增加副本达到。推理引擎会把同时到达的请求合批：如果这些吞吐来自多个用户，请给出同时服务的"
        "请求数（concurrency），合批后所需的卡会少得多。",
        "en": "The throughput target was sized at concurrency 1: each replica decodes one "
        "sequence at a time, so {target:,.0f} tokens/s is reached only by adding replicas. "
        "Serving engines batch requests that arrive together: if that throughput comes from "
        "many users, give the number of requests served at once (concurrency); batched, far "
        "fewer accelerators reach it.",
    },
    "ascend": {
        "zh": "昇腾 NPU 使用 CANN 而非 CUDA：PyTorch 需 torch_npu 适配，自定义 CUDA 算子需迁移，"
        "请先小规模验证再采购。",
        "en": "Ascend NPUs run CANN, not CUDA: PyTorch needs torch_npu and custom CUDA kernels "
        "must be ported; validate on a small run before committing.",
    },
    "ascend_mindie": {
        "zh": "MindIE 直接加载 Hugging Face 权重，运行其内置并已为昇腾调优的模型（ATB Models），"
        "用户代码无需迁移到 torch_npu；只有 MindIE 未内置的模型结构需要按其模型开发指南组网适配。",
        "en": "MindIE loads the Hugging Face weights into its built-in models tuned for Ascend "
        "(ATB Models), so no user code is migrated to torch_npu; only a model architecture "
        "MindIE does not ship needs porting with its model development guide.",
    },
    "ascend_serving": {
        "zh": "昇腾上的 vLLM 是 vllm-ascend 插件（不是 CUDA 版 vLLM）：它支持的模型无需改代码即可"
        "服务，用户代码无需迁移到 torch_npu；也可改用华为的 MindIE。",
        "en": "vLLM on Ascend runs as the vllm-ascend plugin, not CUDA vLLM: the models it "
        "supports are served without code changes or a torch_npu migration; Huawei's MindIE is "
        "the other engine.",
    },
    "supply": {
        "zh": "{names} 受出口管制影响供应紧张，常需联系销售或限定地域，请先确认库存。",
        "en": "{names} are supply-limited by export controls and often need a sales contact "
        "or specific regions; confirm stock first.",
    },
    "multi_node": {
        "zh": "多机训练必须使用 VPC 内网并开启 RDMA/eRDMA，否则梯度同步会成为瓶颈。",
        "en": "Multi-node training needs the VPC network with RDMA/eRDMA enabled, or "
        "gradient synchronization becomes the bottleneck.",
    },
    "sharding": {
        "zh": "多台节点做预处理：按文件把数据分片，每台只处理自己的分片"
        "（按分片编号，或用 Spark/Ray 调度），直接读写对象存储；节点之间没有梯度同步，无需 RDMA。",
        "en": "Preprocessing on several nodes: shard the input by file so each node processes "
        "only its own shards (by shard index, or scheduled with Spark/Ray) and reads and "
        "writes object storage directly; there is no gradient exchange, so no RDMA is needed.",
    },
    "serving": {
        "zh": "推理上线：INT8/INT4 量化（TensorRT、vLLM、ONNX Runtime）可显著降低显存与成本；"
        "配置弹性伸缩，空闲时缩容甚至缩到零（Serverless GPU）。",
        "en": "Serving: INT8/INT4 quantization (TensorRT, vLLM, ONNX Runtime) cuts memory and "
        "cost; autoscale replicas and scale to zero when idle (serverless GPU).",
    },
    "serving_ascend": {
        "zh": "推理上线：在昇腾上用 msModelSlim 做 W8A8（INT8）量化，由 MindIE 或 vllm-ascend "
        "加载，可显著降低显存与成本；配置弹性伸缩，空闲时缩容，上线前用评测集核对量化后的输出质量。",
        "en": "Serving: on Ascend, quantize to W8A8 (INT8) with msModelSlim and serve it with "
        "MindIE or vllm-ascend to cut memory and cost; autoscale replicas, scale down when idle, "
        "and check the quantized model's outputs on an evaluation set before going live.",
    },
    "serving_quantized": {
        "zh": "推理上线：权重已是 {precision}，显存与成本已按量化计算；配置弹性伸缩，"
        "空闲时缩容甚至缩到零（Serverless GPU），上线前用评测集核对量化后的输出质量。",
        "en": "Serving: the weights are already {precision}, and memory and cost are planned "
        "for it; autoscale replicas and scale to zero when idle (serverless GPU), and check "
        "the quantized model's outputs on an evaluation set before going live.",
    },
    # An offline batch job (a fixed number of output tokens) has no idle time to scale
    # away and no latency to keep (review 7 J19): it runs at the engine's batch limit and
    # the servers are released when it ends (:mod:`service.sizing.batch`).
    "serving_batch": {
        "zh": "批量推理：作为离线任务运行，让推理引擎始终满批处理（如 vLLM 的离线 LLM.generate，"
        "或同时向服务端提交大量请求），跑完即释放服务器，无需弹性伸缩；INT8/INT4 量化"
        "（TensorRT、vLLM、ONNX Runtime）可显著降低显存与成本。",
        "en": "Batch inference: run it as an offline job that keeps the engine's batch full "
        "(vLLM's offline LLM.generate, or many requests in flight to a server) and release "
        "the servers when it ends, with no autoscaling; INT8/INT4 quantization (TensorRT, "
        "vLLM, ONNX Runtime) cuts memory and cost.",
    },
    # an image batch job runs the pipeline itself, not a text engine's offline batch
    # (review 10 S7c6): each call batches the images its memory holds (diffusers'
    # ``num_images_per_prompt`` / a list of prompts; torchvision/timm a batched tensor)
    "serving_batch_images": {
        "zh": "批量推理：作为离线任务运行，每次调用处理显存放得下的一批图片"
        "（扩散模型的耗时取决于去噪步数），跑完即释放服务器，无需弹性伸缩；"
        "可用 torch.compile 或 TensorRT 编译模型，缩短每次调用的时间。",
        "en": "Batch inference: run it as an offline job whose every call takes as many images "
        "as the memory here holds (a diffusion model's time is set by its denoising steps) "
        "and release the servers when it ends, with no autoscaling; compiling the model "
        "(torch.compile or TensorRT) shortens each call.",
    },
    "serving_batch_quantized": {
        "zh": "批量推理：作为离线任务运行，让推理引擎始终满批处理，跑完即释放服务器，无需弹性伸缩；"
        "权重已是 {precision}，显存与成本已按量化计算，"
        "正式运行前先用一小批样本核对量化后的输出质量。",
        "en": "Batch inference: run it as an offline job that keeps the engine's batch full and "
        "release the servers when it ends, with no autoscaling; the weights are already "
        "{precision}, and memory and cost are planned for it: check the quantized model's "
        "outputs on a small sample before the full run.",
    },
    "serving_batch_ascend": {
        "zh": "批量推理：作为离线任务运行，让推理引擎始终满批处理，跑完即释放服务器，无需弹性伸缩；"
        "在昇腾上可用 msModelSlim 做 W8A8（INT8）量化，由 MindIE 或 vllm-ascend 加载，"
        "可显著降低显存与成本，正式运行前先用一小批样本核对量化后的输出质量。",
        "en": "Batch inference: run it as an offline job that keeps the engine's batch full and "
        "release the servers when it ends, with no autoscaling; on Ascend, quantizing to W8A8 "
        "(INT8) with msModelSlim, served by MindIE or vllm-ascend, cuts memory and cost: check "
        "the quantized model's outputs on a small sample before the full run.",
    },
    # An encoder's forward pass is compute-bound and its weights small (bge-m3: about 1 GiB),
    # so INT8 buys speed, not memory, and INT4 weight-only kernels (decode-bound LLMs) do not
    # apply (review 7 J11); ONNX Runtime's quantization is 8-bit linear quantization
    # (https://onnxruntime.ai/docs/performance/model-optimizations/quantization.html).
    "serving_encoder": {
        "zh": "推理上线：编码模型是计算密集的一次前向、权重很小，"
        "INT8 量化（ONNX Runtime、TensorRT）提升的是吞吐而不是节省显存，"
        "上线前用评测集核对量化后的检索质量；按请求量弹性伸缩副本。",
        "en": "Serving: an encoder runs one compute-bound forward pass over small weights, so "
        "INT8 quantization (ONNX Runtime, TensorRT) buys throughput rather than memory; check "
        "retrieval quality on an evaluation set after quantizing, and autoscale replicas with "
        "the request rate.",
    },
    # INT8 on parts without FP8: SGLang's DeepSeek V3/R1 table lists "Quantized weights
    # (INT8): 16 x A100/800" (https://docs.sglang.io/docs/basic_usage/deepseek_v3.md), and
    # vllm-ascend's DeepSeek tutorials need 2 Atlas 800 A2 (8 x 64 GB 910B) for the W8A8
    # weights (https://docs.vllm.ai/projects/ascend/zh-cn/latest/tutorials/models/DeepSeek-V3.2/)
    # where BF16 takes 4 x 8 A100 in SGLang's table (review 5 G4).
    "release_fp8": {
        "zh": "{model} 官方只发布 FP8 权重（按 128×128 分块的 e4m3），本方案按其 BF16 副本"
        "（官方 fp8_cast_bf16.py 转换）计算显存，所有加速卡都能运行。在有 FP8 的卡上"
        "（Hopper：H20/H800/H100；Ada：L20/L40S）改用 FP8 精度即可直接部署官方权重，"
        "权重显存减半。A100 和昇腾 910B 没有 FP8，但可改用 INT8（W8A8）权重，权重显存同样减半："
        "SGLang 用按通道量化的 INT8 权重在 2 台 8×A100 上部署，MindIE 和 vllm-ascend 用 "
        "msModelSlim 量化的 W8A8 权重在 2 台 8×910B 上部署，比 BF16 少用一到两台服务器；"
        "按 INT8 精度重新查询即可得到这种方案。",
        "en": "{model} is released in FP8 only (e4m3 in 128×128 blocks); this plan sizes its "
        "BF16 copy (DeepSeek's fp8_cast_bf16.py), which every accelerator here can serve. On "
        "parts with FP8 (Hopper H20/H800/H100, Ada L20/L40S), asking for FP8 serves the "
        "release as it is, with half the weight memory. A100 and Ascend 910B have no FP8 but "
        "can serve INT8 (W8A8) weights, also with half the weight memory: SGLang runs the "
        "channel-wise INT8 weights on 2 servers of 8 A100s, and MindIE or vllm-ascend run "
        "msModelSlim's W8A8 weights on 2 servers of 8 910Bs, one or two servers fewer than in "
        "BF16; ask again with INT8 precision for that plan.",
    },
    "moe_framework": {
        "zh": "MoE 训练：Hugging Face Trainer、LLaMA-Factory、ms-swift（swift sft）和 DeepSpeed "
        "逐个专家循环做小矩阵乘（ZeRO-3 还要逐个专家收集权重），利用率只有同等稠密模型的约 "
        "{loop:.0%}（ZeRO-3 约 {zero3:.0%}），耗时与费用已按此估算。改用 Megatron-SWIFT"
        "（megatron sft）或 Megatron-LM 并开启专家并行，ms-swift 实测 MoE 训练快约 10 倍。",
        "en": "MoE training: Hugging Face Trainer, LLaMA-Factory, ms-swift (swift sft) and "
        "DeepSpeed loop over the experts one small matmul at a time (and ZeRO-3 gathers each "
        "expert separately), reaching about {loop:.0%} of a dense model's utilization "
        "({zero3:.0%} under ZeRO-3); time and cost are estimated that way. Use Megatron-SWIFT "
        "(megatron sft) or Megatron-LM with expert parallelism instead: ms-swift measures MoE "
        "training about 10x faster.",
    },
    "dedicated": {
        "zh": "百亿参数以上的预训练建议直接联系云厂商销售，定制专属集群（RDMA 网络、并行存储、"
        "包年折扣）。",
        "en": "For 100B+ pretraining, talk to the provider's sales about a dedicated cluster "
        "(RDMA fabric, parallel storage, committed-use discounts).",
    },
    "preprocess": {
        "zh": "数据预处理无需 GPU：选高主频计算型或大内存型 CPU 实例，数据放对象存储，"
        "用高 IOPS 云盘{disks_zh}做中间结果。",
        "en": "Preprocessing needs no GPU: use compute- or memory-optimized CPU instances, keep "
        "data in object storage and use high-IOPS disks{disks_en} for intermediates.",
    },
    "unpriced": {
        "zh": "部分方案没有可核实的公开价格（显示为未知），请以控制台或询价 API 为准。",
        "en": "Some options have no verifiable public price (shown as unknown); check the "
        "console or the price API.",
    },
    "stale_prices": {
        "zh": "价格来自公开刊例价快照，可能已过时；可配置实时价格或折扣覆盖。",
        "en": "Prices come from public list-price snapshots and may be stale; enable live "
        "prices or operator overrides.",
    },
}


@dataclass(slots=True)
class AdviceContext:
    """What the advice depends on: the workload and the chosen options (built once per
    answer and only read: not frozen, whose ``__init__`` costs three times as much)."""

    kind: str
    params_b: float
    interruptible: bool
    uses_spot: bool
    multi_node: bool
    accelerators: frozenset[str]
    ascend: bool
    unpriced: bool
    snapshot_prices: bool
    vcpus: int
    ram_gib: float
    disk_gib: float
    checkpoint_interval_h: float
    providers: tuple[str, ...] = ()
    """The clouds of the options, in the answer's order (the storage products named)."""
    single_stream_target: float | None = None
    """Serving with a throughput target at concurrency 1: the target, met only by adding
    replicas (each decodes one sequence at a time)."""
    precision: str = "bf16"
    """The job's weight format: a serving job already in FP8/INT8/INT4 is not told to
    quantize."""
    moe_expert_loop: bool = False
    """Training a MoE under a trainer that runs the Hugging Face expert loop
    (:data:`service.sizing.moe.EXPERT_LOOP_FRAMEWORKS`)."""
    release_fp8: str | None = None
    """Serving in 16 bits a model released in FP8 only: its display name."""
    image_loader: bool = False
    """Training an image model whose JPEG pipeline sets the host's vCPUs
    (:func:`service.sizing.host.loader_vcpus_per_device`): 8-16 per accelerator."""
    engine: str | None = None
    """Serving: the engine asked for (the Ascend caveat follows it)."""
    has_options: bool = True
    """False for an answer without options: no "here"/"本方案" figures then (the host
    figures are for one device, not for a machine the answer proposes)."""
    encoder: bool = False
    """Serving an encoder-only model: one forward pass per batch, no decode and no KV
    cache to watch."""
    image_serving: bool = False
    """Serving an image model (diffusion, CNN, ViT): images in and out, no tokens and no
    KV cache (review 8)."""
    batch: bool = False
    """Serving a fixed number of output tokens: an offline batch job, released when done
    (no autoscaling, no latency to keep)."""


def build_advice(
    ctx: AdviceContext, lang: Lang, memo: dict[tuple[object, ...], Advice] | None = None
) -> list[Advice]:
    """The advice for ``ctx`` in ``lang`` (``memo``: pieces already written, by topic,
    language and the figures they show — answers of one class share most of them)."""
    if memo is None:
        return [_advice(t, lang, kw) for t, kw in _topics(ctx)]
    advice = []
    for topic, kw in _topics(ctx):
        key = (topic, lang, *kw.values())
        piece = memo.get(key)
        if piece is None:
            piece = memo[key] = _advice(topic, lang, kw)
        advice.append(piece)
    return advice


STORAGE_NAMES: dict[str, tuple[str, str, str | None]] = {
    # https://www.alibabacloud.com/help/id/cpfs/bmcpfs/user-guide/cpfs-for-lingjun-data-flow-overview
    # (CPFS for Lingjun moves data to and from OSS buckets for training jobs)
    "alibaba": ("OSS", "CPFS", "ESSD PL2/PL3"),
    # https://cloud.tencent.com/document/product/851/104893 (CFS: "the Turbo series ... is
    # more suitable for high-performance computing scenarios in AI")
    "tencent": ("COS", "CFS Turbo", None),
    # https://support.huaweicloud.com/intl/en-us/usermanual-sfs/sfs_01_0334.html (SFS Turbo
    # in front of OBS buckets "in scenarios like AI training and inference")
    "huawei": ("OBS", "SFS Turbo", None),
    # https://volcengine.com/docs/6645/1524288 (vePFS, Volcano Engine's parallel file
    # system, measured for AI training against 3FS)
    "volcengine": ("TOS", "vePFS", None),
}
"""Each cloud's object storage, parallel file system for training data and, where its
name is the advice's, its high-IOPS disk class: the storage advice names the products of
the clouds its options are on (review 10 words: CPFS, Alibaba's, on Huawei-only answers)."""


def storage_names(providers: tuple[str, ...]) -> dict[str, str]:
    """The storage sentence's product names for options on ``providers`` (every cloud's
    when none: an answer without options, or a cloud without an entry)."""
    known = list(dict.fromkeys(p for p in providers if p in STORAGE_NAMES)) or list(STORAGE_NAMES)
    disks = [d for p in known if (d := STORAGE_NAMES[p][2]) is not None]
    return {
        "objects": "/".join(STORAGE_NAMES[p][0] for p in known),
        "pfs": "/".join(STORAGE_NAMES[p][1] for p in known),
        "disks_zh": f"（{'/'.join(disks)}）" if disks else "",
        "disks_en": f" ({'/'.join(disks)})" if disks else "",
    }


STORAGE_ADVICE_GIB = 200.0
"""Data disk from which a job's advice says how to store its data (preprocessing always
does)."""


def storage_shown(kind: str, disk_gib: float) -> bool:
    """Whether the advice of a ``kind`` job on ``disk_gib`` has the storage piece, the only
    one that shows the disk: below :data:`STORAGE_ADVICE_GIB` the disk does not change the
    advice, which is what lets answers at other lengths share it."""
    return disk_gib >= STORAGE_ADVICE_GIB or kind == "preprocess"


def _advice(text: str, lang: Lang, values: dict[str, object]) -> Advice:
    """One piece: the sentence ``text`` in ``lang`` under its stable topic."""
    return Advice(topic=_TOPIC.get(text, text), text=_TEXT[text][lang].format(**values))


def _topics(ctx: AdviceContext) -> list[tuple[str, dict[str, object]]]:
    """The topics that apply, each with the figures its sentence shows."""
    topics: list[tuple[str, dict[str, object]]] = []
    training = ctx.kind in ("pretrain", "finetune", "rlhf")
    serving = ctx.kind == "inference"
    names = storage_names(ctx.providers)
    if ctx.kind == "preprocess":
        topics.append(
            ("preprocess", {"disks_zh": names["disks_zh"], "disks_en": names["disks_en"]})
        )
    else:
        topics.append(_cpu_ratio(ctx, serving))
    if storage_shown(ctx.kind, ctx.disk_gib):
        storage = "storage_serving" if serving else "storage"
        if ctx.kind == "preprocess":
            storage = "storage_preprocess"
        topics.append((storage, {"disk": ctx.disk_gib, **names}))
    if training:
        if ctx.interruptible:
            topics.append(("spot", {"interval": ctx.checkpoint_interval_h}))
        else:
            topics.append(("no_spot", {}))
    if ctx.kind != "preprocess":
        suffix = "_ascend" if _ascend_only(ctx) else ""
        topics.append((f"containers{suffix}", {}))
        role = ("_encoder" if ctx.encoder else "_serving") if serving else ""
        if serving and ctx.image_serving:
            role = "_image_serving"  # batches, no KV cache, no engine (review 10 S7c4)
        topics.append((f"monitoring{suffix}{role}", {}))
    if serving and ctx.single_stream_target is not None and not (ctx.encoder or ctx.image_serving):
        topics.append(("concurrency", {"target": ctx.single_stream_target}))
    if ctx.ascend:
        topics.append((_ascend_topic(ctx, serving), {}))
    limited = sorted(ctx.accelerators & SUPPLY_LIMITED)
    if limited:
        topics.append(("supply", {"names": "/".join(limited)}))
    if ctx.multi_node and training:
        topics.append(("multi_node", {}))
    elif ctx.multi_node and ctx.kind == "preprocess":
        topics.append(("sharding", {}))
    if serving:
        topics.append(_serving(ctx))
    if serving and ctx.release_fp8 is not None and ctx.precision in ("bf16", "fp16"):
        topics.append(("release_fp8", {"model": ctx.release_fp8}))
    if training and ctx.moe_expert_loop:
        topics.append(("moe_framework", {"loop": EXPERT_LOOP_FACTOR, "zero3": _ZERO3_MOE}))
    if ctx.kind == "pretrain" and ctx.params_b >= 100:
        topics.append(("dedicated", {}))
    if ctx.unpriced:
        topics.append(("unpriced", {}))
    if ctx.snapshot_prices:
        topics.append(("stale_prices", {}))
    return topics


def _serving(ctx: AdviceContext) -> tuple[str, dict[str, object]]:
    """The serving practice of the job's kind: autoscaling for online serving only (an
    offline batch job is released when done), quantization in the words of its format."""
    batch = "_batch" if ctx.batch else ""
    if ctx.precision == "fp8" and _ascend_only(ctx):
        # Ascend has no FP8 units (the registry's ``supports_fp8``): its quantized route is
        # msModelSlim's W8A8, which the Ascend sentence names (review 11s V8)
        return ("serving_batch_ascend" if ctx.batch else "serving_ascend"), {}
    if ctx.precision in QUANTIZED:
        return f"serving{batch}_quantized", {"precision": ctx.precision.upper()}
    if ctx.image_serving:
        if ctx.batch:
            return "serving_batch_images", {}
        return ("serving_images_ascend" if _ascend_only(ctx) else "serving_images"), {}
    if _ascend_only(ctx):
        return ("serving_batch_ascend" if ctx.batch else "serving_ascend"), {}
    if ctx.batch:
        return "serving_batch", {}
    return ("serving_encoder" if ctx.encoder else "serving"), {}


_TOPIC = {
    "cpu_ratio_any": "cpu_ratio",
    "cpu_ratio_images": "cpu_ratio",
    "cpu_ratio_images_any": "cpu_ratio",
    "cpu_ratio_serving": "cpu_ratio",
    "cpu_ratio_serving_any": "cpu_ratio",
    "storage_serving": "storage",
    "storage_preprocess": "storage",
    "monitoring_serving": "monitoring",
    "monitoring_ascend": "monitoring",
    "monitoring_ascend_serving": "monitoring",
    "monitoring_encoder": "monitoring",
    "monitoring_image_serving": "monitoring",
    "cpu_ratio_image_serving": "cpu_ratio",
    "cpu_ratio_image_serving_any": "cpu_ratio",
    "serving_images": "serving",
    "serving_images_ascend": "serving",
    "monitoring_ascend_encoder": "monitoring",
    "monitoring_ascend_image_serving": "monitoring",
    "cpu_ratio_encoder": "cpu_ratio",
    "cpu_ratio_encoder_any": "cpu_ratio",
    "containers_ascend": "containers",
    "serving_quantized": "serving",
    "serving_batch": "serving",
    "serving_batch_quantized": "serving",
    "serving_batch_ascend": "serving",
    "serving_batch_images": "serving",
    "serving_encoder": "serving",
    "release_fp8": "precision",
    "serving_ascend": "serving",
    "ascend_mindie": "ascend",
    "ascend_serving": "ascend",
}
"""Texts that are variants of one topic: clients group advice by its stable topic."""


def _ascend_only(ctx: AdviceContext) -> bool:
    return bool(ctx.accelerators) and all(a.startswith("Ascend") for a in ctx.accelerators)


def _ascend_topic(ctx: AdviceContext, serving: bool) -> str:
    """The Ascend caveat that follows the stack (review 4 F14): :func:`ascend_caveat` of
    the job."""
    return ascend_caveat(serving, ctx.engine, ctx.image_serving)


def ascend_caveat(serving: bool, engine: str | None, images: bool = False) -> str:
    """The text key of the Ascend caveat that follows the stack, the advice's and an
    Ascend option's alike: training code, and a served image model, run as PyTorch code
    through torch_npu; MindIE serves its built-in models from the weights, with no user
    code to migrate (MindIE LLM's architecture: "Modeling: 内置模型 ... 支持 Weight 在线
    Tensor 切分加载",
    https://www.hiascend.com/document/detail/zh/mindie/10RC2/mindiellm/llmdev/mindie_llm0000.html);
    vLLM on Ascend is the vllm-ascend plugin, whose recommended quantizer is msModelSlim
    (W8A8, https://docs.vllm.ai/projects/ascend/en/v0.13.0/user_guide/feature_guide/quantization.html)."""
    if not serving or images:
        return "ascend"
    return "ascend_mindie" if engine == "mindie" else "ascend_serving"


def _cpu_ratio(ctx: AdviceContext, serving: bool) -> tuple[str, dict[str, object]]:
    """The CPU:accelerator rule, in serving words for an inference job (no data loader:
    the CPUs tokenize and run the HTTP front end), with this answer's figures only when it
    proposes a machine."""
    text = ("cpu_ratio_encoder" if ctx.encoder else "cpu_ratio_serving") if serving else "cpu_ratio"
    if serving and ctx.image_serving:
        text = "cpu_ratio_image_serving"
    if ctx.image_loader and not serving:
        text = "cpu_ratio_images"
    dev = "NPU" if _ascend_only(ctx) else "GPU"  # an NPU answer's words (session 11 W3)
    if not ctx.has_options:
        return f"{text}_any", {"dev": dev}
    return text, {"vcpus": ctx.vcpus, "ram": ctx.ram_gib, "dev": dev}
