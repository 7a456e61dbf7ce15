"""Localized sentences for options (reasons, warnings) and the one-line summary.

Chatbots read these to people as they are, so every sentence is complete, names its
numbers with units, and exists in Chinese and English.
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from service.catalog.capabilities import SM75_ENGINES
from service.catalog.models import HOURS_PER_MONTH
from service.catalog.price_model import borrowed
from service.planning.candidates import Candidate, Cheapest
from service.planning.cost import (
    CHECKPOINT_INTERVAL_H,
    RESTART_H,
    SPOT_INTERRUPTIONS_PER_HOUR,
    money_text,
    ranked_money_scale,
)
from service.planning.schema import Lang, Objective
from service.planning.width import MIN_OPTIMIZER_STEPS
from service.sizing.batch import (
    BATCHED_JOB,
    BATCHED_ROOM,
    BATCHED_TARGET,
    ENCODER_BATCH_ROOM,
    ENCODER_BATCH_TARGET,
)
from service.sizing.host import LOADER_VCPUS_PER_DEVICE_MIN
from service.sizing.replicas import copies_sentence

_T: dict[str, dict[Lang, str]] = {
    "fits": {
        "zh": "显存够用：每卡需 {need:.1f} GiB，单卡显存 {have:g} GiB，余量 {head:.1f} GiB{how}。",
        "en": "Fits: {need:.1f} GiB needed per device of {have:g} GiB, {head:.1f} GiB "
        "headroom{how}.",
    },
    "fits_high": {
        "zh": "按安全余量要求，以估算区间上限 {high:.1f} GiB 校核显存，仍放得下。",
        "en": "Because a safety headroom was asked for, the fit was also checked against the "
        "high end of the estimate's range, {high:.1f} GiB, and holds.",
    },
    "tp": {"zh": "张量并行 {tp}", "en": "tensor parallel {tp}"},
    "pp": {"zh": "流水线并行 {pp}", "en": "pipeline parallel {pp}"},
    "multi_node": {
        "zh": "{n} 台节点通过 {net} 互联（共 {d} 卡）。",
        "en": "{n} nodes over {net} ({d} devices in total).",
    },
    "node_network": {
        "zh": "节点间网络每台 {gbps:g} Gbit/s（每卡 {per:g} Gbit/s）：时间已计入数据并行/{shard}"
        "通信中计算掩盖不了的部分。",
        "en": "The network between nodes carries {gbps:g} Gbit/s per node ({per:g} Gbit/s per "
        "accelerator): the time includes the data-parallel/{shard} traffic the computation "
        "cannot hide.",
    },
    "node_network_assumed": {
        "zh": "该规格未公布节点间网络带宽，按每卡 {per:g} Gbit/s（每台 {gbps:g} Gbit/s，"
        "各云已公布的 GPU 服务器 RDMA 带宽中的最低值）估算："
        "时间已计入数据并行/{shard}通信中计算掩盖不了的部分。",
        "en": "No network figure is published for this type: {per:g} Gbit/s per accelerator "
        "({gbps:g} Gbit/s per node, the slowest RDMA a cloud here publishes for its GPU "
        "servers) is assumed, and the time includes the data-parallel/{shard} "
        "traffic the computation cannot hide.",
    },
    "spans_servers": {
        "zh": "单台服务器的 {per} 张 {mem:g} GiB 加速卡放不下该模型及其 KV 缓存，"
        "每个副本用 {engine} 跨 {pp} 台服务器部署（共 {d} 卡）："
        "服务器内张量并行 {per}，服务器间 {pp} 级流水线并行{guide}。"
        "各级流水线在每个 token 上依次计算，一个副本的解码速度约为一台服务器的速度；"
        "服务器之间传递的激活未计入。",
        "en": "One server's {per} accelerators of {mem:g} GiB cannot hold the model with its "
        "KV cache, so each "
        "{engine} replica spans {pp} servers ({d} accelerators): tensor parallel {per} within "
        "a server and {pp} pipeline stages across servers{guide}. The stages work in turn on "
        "every token, so a replica decodes at about one server's rate; the activations "
        "passed between servers are not counted.",
    },
    "spans_servers_one": {
        "zh": "单台服务器的 1 张 {mem:g} GiB 加速卡放不下该模型及其 KV 缓存，"
        "每个副本用 {engine} 跨 {pp} 台服务器部署（每台 1 卡）："
        "{pp} 级流水线并行，每台一级{guide}。各级流水线"
        "在每个 token 上依次计算，一个副本的解码速度约为一张卡的速度；服务器之间传递的激活未计入。",
        "en": "One server's single {mem:g} GiB accelerator cannot hold the model with its "
        "KV cache, so each "
        "{engine} replica spans {pp} servers, one pipeline stage on each{guide}. The stages "
        "work in turn on every token, so a replica decodes at about one accelerator's rate; "
        "the activations passed between servers are not counted.",
    },
    "span_vllm_guide": {
        "zh": "（vLLM 分布式推理指南部署单机放不下的模型的做法）",
        "en": ", as vLLM's distributed serving guide deploys a model larger than one node",
    },
    "span_replicas": {
        "zh": "{r} 个这样的副本并行服务，共 {n} 台服务器。",
        "en": "{r} such replicas serve side by side, {n} servers in all.",
    },
    "span_network": {
        "zh": "服务器之间通过 {net} 互联（每台 {gbps:g} Gbit/s），承载流水线各级之间的激活。",
        "en": "The servers connect over {net} ({gbps:g} Gbit/s per server), which carries the "
        "activations between pipeline stages.",
    },
    "span_network_unstated": {
        "zh": "服务器之间通过 {net} 互联（带宽未公布），承载流水线各级之间的激活。",
        "en": "The servers connect over {net} (no bandwidth published), which carries the "
        "activations between pipeline stages.",
    },
    "span_no_rdma": {
        "zh": "目录未标明该规格有 RDMA 网络：流水线各级之间的激活只能走普通 VPC 网络，每个 token "
        "都会多出网络延迟，上面的速度未计入。建议选有 RDMA 或 eRDMA 的规格，或先向云厂商确认网络。",
        "en": "The catalog lists no RDMA network for this type: the pipeline stages would pass "
        "activations between servers over the ordinary VPC network, adding network latency "
        "to every token that the rate here does not count. Prefer a type with RDMA or eRDMA, "
        "or confirm the network with the provider first.",
    },
    "framework_limit": {"zh": "{limit}。", "en": "{limit}."},
    "cpu_fit": {
        "zh": "CPU 方案：{n} 台共 {v} vCPU、{m:g} GiB 内存，"
        "满足约 {need_v} vCPU / {need_m:.0f} GiB 的需求。",
        "en": "CPU-only: {nodes} with {v} vCPUs and {m:g} GiB RAM in total cover the "
        "~{need_v} vCPUs / {need_m:.0f} GiB needed.",
    },
    "single_server": {
        "zh": "仅限单台服务器：目录未能确认 {type} 的服务器之间有 RDMA（RoCE/InfiniBand）网络，"
        "因此方案不跨多台服务器；若云厂商以 RDMA 集群出售该规格，多机可大幅缩短耗时，请向其确认。",
        "en": "Single server only: the catalog does not confirm RDMA (RoCE/InfiniBand) between "
        "servers of {type}, so the plan does not spread over several of them; if the cloud "
        "sells it as an RDMA cluster, several servers would cut the time a lot: ask it.",
    },
    "long_on_demand": {
        "zh": "按量计费约 {days:.0f} 天：这么长的任务，包月或包年通常明显更便宜，请向云厂商询价。",
        "en": "About {days:.0f} days on demand: for a job this long, monthly or yearly billing "
        "is usually much cheaper; ask the cloud for a subscription quote.",
    },
    "hidden_spot": {
        "zh": "另有 {n} 个竞价实例报价未列出：竞价价格在出价时才确定、没有公开价，"
        "只能按不高于按量价格估算；按上限计算再加上被回收的损失，不会比同机型按量更便宜。实际竞价价格常低得多，请在控制台查询。",
        "en": "Spot offers not listed: {n}. Spot prices are set when you bid and are not "
        "published, so they can only be estimated at up to the on-demand price, and at that "
        "price plus the cost of reclaims they are never cheaper than the same type on "
        "demand. Actual spot prices are often far lower: check the console.",
    },
    "rank_outdated_engine": {
        "zh": "排在 {engine} 当前版本能运行的加速卡之后：{engine} 自 0.11 起只有 V1 引擎，"
        "不支持 {acc}（Volta），只能固定使用 0.11 之前、已不再维护的旧版本。",
        "en": "Ranked after the accelerators {engine}'s current release runs on: since 0.11 "
        "{engine} has only its V1 engine, which does not run on {acc} (Volta), so serving "
        "there pins an unmaintained release before 0.11.",
    },
    "rank_no_tensor_cores": {
        "zh": "排在有 Tensor Core 的加速卡之后：{acc}（Pascal 架构）能运行 PyTorch 流水线，"
        "但 16 位运算只能用 CUDA 核心，每张图要慢得多。",
        "en": "Ranked after the accelerators with tensor cores: {acc} (Pascal) runs the "
        "PyTorch pipeline, but on its CUDA cores only, so each image takes far longer.",
    },
    "engine_budget_edge": {
        "zh": "{engine} 默认占用每张卡的 gpu_memory_utilization {f:g}（{budget:.1f} GiB），"
        "用于权重、激活和 KV 缓存池：本方案需要其中 {need:.1f} GiB，只剩 {spare:.1f} GiB，"
        "KV 缓存池仅够计划的并发，没有余量。",
        "en": "{engine} takes gpu_memory_utilization {f:g} of each card ({budget:.1f} GiB) for "
        "weights, activations and its KV-cache pool: this plan needs {need:.1f} GiB of it, "
        "leaving {spare:.1f} GiB, so the pool holds about the planned batch and no more.",
    },
    "engine_budget_edge_encoder": {
        "zh": "{engine} 默认占用每张卡的 gpu_memory_utilization {f:g}（{budget:.1f} GiB），"
        "用于权重与前向激活（编码模型没有 KV 缓存）：本方案需要其中 {need:.1f} GiB，"
        "只剩 {spare:.1f} GiB，计划的批量已接近其中能容纳的上限。",
        "en": "{engine} takes gpu_memory_utilization {f:g} of each card ({budget:.1f} GiB) for "
        "the weights and the forward pass's activations (an encoder keeps no KV cache): this "
        "plan needs {need:.1f} GiB of it, leaving {spare:.1f} GiB, so the planned batch is "
        "about the most it holds.",
    },
    "engine_budget_over": {
        "zh": "{engine} 默认只占用每张卡的 gpu_memory_utilization {f:g}（{budget:.1f} GiB），"
        "本方案需要 {need:.1f} GiB：启动时须把 gpu_memory_utilization 调到 {raise_to:g} 以上。",
        "en": "{engine} takes only gpu_memory_utilization {f:g} of each card ({budget:.1f} GiB) "
        "by default and this plan needs {need:.1f} GiB: start it with gpu_memory_utilization "
        "of at least {raise_to:g}.",
    },
    "hidden_spot_shown": {
        "zh": "竞价实例未参与排名的报价共 {n} 个：竞价价格在出价时才确定、没有公开价，"
        "只能估算为按量价格的一个区间，按区间上限计不会比按量便宜。任务可中断，因此最后一项列出其中最好的一个竞价方案及其估算区间；实际竞价价格常低得多，请在控制台查询。",
        "en": "Spot offers not ranked: {n}. Spot prices are set when you bid and are not "
        "published, so they are estimated as a range up to the on-demand price, and at its "
        "top they are never cheaper than on demand. The job is interruptible, so the last "
        "option is the best spot one with its estimated range: actual spot prices are "
        "often far lower, check the console.",
    },
    "spot_shown": {
        "zh": "列在最后：任务可中断，竞价是这类离线任务的常用选择；"
        "按估算区间上限（按量价格）计它不比按量便宜，按区间下限计则便宜得多。",
        "en": "Shown last: the job is interruptible, the usual case for spot; at the top of "
        "its estimated range (the on-demand price) it is no cheaper than on demand, at the "
        "bottom far cheaper.",
    },
    "rank_cost": {
        "zh": "按总费用排序：约 ¥{cost:,.2f}（{dur}）。",
        "en": "Ranked by total cost: about ¥{cost:,.2f} for {dur}.",
    },
    "qlora_fallback": {
        "zh": "昇腾上的 QLoRA：bitsandbytes 的 NF4 在 NPU 上只是 PyTorch 回退实现（AscendC "
        "高性能版本尚未完成），速度可能远低于估算，部分框架还会报错；显存够时建议用 bf16 底座做 "
        "LoRA（必要时用 2 张 NPU）。",
        "en": "QLoRA on Ascend: bitsandbytes runs NF4 on the NPU as a PyTorch fallback (the "
        "AscendC kernels are not finished), so it may run far slower than estimated and some "
        "trainers fail on it; where memory allows, prefer LoRA on a bf16 base (over 2 NPUs if "
        "needed).",
    },
    "fixed_time": {
        "zh": "耗时含每次任务约 {minutes:.0f} 分钟固定开销（启动并初始化节点、读取起始检查点、"
        "保存结果），每台节点都按此计费。",
        "en": "The time includes about {minutes:.0f} min fixed per job (starting and "
        "bootstrapping the nodes, reading the starting checkpoint, saving the result), billed "
        "on every node.",
    },
    "rank_hourly": {
        "zh": "按每小时价格排序：¥{price:,.2f}/小时。",
        "en": "Ranked by hourly price: ¥{price:,.2f}/h.",
    },
    "rank_per_million_training": {
        "zh": "按每百万训练 tokens 的费用排序：每百万训练 tokens 约 ¥{pmt}（¥{price:,.2f}/小时）。",
        "en": "Ranked by cost per training token: about ¥{pmt} per million training "
        "tokens (¥{price:,.2f}/h).",
    },
    "rank_per_million": {
        "zh": "按每百万 tokens 价格排序：约 ¥{pmt}（¥{price:,.2f}/小时）。",
        "en": "Ranked by price per million tokens: about ¥{pmt} (¥{price:,.2f}/h).",
    },
    "rank_target_hourly": {
        "zh": "每个方案都达到目标吞吐，按每小时价格排序：¥{price:,.2f}/小时"
        "（满载时约 ¥{pmt}/百万 tokens）。",
        "en": "Every option reaches the throughput target, so ranked by hourly price: "
        "¥{price:,.2f}/h (about ¥{pmt} per million tokens at full load).",
    },
    "rank_target_hourly_images": {
        "zh": "每个方案都达到目标吞吐，按每小时价格排序：¥{price:,.2f}/小时"
        "（满载时约 ¥{pmt}/百万张图像）。",
        "en": "Every option reaches the throughput target, so ranked by hourly price: "
        "¥{price:,.2f}/h (about ¥{pmt} per million images at full load).",
    },
    "rank_estimated": {
        "zh": "价格为估算值，排序按其区间上限计（{ranked}），"
        "只有明显更便宜时才排在有报价的方案之前。",
        "en": "Its price is an estimate, so the ranking counts it at the top of its range "
        "({ranked}): it goes ahead of a quoted price only when clearly cheaper.",
    },
    "ranked_total": {"zh": "总费用约 ¥{cost:,.2f}", "en": "about ¥{cost:,.2f} in total"},
    "ranked_hourly": {"zh": "¥{price:,.2f}/小时", "en": "¥{price:,.2f}/h"},
    "ranked_per_million": {
        "zh": "约 ¥{pmt}/百万 tokens",
        "en": "about ¥{pmt} per million tokens",
    },
    "rank_time": {
        "zh": "按耗时排序：约 {dur}。",
        "en": "Ranked by time: about {dur}.",
    },
    "width_bound": {
        "zh": "再加服务器也不会更快：这次{what}每 {batch} 条序列更新一次参数{why}，{replicas} 个"
        "数据并行副本已是这个全局批量能容纳的上限；再扩大只会改变训练配方，而不会缩短时间。",
        "en": "More servers would not make it faster: this {what} takes an optimizer step "
        "every {batch} sequences{why}, and {replicas} data-parallel replicas are as many as "
        "that global batch has room for; going wider would change the training recipe, not "
        "shorten it.",
    },
    "width_bound_short": {
        "zh": "（这次训练的数据不多，仍需约 {steps} 个优化步）",
        "en": " (a run this short still needs about {steps} optimizer steps)",
    },
    "rank_throughput": {
        "zh": "按解码吞吐排序（最快优先）：约 {tps:,.0f} tokens/秒。",
        "en": "Ranked by decode throughput (fastest first): about {tps:,.0f} tokens/s.",
    },
    "rank_balanced_fast": {
        "zh": "{what}比最低（{cheapest}）高出不到 {pct}%，因此按耗时排序、最快优先：估算本身的误差"
        "范围分不清这么接近的费用。",
        "en": "Within {pct} % of the cheapest {what} ({cheapest}), so ranked by time, fastest "
        "first: the estimate's own range cannot tell costs that close apart.",
    },
    "rank_balanced_throughput": {
        "zh": "{what}比最低（{cheapest}）高出不到 {pct}%，因此按吞吐排序、最高优先：估算本身的误差"
        "范围分不清这么接近的费用。",
        "en": "Within {pct} % of the cheapest {what} ({cheapest}), so ranked by throughput, "
        "highest first: the estimate's own range cannot tell costs that close apart.",
    },
    "rank_balanced_over": {
        "zh": "{what}比最低（{cheapest}）高出 {pct}% 以上：排在差距之内的方案之后，按费用排序。",
        "en": "More than {pct} % above the cheapest {what} ({cheapest}): ranked by cost after "
        "the options within that margin.",
    },
    "balanced_own_training": {
        "zh": "本方案每百万训练 tokens 约 ¥{pmt}（¥{price:,.2f}/小时）。",
        "en": "This one: about ¥{pmt} per million training tokens (¥{price:,.2f}/h).",
    },
    "cheapest_total": {"zh": "总费用", "en": "total"},
    "cheapest_per_million": {"zh": "每百万 tokens 价格", "en": "price per million tokens"},
    "cheapest_per_million_images": {"zh": "每百万张图像价格", "en": "price per million images"},
    "cheapest_per_million_training": {
        "zh": "每百万训练 tokens 费用",
        "en": "cost per million training tokens",
    },
    "cheapest_hourly": {"zh": "每小时价格", "en": "hourly price"},
    "money": {"zh": "¥{money}", "en": "¥{money}"},
    "money_hourly": {"zh": "¥{money:,.2f}/小时", "en": "¥{money:,.2f}/h"},
    "serving": {
        "zh": "解码吞吐约 {tps:,.0f} tokens/秒，约 ¥{pmt} / 百万 tokens。",
        "en": "Decode throughput about {tps:,.0f} tokens/s, about ¥{pmt} per million tokens.",
    },
    "image_batch": {
        "zh": "按每次调用 {n} 张图像计算（由服务端把请求合批，如 Triton 动态批处理或 "
        "TorchServe 的 batch_size）；逐张处理时每张卡每秒只有约 {one:.0f} 张，受内核启动开销限制。",
        "en": " Sized at {n} images per call, the server batching requests (Triton's dynamic "
        "batcher, TorchServe's batch_size); one image at a time, a card serves only about "
        "{one:.0f} per second, bound by launching the network's kernels.",
    },
    "per_request": {
        "zh": "在 {n:,} 个并发请求下，每个请求约 {per:,.1f} tokens/秒"
        "（约每 {ms:,.0f} 毫秒一个 token）。",
        "en": " At {n:,} concurrent requests, each sees about {per:,.1f} tokens/s (a token every "
        "{ms:,.0f} ms or so).",
    },
    "shared_concurrency": {
        "zh": "单台服务器装不下 {total:,} 个并发请求的 KV 缓存，但装得下 {b:,} 个：{n} 台服务器"
        "各运行一份模型、各服务其中约 {b:,} 个请求，前面用负载均衡分发（服务器之间没有通信，"
        "不像跨服务器的流水线那样每个 token 都要经过各台）。",
        "en": "One server cannot hold the KV cache of {total:,} concurrent requests, but it "
        "holds {b:,}: {n} servers each run their own copy of the model for about {b:,} of "
        "them, behind a load balancer (no traffic between the servers, unlike a pipeline "
        "across them that every token passes through).",
    },
    "per_request_servers": {
        "zh": "每台服务器 {n:,} 个并发请求（共 {total:,} 个）时，每个请求约 {per:,.1f} tokens/秒"
        "（约每 {ms:,.0f} 毫秒一个 token）。",
        "en": " At {n:,} concurrent requests per server ({total:,} in all), each sees about "
        "{per:,.1f} tokens/s (a token every {ms:,.0f} ms or so).",
    },
    "per_request_replicas": {
        "zh": "每个副本 {n:,} 个并发请求（共 {total:,} 个）时，每个请求约 {per:,.1f} tokens/秒"
        "（约每 {ms:,.0f} 毫秒一个 token）。",
        "en": " At {n:,} concurrent requests per replica ({total:,} in all), each sees about "
        "{per:,.1f} tokens/s (a token every {ms:,.0f} ms or so).",
    },
    "serving_unpriced": {
        "zh": "解码吞吐约 {tps:,.0f} tokens/秒。",
        "en": "Decode throughput about {tps:,.0f} tokens/s.",
    },
    "imaging": {
        "zh": "每秒约处理 {rate} 张图像{every}，每百万张约 ¥{pmt}。",
        "en": "About {rate} images per second{every}, about ¥{pmt} per million images.",
    },
    "imaging_unpriced": {
        "zh": "每秒约处理 {rate} 张图像{every}。",
        "en": "About {rate} images per second{every}.",
    },
    "rank_per_million_images": {
        "zh": "按每百万张图像的价格排序：约 ¥{pmt}（¥{price:,.2f}/小时）。",
        "en": "Ranked by price per million images: about ¥{pmt} (¥{price:,.2f}/h).",
    },
    "ranked_per_million_images": {
        "zh": "约 ¥{pmt}/百万张图像",
        "en": "about ¥{pmt} per million images",
    },
    "rank_images_throughput": {
        "zh": "按图像吞吐排序（最快优先）：每秒约 {rate} 张图像{every}。",
        "en": "Ranked by image throughput (fastest first): about {rate} images per second{every}.",
    },
    "encoding": {
        "zh": "每秒编码约 {sps:,.0f} 条序列（{tps:,.0f} tokens/秒），约 ¥{pmt} / 百万 tokens。",
        "en": "About {sps:,.0f} sequences per second encoded ({tps:,.0f} tokens/s), about "
        "¥{pmt} per million tokens.",
    },
    "encoder_target": {
        "zh": "目标 {tps:,.0f} tokens/秒按每秒 {sps:,.0f} 个 {n} tokens 的序列计算（tokens/秒 = "
        "每秒序列数 × context_len）；如果要的是另一个序列速率，请按此换算 target_tokens_per_s。",
        "en": "The target of {tps:,.0f} tokens/s is read as {sps:,.0f} sequences per second of "
        "{n} tokens (tokens/s = sequences per second × context_len); for another sequence "
        "rate, scale target_tokens_per_s accordingly.",
    },
    "encoding_pairs": {
        "zh": "每秒打分的查询–段落对约 {sps:,.0f} 个（{tps:,.0f} tokens/秒），约 ¥{pmt} / 百万 "
        "tokens。",
        "en": "About {sps:,.0f} query–passage pairs scored per second ({tps:,.0f} tokens/s), "
        "about ¥{pmt} per million tokens.",
    },
    "encoder_target_pairs": {
        "zh": "目标 {tps:,.0f} tokens/秒按每秒打分的查询–段落对 {sps:,.0f} 个、每对 {n} tokens "
        "计算（tokens/秒 = 每秒打分的对数 × context_len）；如果要的是另一个打分速率，请按此换算 "
        "target_tokens_per_s。",
        "en": "The target of {tps:,.0f} tokens/s is read as {sps:,.0f} query–passage pairs "
        "scored per second of {n} tokens each (tokens/s = pairs per second × context_len); "
        "for another scoring rate, scale target_tokens_per_s accordingly.",
    },
    "encoding_pairs_unpriced": {
        "zh": "每秒打分的查询–段落对约 {sps:,.0f} 个（{tps:,.0f} tokens/秒）。",
        "en": "About {sps:,.0f} query–passage pairs scored per second ({tps:,.0f} tokens/s).",
    },
    "rank_encoding_pairs": {
        "zh": "按打分吞吐排序（最快优先）：每秒打分的查询–段落对约 {sps:,.0f} 个。",
        "en": "Ranked by scoring throughput (fastest first): about {sps:,.0f} query–passage "
        "pairs scored per second.",
    },
    "encoding_unpriced": {
        "zh": "每秒编码约 {sps:,.0f} 条序列（{tps:,.0f} tokens/秒）。",
        "en": "About {sps:,.0f} sequences per second encoded ({tps:,.0f} tokens/s).",
    },
    "rank_encoding": {
        "zh": "按编码吞吐排序（最快优先）：每秒约 {sps:,.0f} 条序列。",
        "en": "Ranked by encoding throughput (fastest first): about {sps:,.0f} sequences per "
        "second.",
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
        "zh": "没有可核实的公开价格：请向云厂商询价后再决定。",
        "en": "No verifiable public price: ask the provider for a quote before deciding.",
    },
    "low_confidence": {
        "zh": "目录可信度{conf}：{why}，下单前请在控制台核对（原注见机型目录）。",
        "en": "Catalog confidence {conf}: {why}; check them in the console before ordering "
        "(the cataloguer's notes are in the provider's instance-type catalog).",
    },
    "ascend": {
        "zh": "昇腾 NPU 需要 CANN 迁移（torch_npu），非 CUDA 环境。",
        "en": "Ascend NPU: needs CANN migration (torch_npu), not CUDA.",
    },
    "megatron_on_ascend": {
        "zh": "Megatron-LM 依赖 CUDA，不能直接在昇腾 NPU 上运行：请改用 MindSpeed"
        "（为 CANN/torch_npu 适配的 Megatron-LM，张量/流水线并行和分布式优化器相同，"
        "本方案的显存与时间按此估算）。",
        "en": "Megatron-LM needs CUDA and does not run on an Ascend NPU as is: run it through "
        "MindSpeed, Megatron-LM adapted to CANN and torch_npu, with the same tensor/pipeline "
        "layouts and distributed optimizer this plan is sized for.",
    },
    "ascend_mindie": {
        "zh": "昇腾 NPU（CANN，非 CUDA）：MindIE 直接加载权重运行内置模型，"
        "用户代码无需迁移到 torch_npu。",
        "en": "Ascend NPU (CANN, not CUDA): MindIE loads the weights into its built-in models; "
        "no user code is migrated to torch_npu.",
    },
    "ascend_serving": {
        "zh": "昇腾 NPU（CANN，非 CUDA）：用 vllm-ascend 插件或 MindIE 服务，而不是 CUDA 版 vLLM。",
        "en": "Ascend NPU (CANN, not CUDA): serve with the vllm-ascend plugin or MindIE, not "
        "CUDA vLLM.",
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
        "zh": "约 ¥{price:,.2f}/小时{per}，为估算价（非云厂商报价），依据：{basis}；"
        "大致在 ¥{low:,.2f}–¥{high:,.2f}/小时之间，排序按区间上限计。",
        "en": "About ¥{price:,.2f}/h{per}, estimated (not a quote from the cloud) from "
        "{basis}; likely ¥{low:,.2f}–¥{high:,.2f}/h, ranked at the top of that range.",
    },
    "budget_unchecked": {
        "zh": "价格或总费用未知，无法核对是否在 ¥{budget:,.0f} 的预算之内：请先询价。",
        "en": "Its price or total is unknown, so it cannot be checked against your budget of "
        "¥{budget:,.0f}: get a quote first.",
    },
    "regions_unknown": {
        "zh": "可售地域未公开，请在控制台确认。",
        "en": "Regions where it is sold are not published; check the console.",
    },
    "rank_unpriced": {
        "zh": "价格未知：排在所有有价格的方案之后，"
        "按够用的最小配置排序（加速卡最少、显存最小、主机最小）。",
        "en": "Price unknown: ranked after every priced option, smallest sufficient machine "
        "first (fewest accelerators, least accelerator memory, then smallest host).",
    },
    "rank_unpriced_batch": {
        "zh": "价格未知：排在所有有价格的方案之后，按所需卡时排序（批量任务的费用是卡时乘以"
        "每卡每小时价格，价格未知时卡时最少者最省），卡时相同则按够用的最小配置。",
        "en": "Price unknown: ranked after every priced option, fewest accelerator-hours "
        "first (a batch job costs its accelerator-hours times the card's hourly price, so "
        "with the price unknown the fewest cost the least), then the smallest sufficient "
        "machine.",
    },
    "fp16_training": {
        "zh": "{acc} 不支持 BF16：按 FP16 混合精度（带损失缩放）规划，显存相同，用 FP16 峰值算力。",
        "en": "{acc} has no BF16: planned in FP16 mixed precision with loss scaling (same "
        "memory, FP16 peak).",
    },
    "fp16_serving": {
        "zh": "{acc} 不支持 BF16：权重以 FP16 加载（显存相同）；"
        "少数模型在 FP16 下会数值溢出，请先验证输出。",
        "en": "{acc} has no BF16: the weights are served in FP16 (same memory); a few models "
        "overflow in FP16, so check the outputs first.",
    },
    "fp16_serving_upcast": {
        "zh": "{acc} 不支持 BF16：按 FP16 运行，diffusers 此时会把 VAE 升到 FP32 解码"
        "（以防 FP16 溢出），显存按这一更高的需求计算。",
        "en": "{acc} has no BF16: it runs the pipeline in FP16, in which diffusers decodes "
        "the VAE in FP32 (it overflows in FP16); the memory here is sized for that.",
    },
    "volta_engine": {
        "zh": "{acc}（Volta）不被 vLLM 新版 V1 引擎和 FlashAttention-2 支持："
        "请用旧版 vLLM（V0 引擎 + xformers）、LMDeploy 或 TGI，以 FP16 部署。",
        "en": "{acc} (Volta) is not supported by vLLM's V1 engine or FlashAttention-2: serve "
        "with an older vLLM (V0 engine with xformers), LMDeploy or TGI, in FP16.",
    },
    "old_pipeline": {
        "zh": "{acc}（Pascal 架构）没有 Tensor Core（Volta 起才有）：PyTorch 流水线在这张卡上"
        "只能用 CUDA 核心做 16 位运算，比 Volta 及更新的卡慢得多。",
        "en": "{acc} (Pascal) has no tensor cores, which came with Volta: a PyTorch pipeline "
        "runs its 16-bit math on the CUDA cores there, far slower than on Volta or newer.",
    },
    "pipeline_tight": {
        "zh": "显存偏紧：流水线的峰值是权重 {w:.1f} GiB 加上{what} {a:.1f} GiB，连同运行时上下文"
        "共 {need:.1f} GiB，{mem:g} GiB 的卡只剩 {spare:.1f} GiB；PyTorch 缓存分配器和 cuDNN "
        "工作区还会在此之上占用显存。若显存不足，{fix}。",
        "en": "Tight for the pipeline: its peak is {w:.1f} GiB of weights plus {a:.1f} GiB "
        "{what}, {need:.1f} GiB with the runtime context, leaving {spare:.1f} GiB of the "
        "{mem:g} GiB card, and PyTorch's caching allocator and cuDNN's workspaces take "
        "some of that; if it runs out of memory, {fix}.",
    },
    "pipeline_peak_decode": {
        "zh": " VAE 以全分辨率解码一次调用的全部图片所需的",
        "en": "while the VAE decodes a call's images at full resolution",
    },
    "pipeline_peak_unet": {
        "zh": "UNet 一步处理一次调用的全部潜变量所需的",
        "en": "for the UNet's step over a call's latents",
    },
    "pipeline_peak_forward": {
        "zh": "一次调用的全部图片前向计算所需的",
        "en": "for the forward pass over a call's images",
    },
    "pipeline_fix_diffusion": {
        "zh": "可逐张解码（diffusers 的 enable_vae_slicing）或减少每次调用的图片数",
        "en": "decode one image at a time (diffusers' enable_vae_slicing) or send fewer "
        "images per call",
    },
    "pipeline_fix_images": {
        "zh": "可减少每次调用的图片数",
        "en": "send fewer images per call",
    },
    "old_engine": {
        "zh": "{acc} 架构过旧，主流推理引擎（vLLM 需计算能力 7.0 以上）不支持，"
        "只能用通用 PyTorch 推理，速度很慢。",
        "en": "{acc} is older than common inference engines support (vLLM needs compute "
        "capability 7.0+): only plain PyTorch serving, which is slow.",
    },
    "no_flash_attention": {
        "zh": "{acc} 不支持 FlashAttention-2（需 Ampere 及以上）："
        "注意力改用 PyTorch SDPA 或 xformers，速度略慢。",
        "en": "{acc} has no FlashAttention-2 (Ampere or newer): attention falls back to "
        "PyTorch SDPA or xformers, somewhat slower.",
    },
    "checkpoint": {
        "zh": "{name} 是 {m} 的 {scheme} 量化权重：架构按 {m}，显存与吞吐按 {p} 权重估算。",
        "en": "{name} is the {scheme} checkpoint of {m}: its architecture, with memory and "
        "throughput sized for {p} weights.",
    },
    "beyond_positions": {
        "zh": "{m} 的训练上下文为 {p:,} 个位置，每条序列 {n:,} 个 token 超出了它：本回答按所给长度"
        "估算显存与时间，但超出训练长度后的效果没有保证，需要 RoPE 外推（如模型卡支持的 YaRN）"
        "或换用训练上下文更长的模型。",
        "en": "{m} was trained on sequences of up to {p:,} positions; {n:,} tokens per sequence "
        "go beyond that: memory and time are sized for the length asked, but quality past the "
        "trained context is not assured and needs RoPE scaling (such as YaRN, where the model "
        "card supports it) or a model trained on longer sequences.",
    },
    "batched_target": BATCHED_TARGET,
    "batched_room": BATCHED_ROOM,
    "encoder_batch_target": ENCODER_BATCH_TARGET,
    "encoder_batch_room": ENCODER_BATCH_ROOM,
    "batched_job": BATCHED_JOB,
    "int4_no_awq": {
        "zh": "{acc}（Volta，计算能力 7.0）没有 vLLM/SGLang 的 AWQ 算子（需要 7.5 及以上）："
        "AWQ 权重无法加载，请使用 GPTQ 的 INT4 权重（其算子支持 Volta，但比 Ampere 及更新架构上的 "
        "Marlin 慢）。",
        "en": "{acc} (Volta, compute capability 7.0) has no AWQ kernels in vLLM/SGLang (they "
        "need 7.5 or newer): an AWQ checkpoint will not load; serve a GPTQ INT4 checkpoint (its "
        "kernels run on Volta, slower than Marlin on Ampere and newer).",
    },
    "kernels_unverified": {
        "zh": "{acc} 上的量化推理算子未经核实，请先确认所用引擎支持该量化格式。",
        "en": "Quantized kernels on {acc} are not verified here; confirm that your engine "
        "supports this format on it first.",
    },
    "no_bandwidth": {
        "zh": "{acc} 的显存带宽未公开，无法估计解码吞吐与每百万 tokens 价格。",
        "en": "{acc} has no published memory bandwidth, so no decode throughput or price per "
        "million tokens is estimated.",
    },
    "monthly_info": {
        "zh": "仅供参考：包月 ¥{month:,.0f}/月/节点，单节点使用超过 {even:.0f} 小时才比按量便宜；"
        "任务时长未知，因此按量计费。",
        "en": "For information: monthly billing (¥{month:,.0f} per node-month) pays off only "
        "above {even:.0f} h of use per node; the job's length is unknown, so it is billed on "
        "demand.",
    },
    "month_used": {
        "zh": "包月是承诺：承诺整月 ¥{total:,.0f}{span}，任务只用其中 {hours:,.0f} 小时。",
        "en": "Monthly is a commitment: it commits ¥{total:,.0f} for {span}, of which the "
        "job uses {hours:,.0f} h.",
    },
    "month_used_on_demand": {
        "zh": "包月是承诺：承诺整月 ¥{total:,.0f}{span}，任务只用其中 {hours:,.0f} 小时；"
        "同一机型按量计费（{rate}）跑完这些小时{about} ¥{od_total:,.0f}。",
        "en": "Monthly is a commitment: it commits ¥{total:,.0f} for {span}, of which the "
        "job uses {hours:,.0f} h; on demand the same type ({rate}) costs {about} "
        "¥{od_total:,.0f} for those hours.",
    },
    "summary_on_demand": {
        "zh": "包月须预付 ¥{total:,.0f}，任务只用其中 {hours:,.0f} 小时；同一机型按量计费"
        "{about} ¥{od_total:,.0f}。",
        "en": " The subscription commits ¥{total:,.0f}, of which the job uses {hours:,.0f} h; "
        "on demand the same type costs {about} ¥{od_total:,.0f} for the job.",
    },
    "same_cost_faster": {
        "zh": "与最便宜的方案费用相差不到 {pct:g}%（¥{total:,.0f} 对 ¥{cheapest:,.0f}），"
        "但 {hours} 即可完成，而不是 {slow}：数据并行在多节点上近乎线性扩展，总卡时与费用"
        "几乎不变；运行时间越短，期间遇到故障、回收和重启的风险也越小。",
        "en": "Costs within {pct:g}% of the cheapest plan (¥{total:,.0f} vs ¥{cheapest:,.0f}) "
        "but finishes in {hours} instead of {slow}: data parallel over more nodes scales "
        "nearly linearly, so the device-hours and the bill stay about the same, and a shorter "
        "run carries fewer days of failure, reclaim and restart risk.",
    },
    "faster_than_monthly": {
        "zh": "费用约 ¥{total:,.0f}，比最便宜的方案（¥{cheapest:,.0f}）高 {pct:.0f}%，"
        "但 {hours} 即可完成，而不是 {slow}：最便宜的方案只是靠包月折扣更省，"
        "而运行这么久，期间的故障、重启风险和日历时间本身就是代价；"
        "同样的机器若按量计费，费用与本方案相差在估算的不确定范围之内。",
        "en": "Costs about ¥{total:,.0f}, {pct:.0f}% more than the cheapest plan "
        "(¥{cheapest:,.0f}), but finishes in {hours} instead of {slow}: the cheapest plan is "
        "cheaper only through its monthly discount, and a run that long pays in calendar "
        "time and in months of failure and restart risk; on demand, its servers would cost "
        "about what this plan does, within the estimate's uncertainty.",
    },
    "budget_hours": {
        "zh": "预算 ¥{budget:,.0f} 按此价格（¥{per_hour:,.2f}/小时）可运行约 {hours} 小时"
        "（约 {days:.1f} 天）；持续服务超出这段时间需追加预算，或改用更便宜的方案。",
        "en": "Your budget of ¥{budget:,.0f} buys about {hours} h of this option at "
        "¥{per_hour:,.2f}/h (about {days:.1f} days); serving longer needs more budget or a "
        "cheaper option.",
    },
    "budget_months": {
        "zh": "预算 ¥{budget:,.0f} 可支付该包月方案 {months} 个整月"
        "（全部节点每月 ¥{month:,.0f}）。",
        "en": "Your budget of ¥{budget:,.0f} pays for {months_en} of this subscription "
        "(¥{month:,.0f} a month for all its nodes).",
    },
    "monthly_commitment": {
        "zh": "包月是承诺：每节点按整月预付 ¥{month:,.0f}，不足一个月也按一个月计费。",
        "en": "Monthly is a commitment: ¥{month:,.0f} per node paid for each whole month, "
        "even if you stop earlier.",
    },
    "no_option": {
        "zh": "没有同时满足所有约束的方案。",
        "en": "No option meets every constraint.",
    },
    "removed_other": {
        "zh": "{n} 个报价因其他原因被排除。",
        "en": "{n} offers were removed for other reasons.",
    },
    "deadline_risk": {
        "zh": "截止时间为 {deadline}，只在估算值上满足：首选方案约需 {hours}，"
        "按估算区间的上限可能需要 {high}。",
        "en": "The deadline of {deadline} is met only at the estimate: the first option takes "
        "about {hours}, and could take {high} at the high end of the estimate's range. ",
    },
    "deadline_safe": {
        "zh": "{safe}：即使按区间上限（{high}）也能按时完成，要确保截止时间可选它。",
        "en": "{safe}: meets it even at the high end of its range ({high}); choose it to be "
        "sure of the deadline.",
    },
    "deadline_none_safe_time": {
        "zh": "列出的方案都不能保证按时完成：请预留延期的余地，或放宽服务器台数上限。",
        "en": "No listed option is sure to meet it: leave room for a delay, or allow more servers.",
    },
    "deadline_none_safe": {
        "zh": "列出的方案都不能保证按时完成：请预留延期的余地，或按耗时排序查看更快的方案。",
        "en": "No listed option is sure to meet it: leave room for a delay, or rank by time "
        "to see faster ones.",
    },
    "relax_hint": {
        "zh": "若放宽{what}，最接近的方案是：{best}。",
        "en": "Without {what}, the nearest option would be: {best}.",
    },
    "memory_need": {
        "zh": "按单台 {n}×{acc}（每卡 {have:.0f} GiB）计，每卡约需 {need:.1f} GiB，最大一项是{part}"
        "（{size:.1f} GiB）。",
        "en": "on one server of {n}×{acc} ({have:.0f} GiB each), each device needs about "
        "{need:.1f} GiB, the largest part being {part} ({size:.1f} GiB).",
    },
    "memory_need_span": {
        "zh": "即使一个副本跨 {s} 台 {n}×{acc}（每卡 {have:.0f} GiB，服务器内张量并行、服务器间"
        "流水线并行），每卡仍需约 {need:.1f} GiB，最大一项是{part}（{size:.1f} GiB）。",
        "en": "even with one replica over {s} servers of {n}×{acc} ({have:.0f} GiB each; tensor "
        "parallel within a server, pipeline stages across), each device needs about "
        "{need:.1f} GiB, the largest part being {part} ({size:.1f} GiB).",
    },
    "memory_need_count": {
        "zh": "按要求的 {count} 张 {acc}（每卡 {have:.0f} GiB{room}）计，每卡约需 {need:.1f} GiB，"
        "最大一项是{part}（{size:.1f} GiB）。",
        "en": "on the {count} accelerators asked, as {count}×{acc} ({have:.0f} GiB each{room}), "
        "each device needs about {need:.1f} GiB, the largest part being {part} "
        "({size:.1f} GiB).",
    },
    "memory_need_count_span": {
        "zh": "按要求的 {count} 张卡（{s} 台 {n}×{acc}，每卡 {have:.0f} GiB{room}）计，每卡约需 "
        "{need:.1f} GiB，最大一项是{part}（{size:.1f} GiB）。",
        "en": "on the {count} accelerators asked, as {s} servers of {n}×{acc} ({have:.0f} GiB "
        "each{room}), each device needs about {need:.1f} GiB, the largest part being {part} "
        "({size:.1f} GiB).",
    },
    "memory_room": {
        "zh": "，留出 {pct:.0f}% 余量后可用 {usable:.1f} GiB",
        "en": ", {usable:.1f} GiB usable with the {pct:.0f}% headroom kept free",
    },
    "part_weights": {"zh": "权重", "en": "the weights"},
    "part_gradients": {"zh": "梯度", "en": "the gradients"},
    "part_optimizer": {"zh": "优化器状态", "en": "the optimizer states"},
    "part_activations": {"zh": "激活值", "en": "the activations"},
    "part_kv_cache": {"zh": "KV 缓存", "en": "the KV cache"},
    "part_overhead": {"zh": "运行时开销", "en": "the runtime overhead"},
    "lever_method": {
        "zh": "改用 QLoRA（冻结的基座按 4 位量化加载）代替 LoRA，最接近的方案是：{best}。",
        "en": "With QLoRA instead of LoRA (the frozen base loaded in 4 bits), the nearest "
        "option would be: {best}.",
    },
    # A full fine-tune changed to LoRA or QLoRA (review 8 K9): the base frozen, only the
    # low-rank adapters trained, so the gradients and optimizer states are the adapters'.
    "lever_method_lora": {
        "zh": "改用 LoRA 代替全参微调（冻结基座，只训练低秩适配器，梯度和优化器状态"
        "只需适配器那一小部分，但效果未必达到全参微调），最接近的方案是：{best}。",
        "en": "With LoRA instead of a full fine-tune (the base frozen and only low-rank adapters "
        "trained, so gradients and optimizer states are the adapters' alone, though the result "
        "may not match a full fine-tune), the nearest option would be: {best}.",
    },
    "lever_method_qlora": {
        "zh": "改用 QLoRA 代替全参微调（冻结的基座按 4 位量化加载，只训练低秩适配器，"
        "效果未必达到全参微调），最接近的方案是：{best}。",
        "en": "With QLoRA instead of a full fine-tune (the frozen base loaded in 4 bits and only "
        "low-rank adapters trained, though the result may not match a full fine-tune), the "
        "nearest option would be: {best}.",
    },
    # More accelerators than the limit asked (review 8 K9): the fewest the planner's fit
    # holds the job on, priced at that count, and the cheapest option without the limit.
    "lever_beyond_limit": {
        "zh": "{what}超出了 {max} 张加速卡的上限：{how}，最少需要 {count} 张卡（{layout}），"
        "如：{fewest}；不限卡数时最便宜的方案是：{best}。",
        "en": "{what} needs more than the {max} accelerators allowed: {how}, the fewest that "
        "hold it are {count} ({layout}), such as {fewest}; without the limit, the cheapest "
        "option would be: {best}.",
    },
    "lever_beyond_limit_same": {
        "zh": "{what}超出了 {max} 张加速卡的上限：{how}，最少需要 {count} 张卡（{layout}），"
        "这也是不限卡数时最便宜的方案：{best}。",
        "en": "{what} needs more than the {max} accelerators allowed: {how}, the fewest that "
        "hold it are {count} ({layout}), which is also the cheapest option without the "
        "limit: {best}.",
    },
    "lever_beyond_limit_plain": {
        "zh": "{what}超出了 {max} 张加速卡的上限：不限卡数时最便宜的方案是：{best}。",
        "en": "{what} needs more than the {max} accelerators allowed: without the limit, the "
        "cheapest option would be: {best}.",
    },
    "lever_beyond_limit_offload": {
        "zh": "若再用 ZeRO-Offload 把优化器状态和梯度卸载到 CPU 内存（每步经主机链路搬运，更慢，"
        "主机内存需容纳它们），{count} 张卡即可（{layout}）：{best}。",
        "en": "With ZeRO-Offload moving the optimizer states and gradients to CPU RAM as well "
        "(slower: each step crosses the host link, and the hosts' RAM must hold them), {count} "
        "would do ({layout}): {best}.",
    },
    "beyond_what_full": {"zh": "该模型的全参微调", "en": "A full fine-tune of this model"},
    "beyond_what": {"zh": "该训练任务", "en": "This training job"},
    "beyond_how_zero3": {
        "zh": "按 ZeRO-3 切分参数、梯度和优化器状态",
        "en": "with ZeRO-3 sharding the weights, gradients and optimizer states",
    },
    "beyond_how": {"zh": "按训练框架允许的切分方式", "en": "sharded as the trainer allows"},
    "beyond_layout": {"zh": "{s} 台 {n}×{acc}", "en": "{s} servers of {n}×{acc}"},
    "beyond_layout_one": {"zh": "1 台 {n}×{acc}", "en": "one server of {n}×{acc}"},
    # Serving: even the lowest precision tried does not fit (review 8 K10).
    "lever_precision_none": {
        "zh": "改用 {p} 权重（{how}）也放不下该模型（按所要求的上下文和并发）：{need}",
        "en": "With {p} weights ({how}) the model does not fit either at the context and "
        "concurrency asked: {need}",
    },
    "lever_framework": {
        "zh": "改用 {fw} 训练（分块计算交叉熵，不保留整份 fp32 logits，长序列省显存最多），"
        "最接近的方案是：{best}。",
        "en": "With {fw}, whose chunked cross-entropy keeps no full fp32 copy of the logits "
        "(the largest saving at long sequences), the nearest option would be: {best}.",
    },
    "lever_chunked_loss": {
        "zh": "开启 Liger Kernel 的融合交叉熵（Hugging Face Trainer 的 use_liger_kernel，"
        "LLaMA-Factory 的 enable_liger_kernel），分块计算损失、不保留整份 fp32 logits，"
        "仍用原来的训练框架，最接近的方案是：{best}。",
        "en": "With Liger Kernel's fused cross-entropy in the same trainer (the Hugging Face "
        "Trainer's use_liger_kernel, LLaMA-Factory's enable_liger_kernel), which computes the "
        "loss in chunks and keeps no full fp32 copy of the logits, the nearest option would "
        "be: {best}.",
    },
    "lever_offload": {
        "zh": "改用 ZeRO-Offload 把优化器状态和梯度卸载到 CPU 内存（DeepSpeed offload_optimizer："
        "每步经主机链路搬运，时间更长，主机内存需容纳它们），最接近的方案是：{best}。",
        "en": "With ZeRO-Offload moving the optimizer states and gradients to CPU RAM "
        "(DeepSpeed offload_optimizer: slower, each step crosses the host link, and the "
        "hosts' RAM must hold them), the nearest option would be: {best}.",
    },
    "lever_rollout": {
        "zh": "改用 {fw} 训练，rollout 用与训练同卡部署的 vLLM、{r} 卡张量并行（--use_vllm true "
        "--vllm_mode colocate --vllm_tensor_parallel_size {r}），每卡只放 1/{r} 份 actor "
        "副本，不必每卡一份完整副本，最接近的方案是：{best}。",
        "en": "With {fw}, generating its rollouts on vLLM colocated with the training at "
        "tensor parallel {r} (--use_vllm true --vllm_mode colocate "
        "--vllm_tensor_parallel_size {r}), so each device holds 1/{r} of the actor's copy "
        "instead of a whole one, the nearest option would be: {best}.",
    },
    "lever_precision": {
        "zh": "改用 {p} 权重（{how}，需该卡支持此格式），最接近的方案是：{best}。",
        "en": "With {p} weights ({how}, on a device that runs the format), the nearest "
        "option would be: {best}.",
    },
    "lever_target_tokens_per_s": {
        "zh": "在允许的服务器数内，目标降到约 {load:,.0f} tokens/秒时，最接近的方案是：{best}。",
        "en": "Within the servers allowed, a target of about {load:,.0f} tokens/s would be "
        "served by: {best}.",
    },
    "lever_concurrency": {
        "zh": "并发降到 {load} 路时，最接近的方案是：{best}。",
        "en": "With {load} concurrent sequences, the nearest option would be: {best}.",
    },
    # A short fine-tune planned at the short-run batch misses the deadline, the recipes'
    # batch meets it (session 13 rev13t): the batch caps the data-parallel replicas.
    "lever_global_batch_size": {
        "zh": "若每个优化步取 {batch} {unit_zh}的全局批量（训练配方常用的批量），"
        "最接近的方案是：{best}。"
        "这次训练数据不多，规划按每步 {assumed} {unit_zh}估算，以保留约 {steps:,} 个优化步，"
        "因此最多只能 {replicas} 路数据并行；按每步 {batch} {unit_zh}约为 {new_steps:,} 步，"
        "属于训练配方的改动，请相应核对学习率与预热步数。",
        "en": "With a global batch of {batch} {unit_en} per optimizer step (the batch "
        "recipes usually keep), the nearest option would be: {best}. For a run this short "
        "the plan assumed {assumed} {unit_en} per step, keeping about {steps:,} optimizer "
        "steps, which leaves room for at most {replicas} data-parallel replicas; at {batch} "
        "the run takes about {new_steps:,} steps, a change of recipe: check its learning "
        "rate and warm-up against it.",
    },
    "lever_max_nodes": {
        "zh": "若允许 {n} 台服务器，最接近的方案是：{best}。",
        "en": "With {n} servers allowed, the nearest option would be: {best}.",
    },
    "relax_substitute": {
        "zh": "改用 {gens} 架构的加速卡，最接近的方案是：{best}。",
        "en": "With {article} {gens} accelerator instead, the nearest option would be: {best}.",
    },
}

_REMOVED: dict[str, dict[Lang, str]] = {
    "providers": {"zh": "{n} 个报价来自未选择的云厂商。",
                  "en": "{n} offers are from providers other than the ones asked for."},
    "regions": {"zh": "{n} 个报价不在所选地域销售。",
                "en": "{n} offers are not sold in the regions asked for."},
    "accelerators": {"zh": "{n} 个报价的加速卡不是所选型号。",
                     "en": "{n} offers have other accelerators than the ones asked for."},
    "usage": {"zh": "{n} 个报价只用于推理（如 ModelArts 公共推理资源池），不能运行训练任务。",
              "en": "{n} offers serve inference only (such as ModelArts public inference "
              "pools) and cannot run a training job."},
    "cuda_required": {"zh": "{n} 个报价为昇腾 NPU，不能运行 CUDA。",
                      "en": "{n} offers have Ascend NPUs, which do not run CUDA."},
    "billing": {"zh": "{n} 个报价的计费方式不在所选范围内。",
                "en": "{n} offers use a billing mode that was not asked for."},
    "spot_not_interruptible": {"zh": "{n} 个报价为竞价实例：竞价实例随时可能被回收，"
                               "只在任务可中断（能从检查点恢复）时使用。",
                               "en": "{n} offers are spot offers, which the cloud can reclaim "
                               "at any time: spot is used only when the job is interruptible "
                               "(it can resume from a checkpoint)."},
    "monthly_unknown_length": {"zh": "{n} 个报价为包月计费：任务时长未知，"
                               "默认不按整月承诺计费。",
                               "en": "{n} offers are billed monthly: the job's length is "
                               "unknown, so a whole-month commitment is not assumed."},
    "max_price_per_hour": {"zh": "{n} 个报价超过每小时价格上限（按任务实际使用的小时计）"
                           "或价格未知。",
                           "en": "{n} offers cost more per hour of use than the limit, or "
                           "have no known price."},
    "monthly_short_job": {"zh": "{n} 个报价为包月计费：任务时长不到包月的回本时长，"
                          "整月承诺比按量更贵；如确需包月，请在计费方式中指定。",
                          "en": "{n} offers are billed monthly: the job is shorter than a "
                          "month's break-even, so a whole-month commitment would cost more "
                          "than on demand; ask for monthly billing to see them."},
    "budget": {"zh": "{n} 个方案的总费用超出预算。",
               "en": "{n} options would cost more than the budget."},
    "budget_serving": {"zh": "{n} 个方案的起步承诺超出预算"
                       "（包月按首月全部节点计，按量按一小时计）。",
                       "en": "{n} options commit more than the budget up front (a "
                       "subscription's first month for all its nodes, or one hour on "
                       "demand)."},
    "deadline_hours": {"zh": "{n} 个方案的耗时超过截止时间。",
                       "en": "{n} options would take longer than the deadline."},
    "memory": {"zh": "{n} 个报价的显存不足以容纳该任务（在允许的节点数内）。",
               "en": "{n} offers do not have enough accelerator memory for this job (within "
               "the nodes allowed)."},
    "max_nodes": {"zh": "{n} 个报价需要超过 {nodes} 台节点。",
                  "en": "{n} offers would need more than {nodes_en}."},
    "unknown_accelerator": {"zh": "{n} 个报价的加速卡规格未知。",
                            "en": "{n} offers have an accelerator whose specs are unknown."},
    "unknown_specs": {"zh": "{n} 个报价的 vCPU 或内存规格未知。",
                      "en": "{n} offers have unknown vCPU or RAM figures."},
    "precision": {"zh": "{n} 个报价的加速卡不支持 {precision} 精度。",
                  "en": "{n} offers have accelerators that cannot run {precision}."},
    "checkpoint": {"zh": "{n} 个报价的加速卡无法加载 {checkpoint} 权重（vLLM/SGLang 的 AWQ 算子需要"
                   "计算能力 7.5 及以上，Volta 的 V100 没有）。",
                   "en": "{n} offers have accelerators that cannot load {checkpoint} weights "
                   "(vLLM/SGLang AWQ kernels need compute capability 7.5 or newer; Volta's V100 "
                   "has none)."},
    "engine": {"zh": "{n} 个报价的加速卡（Pascal 架构，如 P4、P40、P100，计算能力低于 7.0）"
               "不被 {engine} 支持，只能用通用 PyTorch 推理。",
               "en": "{n} offers have accelerators (Pascal: P4, P40, P100, compute capability "
               "below 7.0) that {engine} does not run; only plain PyTorch serving does."},
    "engine_sm75": {"zh": "{n} 个报价的加速卡计算能力低于 7.5（Volta 架构的 V100，Pascal 架构的 "
                    "P4、P40、P100），{engine} 在这些卡上无法启动；V100 可改用 vLLM 或 LMDeploy。",
                    "en": "{n} offers have accelerators below compute capability 7.5 (Volta's "
                    "V100; Pascal's P4, P40, P100), on which {engine} does not start; on a V100, "
                    "vLLM or LMDeploy serve instead."},
    "engine_stack": {"zh": "{n} 个报价的加速卡不是昇腾 NPU，而 {engine} 只在昇腾上运行。",
                     "en": "{n} offers have accelerators other than Ascend NPUs, and {engine} "
                     "runs on Ascend only."},
    "framework_stack": {"zh": "{n} 个报价的加速卡不是昇腾 NPU，而 MindSpeed 只在昇腾上运行"
                        "（它是为 CANN/torch_npu 适配的 Megatron-LM）；在 NVIDIA GPU 上请用 "
                        "Megatron-LM 本身（framework 设为 megatron），并行方式相同。",
                        "en": "{n} offers have accelerators other than Ascend NPUs, and MindSpeed "
                        "runs on Ascend only (it is Megatron-LM adapted to CANN and torch_npu); "
                        "on NVIDIA GPUs, Megatron-LM itself runs the same layouts (framework "
                        "megatron)."},
    "accelerator_count": {"zh": "{n} 个报价无法恰好组成 {n_acc} 张加速卡"
                          "（单机卡数不整除，或需多机但无 RDMA）。",
                          "en": "{n} offers cannot make exactly {n_acc} accelerators (the "
                          "type's count does not divide it, or several nodes would be needed "
                          "without RDMA)."},
    "max_accelerators": {"zh": "{n} 个报价超过 {max_acc} 张加速卡的上限。",
                         "en": "{n} offers exceed the limit of {max_acc} accelerators."},
    "throughput_unknown": {"zh": "{n} 个报价的加速卡显存带宽未公开，无法确认能达到所需吞吐。",
                           "en": "{n} offers have accelerators without a published memory "
                           "bandwidth, so the required throughput cannot be confirmed."},
    "min_vcpus": {"zh": "{n} 个报价每节点少于 {vcpus} 个 vCPU。",
                  "en": "{n} offers have fewer than {vcpus} vCPUs per node."},
    "min_memory_gib": {"zh": "{n} 个报价每节点内存少于 {ram:g} GiB。",
                       "en": "{n} offers have less than {ram:g} GiB of RAM per node."},
    "loader_vcpus": {"zh": f"{{n}} 个报价每张加速卡少于 {LOADER_VCPUS_PER_DEVICE_MIN} 个 "
                     "vCPU：训练图像的 JPEG 解码与数据增强在 CPU 上进行，每张卡需要约 "
                     f"{LOADER_VCPUS_PER_DEVICE_MIN} 个数据加载进程，否则 GPU 会空等数据。",
                     "en": f"{{n}} offers have fewer than {LOADER_VCPUS_PER_DEVICE_MIN} vCPUs "
                     "per accelerator: decoding and augmenting the training images (JPEG) "
                     f"runs on the CPU, about {LOADER_VCPUS_PER_DEVICE_MIN} data-loader "
                     "workers per accelerator, or the GPUs wait for data."},
}  # fmt: skip
"""One sentence per constraint that removed offers (the no-option explanation)."""

_CONSTRAINT: dict[str, dict[Lang, str]] = {
    "providers": {"zh": "云厂商限制", "en": "the provider limit"},
    "regions": {"zh": "地域限制", "en": "the region limit"},
    "accelerators": {"zh": "加速卡型号限制", "en": "the accelerator limit"},
    "cuda_required": {"zh": "CUDA 要求", "en": "the CUDA requirement"},
    "billing": {"zh": "计费方式限制", "en": "the billing limit"},
    "max_price_per_hour": {"zh": "每小时价格上限", "en": "the hourly price limit"},
    "budget": {"zh": "预算", "en": "the budget"},
    "deadline_hours": {"zh": "截止时间", "en": "the deadline"},
    "accelerator_count": {"zh": "加速卡数量", "en": "the exact accelerator count"},
    "max_accelerators": {"zh": "加速卡数量上限", "en": "the accelerator limit"},
    "min_vcpus": {"zh": "vCPU 下限", "en": "the vCPU minimum"},
    "min_memory_gib": {"zh": "内存下限", "en": "the RAM minimum"},
}


_ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "lmdeploy": "LMDeploy",
                 "tensorrt-llm": "TensorRT-LLM", "hf": "PyTorch", "mindie": "MindIE"}  # fmt: skip


SM75_ENGINE_NAMES = frozenset(_ENGINE_NAMES.get(e, e) for e in SM75_ENGINES)
"""The engines that need compute capability 7.5, as their projects spell them."""


def engine_name(engine: str) -> str:
    """A serving engine as its project spells it (``vllm`` -> ``vLLM``)."""
    return _ENGINE_NAMES.get(engine, engine)


_COUNT_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def unlisted_sentence(names: str, catalogs: int, lang: Lang) -> str:
    """No catalog loaded lists ``names`` (an empty answer's fact, before any count)."""
    if lang == "zh":
        return f"这 {catalogs} 家云的目录里都没有 {names} 机型。"
    if catalogs == 1:
        return f"The one cloud's catalog loaded does not list {names}."
    return f"None of the {_COUNT_WORDS.get(catalogs, str(catalogs))} clouds' catalogs list {names}."


LOWER_WEIGHTS: dict[str, dict[Lang, str]] = {
    "FP8": {
        "zh": "官方或 llm-compressor 的 FP8 检查点，显存约为 16 位的一半",
        "en": "an official or llm-compressor FP8 checkpoint: about half the 16-bit memory",
    },
    "INT8": {
        "zh": "W8A8 或 GPTQ-Int8 检查点，显存约为 16 位的一半",
        "en": "a W8A8 or GPTQ-Int8 checkpoint: about half the 16-bit memory",
    },
    "INT4": {
        "zh": "AWQ 或 GPTQ-Int4 检查点，显存约为 16 位的四分之一",
        "en": "an AWQ or GPTQ-Int4 checkpoint: about a quarter of the 16-bit memory",
    },
}
"""How a served model's weights get to a lower precision (the lever's parenthesis)."""


def removed_sentence(key: str, count: int, lang: Lang, values: Mapping[str, object]) -> str:
    """The sentence saying ``count`` offers were removed by ``key``."""
    if key == "engine" and values.get("engine") in SM75_ENGINE_NAMES:
        key = "engine_sm75"  # not only Pascal: Volta too (capabilities.SM75_ENGINES)
    template = _REMOVED.get(key)
    if template is None:
        return t("removed_other", lang, n=count)
    nodes = values.get("nodes")
    nodes_en = "1 node" if nodes == 1 else f"{nodes} nodes"
    return template[lang].format(n=f"{count:,}", nodes_en=nodes_en, **values)


_CONFIDENCE: dict[str, dict[Lang, str]] = {
    "high": {"zh": "高", "en": "high"},
    "medium": {"zh": "中", "en": "medium"},
    "low": {"zh": "低", "en": "low"},
}


def confidence_name(confidence: str, lang: Lang) -> str:
    return _CONFIDENCE.get(confidence, {}).get(lang, confidence)


_CONFIDENCE_WHY: dict[Lang, dict[str, str]] = {
    "zh": {
        "medium": "部分规格未能在官方来源中逐项核实",
        "low": "部分规格或在售状态未能由官方来源确认",
        "": "规格未经核实",
    },
    "en": {
        "medium": "some of this type's specifications could not each be checked against an "
        "official source",
        "low": "some of this type's specifications, or whether it is still sold, are not "
        "confirmed by an official source",
        "": "this type's specifications are not verified",
    },
}
"""Why a row is not ``high`` confidence, one sentence in either language: the catalog's
notes (cataloguing evidence, 300-1,300 characters in the Huawei and Volcano rows) stay in
the catalog, ``notes`` of ``GET /v1/providers/{name}/instance-types`` (review 7 J9/J17/J3;
review 5 P5 for zh)."""


def confidence_warning(confidence: str, lang: Lang) -> str:
    """The warning for a row whose figures are not fully sourced: what is unconfirmed, in
    one sentence of the answer's language; the catalog's own notes are not pasted into it
    (they are served with the row by the instance-type catalog)."""
    why = _CONFIDENCE_WHY[lang]
    return t(
        "low_confidence",
        lang,
        conf=confidence_name(confidence, lang),
        why=why.get(confidence, why[""]),
    )


def constraint_name(key: str, lang: Lang) -> str:
    return _CONSTRAINT.get(key, {}).get(lang, key)


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


_WIDTH_WHAT: dict[bool, dict[Lang, str]] = {
    False: {"zh": "微调", "en": "fine-tune"},
    True: {"zh": "预训练", "en": "pre-training run"},
}


def width_bound(
    batch: int, replicas: int, short: bool, lang: Lang, pretraining: bool = False
) -> str:
    """Why a time-ranked training job is not spread wider: its global batch (``batch``
    sequences, smaller than the recipes' for a ``short`` run) has room for ``replicas``
    data-parallel replicas (:mod:`service.planning.width`); ``pretraining``: a
    pre-training run (bounded only by a global batch the request sent)."""
    why = t("width_bound_short", lang, steps=MIN_OPTIMIZER_STEPS) if short else ""
    what = _WIDTH_WHAT[pretraining][lang]
    return t("width_bound", lang, what=what, batch=batch, why=why, replicas=replicas)


def t(key: str, lang: Lang, **values: object) -> str:
    """Sentence ``key`` in ``lang`` with ``values`` filled in (:func:`template_fill` of its
    template, given the keywords' own dict: ``format(**values)`` would copy it again, on
    every sentence of every answer)."""
    fills = _FILLS.get(key)
    if fills is None:
        fills = _FILLS[key] = {name: template_fill(text) for name, text in _T[key].items()}
    return fills[lang](values)


Fill = Callable[[Mapping[str, Any]], str]
"""A template's ``format_map``: the sentence from a mapping of its fields' values."""

_FILLS: dict[str, dict[str, Fill]] = {}
""":func:`template_fill` of each sentence of :data:`_T` used so far, per language (at
most one per template: the table is fixed)."""

_SAFE_SPEC = frozenset("<>=^+- #0123456789,._bcdeEfFgGnosxX%")
"""Characters of a format spec written into an f-string as it is (no quote, brace or
backslash)."""


def template_fill(template: str) -> Fill:
    """:func:`compile_fill` of ``template``, compiled once per template text: the callers
    pass the fixed sentences of :data:`_T` (or a fixed join of two of them), yet a class of
    answers asks for its writers anew (:func:`rank_writer`), and compiling one costs about
    80 us (an ``eval``), which a new job shape paid twice per answer."""
    fill = _COMPILED.get(template)
    if fill is None:
        fill = compile_fill(template)
        if len(_COMPILED) < MAX_COMPILED:
            _COMPILED[template] = fill
    return fill


MAX_COMPILED = 4096
"""Templates kept compiled (the table holds a few hundred; the bound only guards against
a caller that one day builds template text from values)."""
_COMPILED: dict[str, Fill] = {}


def compile_fill(template: str) -> Fill:
    """``template.format_map`` as a function compiled once into an f-string of the mapping's
    values: the same text — each field is ``format(value, spec)`` after its conversion,
    exactly what ``str.format`` does, and a missing value is the same ``KeyError`` — without
    parsing the template again on every call (a third of the fill, 290 of 460 ns for the
    ranking sentence, measured). A template whose fields ``str.format`` reads otherwise
    than by name (an index, an attribute, a nested spec), or whose text is not printable,
    keeps ``format_map`` itself (tests/test_explain_fast_paths.py compares the two on
    every template)."""
    parts = []
    for literal, field, spec, conversion in _FORMATTER.parse(template):
        if not literal.isprintable():
            return template.format_map
        parts.append(
            literal.replace("\\", "\\\\").replace("'", "\\'").replace("{", "{{").replace("}", "}}")
        )
        if field is None:
            continue
        if not field.isidentifier() or not _SAFE_SPEC.issuperset(spec or ""):
            return template.format_map
        said = f"!{conversion}" if conversion else ""
        parts.append(f'{{v["{field}"]{said}{":" + spec if spec else ""}}}')
    fill: Fill = eval(f"lambda v: f'{''.join(parts)}'")  # noqa: S307 (our own templates)
    return fill


_FORMATTER = string.Formatter()


_UNTIMED: dict[str, dict[Lang, tuple[str, str]]] = {
    "tokens": {
        "zh": ("未给出 tokens，无法估计耗时", "未给出 tokens，无法估计耗时与总费用。"),
        "en": ("without a token count the time is not estimated",
               "No token count given, so time and total cost are not estimated."),
    },
    "flops": {
        "zh": ("该模型没有公开的计算量（FLOPs），无法估计耗时",
               "该模型没有公开的计算量（FLOPs），无法估计耗时与总费用。"),
        "en": ("no compute figure (FLOP count) is known for this model, so the time is not "
               "estimated",
               "No compute figure (FLOP count) is known for this model, so time and total "
               "cost are not estimated."),
    },
    "peak": {
        "zh": ("{acc} 没有公开该精度的峰值算力，无法估计耗时",
               "{acc} 没有公开该精度的峰值算力，无法估计耗时与总费用。"),
        "en": ("{acc} publishes no peak compute for this precision, so the time is not "
               "estimated",
               "{acc} publishes no peak compute for this precision, so time and total cost "
               "are not estimated."),
    },
    "rollout_bandwidth": {
        "zh": ("{acc} 的显存带宽未公开，RLHF 的生成（rollout）阶段无法计时，因此无法估计耗时",
               "{acc} 的显存带宽未公开：RLHF 的生成（rollout）阶段按带宽解码，无法计时，"
               "因此无法估计耗时与总费用。"),
        "en": ("{acc} has no published memory bandwidth, so the RLHF generation (rollout) "
               "phase, and with it the time, is not estimated",
               "{acc} has no published memory bandwidth: the RLHF generation (rollout) phase "
               "decodes at the bandwidth and cannot be timed, so time and total cost are not "
               "estimated."),
    },
    "rate": {
        "zh": ("吞吐无法估计，因此无法估计耗时", "吞吐无法估计，因此无法估计耗时与总费用。"),
        "en": ("its throughput is not estimated, so neither is the time",
               "Its throughput is not estimated, so neither are time and total cost."),
    },
    "unknown": {
        "zh": ("无法估计耗时", "无法估计耗时与总费用。"),
        "en": ("the time is not estimated", "Time and total cost are not estimated."),
    },
}  # fmt: skip
"""Why an option has no hours (:data:`service.sizing.compute.Untimed`, plus ``rate``: a
batch serving job on a device without a decode rate; ``unknown``: none of these), as the
summary's closing clause and as the option's warning (review 4 F4: "no tokens given" was
said when tokens were)."""


def untimed_clause(why: str, lang: Lang, acc: str) -> str:
    """Why the time is unknown, as the summary's closing clause."""
    return _UNTIMED.get(why, _UNTIMED["unknown"])[lang][0].format(acc=acc)


def hours_unknown(why: str, lang: Lang, acc: str) -> str:
    """The option's warning that its time and total cost are unknown, and why."""
    return _UNTIMED.get(why, _UNTIMED["unknown"])[lang][1].format(acc=acc)


WEEK_HOURS = 168.0
"""From a week on, a length is said in days too."""


def image_rate(per_second: float) -> str:
    """Images per second as a reader takes them in: whole above 10 (ResNet's thousands
    read as before), one decimal above 1, two significant figures below (a diffusion
    pipeline's 0.073; :func:`image_every` then says how long one image takes)."""
    if per_second >= 10:
        return f"{per_second:,.0f}"
    if per_second >= 1:
        return f"{per_second:.1f}"
    return f"{per_second:.2g}"


def image_every(per_second: float, lang: Lang) -> str:
    """How long one image takes, said after a rate below one image a second ("" above)."""
    if per_second >= 1:
        return ""
    every = 1 / per_second
    said = f"{every:.1f}" if every < 10 else f"{every:,.0f}"
    return f"（约每 {said} 秒一张）" if lang == "zh" else f" (one every {said} s)"


def duration(hours: float, lang: Lang) -> str:
    """A job's length as a person says it: minutes below an hour (0.069 h and 0.137 h
    are 4 and 8 minutes, not both "0.1 h"), hours with one decimal from there, and from
    a week on the days beside the hours (whole hours from 1,000 h)."""
    if hours < 1.0:
        minutes = max(round(hours * 60), 1)
        return f"{minutes} 分钟" if lang == "zh" else f"{minutes} min"
    if hours < WEEK_HOURS:
        return f"{hours:.1f} 小时" if lang == "zh" else f"{hours:.1f} h"
    # from a week on, days are what a person plans with (review 11t T4: "13399.3 h")
    shown = f"{hours:,.0f}" if hours >= 1000 else f"{hours:.1f}"
    days = hours / 24
    if lang == "zh":
        return f"{shown} 小时（{days:,.0f} 天）"
    return f"{shown} h ({days:,.0f} days)"


def hours_asked(hours: float, lang: Lang) -> str:
    """A length the user gave (a deadline), as given: whole hours without a decimal
    ("336 h", not "336.0 h"), else as :func:`duration` says it."""
    if hours < 1.0 or hours != int(hours):
        return duration(hours, lang)
    return f"{hours:,.0f} 小时" if lang == "zh" else f"{hours:,.0f} h"


def copies(lang: Lang, n: int, tp: int, sequences: int, engine: str, moe: bool) -> str:
    """That one server runs ``n`` copies of the model at tensor parallel ``tp`` each,
    sharing ``sequences`` (the words ``/v1/estimate`` says too: review 7 J4)."""
    return copies_sentence(lang, n, tp, sequences, engine, moe)


def layout_words(parts: list[str], lang: Lang) -> str:
    """The layout of a fit in one parenthesis (``" (ZeRO-3, tensor parallel 2)"``,
    ``"（ZeRO-3，张量并行 2）"``): back-to-back groups read as two afterthoughts."""
    if not parts:
        return ""
    return f"（{'，'.join(parts)}）" if lang == "zh" else f" ({', '.join(parts)})"


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


def on_demand_total(c: Candidate) -> float | None:
    """What a monthly option's job would cost on demand on the same type (all its nodes,
    the job's hours), when that is less than the months it commits: the figure said
    beside the commitment (review 9 K12); ``None`` when the month pays off or is
    open-ended, or no on-demand price is known."""
    od, hours, total = c.on_demand_per_hour, c.hours, c.total_cost
    if c.offer.billing != "monthly" or od is None or not hours or not total:
        return None
    cost = od * c.nodes * hours
    return cost if cost < total else None


def _on_demand_rate(c: Candidate, lang: Lang) -> dict[str, str]:
    """The on-demand hourly price of all the option's nodes, and "about" for the total
    (an estimated price says so)."""
    assert c.on_demand_per_hour is not None
    rate = c.on_demand_per_hour * c.nodes
    if lang == "zh":
        shown = f"约 ¥{rate:,.2f}/小时，估算价" if c.on_demand_estimated else f"¥{rate:,.2f}/小时"
        return {"rate": shown, "about": "约"}
    shown = f"about ¥{rate:,.2f}/h, estimated" if c.on_demand_estimated else f"¥{rate:,.2f}/h"
    return {"rate": shown, "about": "about"}


def month_used(c: Candidate, lang: Lang) -> str:
    """What a finite job's subscription commits, beside the hours the job uses of it
    (a 17-hour job on a ¥5,190 month pays ¥305 per hour it runs), and what those hours
    cost on demand on the same type when that is less (:func:`on_demand_total`)."""
    total, nodes, hours = c.total_cost, c.nodes, c.hours
    assert total is not None
    assert hours is not None
    months = max(1, math.ceil(hours / HOURS_PER_MONTH - 1e-9))
    if lang == "zh":
        parts = ([f"共 {months} 个月"] if months > 1 else []) + (
            [f"{nodes} 台节点"] if nodes > 1 else []
        )
        span = f"（{'，'.join(parts)}）" if parts else ""
    else:
        span = "a whole month" if months == 1 else f"{months} whole months"
        if nodes > 1:
            span += f" of {nodes} nodes"
    od_total = on_demand_total(c)
    if od_total is None:
        return t("month_used", lang, total=total, span=span, hours=hours)
    return t("month_used_on_demand", lang, total=total, span=span, hours=hours,
             od_total=od_total, **_on_demand_rate(c, lang))  # fmt: skip


def rank_reason(
    c: Candidate,
    objective: Objective,
    serving: bool,
    lang: Lang,
    to_target: bool = False,
    encoded_len: int | None = None,
    scale: float | None = None,
    images: bool = False,
    pairs: bool = False,
    batch: bool = False,
) -> str | None:
    """Why the option sits where it does; for an estimated price, also that the ranking
    counted it at the top of its range (:func:`~service.planning.cost.ranked_money_scale`,
    or ``scale`` when the caller kept it with the offer's other parts).
    ``encoded_len``: an encoder's tokens per sequence (its rate is in sequences/s);
    ``images``: a served image model (its rate is images/s, its price per million images);
    ``pairs``: a served reranker (its rate is query–passage pairs scored per second)."""
    reason = _rank_reason(c, objective, serving, lang, to_target, encoded_len, images, pairs, batch)
    if scale is None:
        scale = ranked_money_scale(c.offer)
    if reason is None or scale == 1.0 or objective == "time" or c.price_per_hour is None:
        return reason
    values: dict[str, object]
    if c.total_cost is not None and c.hours is not None and not serving:
        key, values = "ranked_total", {"cost": c.total_cost * scale}
    elif serving and not to_target and c.price_per_million_tokens is not None and c.hours is None:
        key = "ranked_per_million_images" if images else "ranked_per_million"
        values = {"pmt": money_text(c.price_per_million_tokens * scale)}
    else:
        key, values = "ranked_hourly", {"price": c.price_per_hour * scale}
    return reason + _estimated_rank(key, lang).format_map(values)


RankWriter = Callable[[Candidate, float], "str | None"]
""":func:`rank_reason` of a candidate at an offer's money scale, with one class's terms."""


def rank_writer(
    objective: Objective,
    serving: bool,
    lang: Lang,
    to_target: bool = False,
    encoded_len: int | None = None,
    images: bool = False,
    pairs: bool = False,
    batch: bool = False,
) -> RankWriter:
    """:func:`rank_reason` with every argument but the candidate and its offer's money
    scale fixed (one class of answers' terms): the same text, written with one template
    fill where the branch is known. Why: the ranking sentence is the one sentence of an
    option rebuilt on every answer (it carries the job's cost and hours), and deciding
    its branch again per option, through two calls and a keyword dict, cost about half of
    filling the option (1.1 of 2.6 us, measured). The branch is fixed only for a finite
    training or batch job ranked by cost, balance or time (``serving`` false: not
    open-ended), and only while the candidate has what that branch reads (hours, a total,
    a price, no balanced verdict); any other candidate is written by :func:`rank_reason`
    itself (tests/test_explain_fast_paths.py compares the two on every branch)."""

    def slow(c: Candidate, scale: float) -> str | None:
        return rank_reason(
            c, objective, serving, lang, to_target, encoded_len, scale, images, pairs, batch
        )

    if serving:
        return slow
    if objective == "time":  # _rank_reason's first branch; rank_reason adds nothing
        by_time = template_fill(_T["rank_time"][lang])

        def timed(c: Candidate, scale: float) -> str | None:
            hours = c.hours
            if hours is None:
                return slow(c, scale)
            return by_time({"dur": duration(hours, lang)})

        return timed
    # cost, or balanced without a verdict: rank_cost, and at a scale other than 1 the
    # estimated-rank sentence at the ranked total (its figure renamed ``top`` so that both
    # fill from one dict)
    cost = _T["rank_cost"][lang]
    by_cost = template_fill(cost)
    ranked_total = _T["ranked_total"][lang].replace("{cost", "{top")
    estimated = ("" if lang == "zh" else " ") + _T["rank_estimated"][lang].replace(
        "{ranked}", ranked_total
    )
    by_cost_ranked = template_fill(cost + estimated)

    def costed(c: Candidate, scale: float) -> str | None:
        total, hours = c.total_cost, c.hours
        if total is None or hours is None or c.price_per_hour is None or c.balanced is not None:
            return slow(c, scale)
        if scale == 1.0:
            return by_cost({"cost": total, "dur": duration(hours, lang)})
        return by_cost_ranked({"cost": total, "dur": duration(hours, lang), "top": total * scale})

    return costed


_ESTIMATED_RANK: dict[tuple[str, Lang], str] = {}
""":func:`_estimated_rank` per (figure's key, language)."""


def _estimated_rank(ranked: str, lang: Lang) -> str:
    """The ``rank_estimated`` sentence with the template of the figure it was ranked at
    (``ranked``: ``ranked_total``, ``ranked_per_million`` or its ``_images``,
    ``ranked_hourly``) in its
    place and the space that joins it to the ranking sentence: one template, filled once
    per option rather than twice (the figure, then the sentence around it). Built once
    per key and language; the same text as filling the two one after the other."""
    found = _ESTIMATED_RANK.get((ranked, lang))
    if found is None:
        outer = _T["rank_estimated"][lang]
        found = ("" if lang == "zh" else " ") + outer.replace("{ranked}", _T[ranked][lang])
        _ESTIMATED_RANK[(ranked, lang)] = found
    return found


def _rank_reason(
    c: Candidate,
    objective: Objective,
    serving: bool,
    lang: Lang,
    to_target: bool,
    encoded_len: int | None = None,
    images: bool = False,
    pairs: bool = False,
    batch: bool = False,
) -> str | None:
    if objective == "time" and c.hours is not None and not serving:
        return t("rank_time", lang, dur=duration(c.hours, lang))
    if objective == "time" and serving and c.throughput_tokens_per_s and encoded_len:
        key = "rank_encoding_pairs" if pairs else "rank_encoding"
        return t(key, lang, sps=c.throughput_tokens_per_s / encoded_len)
    if objective == "time" and serving and c.throughput_tokens_per_s and images:
        tps = c.throughput_tokens_per_s
        return t("rank_images_throughput", lang, rate=image_rate(tps), every=image_every(tps, lang))
    if objective == "time" and serving and c.throughput_tokens_per_s:
        # open-ended serving by time: the key is decode throughput, not a price
        return t("rank_throughput", lang, tps=c.throughput_tokens_per_s)
    if c.price_per_hour is None:
        if objective == "time":
            return None
        # an offline batch job ranks by accelerator-hours (review rev13s S2)
        return t("rank_unpriced_batch" if batch and c.hours else "rank_unpriced", lang)
    if objective == "balanced" and c.balanced is not None:
        said = _balanced_reason(c, c.balanced, serving, lang, images)
        if said is not None:
            return said
    if c.total_cost is not None and c.hours is not None and not serving:
        return t("rank_cost", lang, cost=c.total_cost, dur=duration(c.hours, lang))
    if serving and c.hours is None and c.price_per_million_tokens is not None:
        if to_target:
            pmt = money_text(c.price_per_million_tokens)
            key = "rank_target_hourly_images" if images else "rank_target_hourly"
            return t(key, lang, price=c.price_per_hour, pmt=pmt)
        pmt = money_text(c.price_per_million_tokens)
        key = "rank_per_million_images" if images else "rank_per_million"
        return t(key, lang, pmt=pmt, price=c.price_per_hour)
    if not serving and c.price_per_million_training_tokens is not None:
        pmt = money_text(c.price_per_million_training_tokens)
        return t("rank_per_million_training", lang, pmt=pmt, price=c.price_per_hour)
    return t("rank_hourly", lang, price=c.price_per_hour)


def _balanced_reason(
    c: Candidate, balanced: tuple[bool, Cheapest], serving: bool, lang: Lang, images: bool = False
) -> str | None:
    """``balanced``: the rule that put the option where it is, with the cheapest figure it
    weighed against (:func:`~service.planning.rank.balanced_plan`); ``None`` for an
    option without a figure in that unit (a finite job's option whose hours are unknown),
    which the cost reasons then describe."""
    within, ref = balanced
    own = {
        "total": c.total_cost,
        "per_million": c.price_per_million_tokens,
        "per_million_training": c.price_per_million_training_tokens,
        "hourly": c.price_per_hour,
    }[ref.unit]
    if own is None:
        return None
    if ref.unit == "hourly":
        money = t("money_hourly", lang, money=ref.figure)
    else:
        money = t("money", lang, money=money_text(ref.figure))
    unit = f"cheapest_{ref.unit}" + ("_images" if images and ref.unit == "per_million" else "")
    words = {"what": t(unit, lang), "cheapest": money,
             "pct": round(ref.premium * 100)}  # fmt: skip
    if not within:
        said = t("rank_balanced_over", lang, **words)
    else:
        said = t("rank_balanced_throughput" if serving else "rank_balanced_fast", lang, **words)
    if ref.unit == "per_million_training" and c.price_per_hour is not None:
        # the option's own figure is said nowhere else (the answer has no field for it)
        mine = t("balanced_own_training", lang, pmt=money_text(own), price=c.price_per_hour)
        said = f"{said}{'' if lang == 'zh' else ' '}{mine}"
    return said


def summary(
    lang: Lang,
    display_name: str,
    c: Candidate | None,
    accel: str,
    serving: bool,
    no_fit: list[str] | None = None,
    alternative: str | None = None,
    over_budget: str | None = None,
    image_model: bool = False,
    cities: Sequence[str] = (),
    abroad: bool = False,
    encoded_len: int | None = None,
    untimed: str = "unknown",
    pairs: bool = False,
) -> str:
    """The one sentence a chatbot says (two when the top option is unpriced and a priced
    alternative exists). ``image_model``: a served image model (diffusion, CNN, ViT) has
    no decode; its rate is in images per second. ``untimed``: why a training option has no
    hours (:func:`untimed_clause`). ``over_budget``: the sentence of :func:`over_budget`
    when the budget removed every priced option (said instead of asking for a quote).
    ``cities``: where to buy it (the
    regions asked, or its only one); ``abroad``: all of them are outside mainland China.
    ``encoded_len``: a served encoder's tokens per sequence (no decode; its rate is in
    sequences per second encoded; ``pairs``: a reranker's, in query–passage pairs scored
    per second)."""
    if c is None:
        reasons = no_fit or []
        first = reasons[0] if reasons else t("no_option", lang)
        detail = f"{reasons[1]}" if len(reasons) > 1 else ""
        return f"{first}{detail}" if lang == "zh" else f"{first} {detail}".strip()
    text = _summary_line(
        lang, display_name + _where(cities, lang), c, accel, serving, image_model, encoded_len,
        untimed, pairs,
    ) + _summary_tail(c, cities, abroad, lang)  # fmt: skip
    # only a finite job's subscription says it (one comparison for every other answer)
    od_total = on_demand_total(c) if c.offer.billing == "monthly" and not serving else None
    if od_total is not None:
        assert c.total_cost is not None
        assert c.hours is not None
        text += t("summary_on_demand", lang, total=c.total_cost, hours=c.hours,
                  od_total=od_total, about=_on_demand_rate(c, lang)["about"])  # fmt: skip
    if c.price_per_hour is None:
        if alternative:
            text += (
                f"它的价格未知；有价格的最便宜方案是 {alternative}。"
                if lang == "zh"
                else f" Its price is unknown; the cheapest priced option is {alternative}."
            )
        elif over_budget:
            text += over_budget if lang == "zh" else f" {over_budget}"
        else:
            text += (
                "没有可核实的公开价格，请向云厂商询价。"
                if lang == "zh"
                else " No verifiable public price exists: ask the provider for a quote."
            )
    return text


def _where(cities: Sequence[str], lang: Lang) -> str:
    """Where to buy the option, after its provider's name (``""``: not said)."""
    if not cities:
        return ""
    return f"（{'、'.join(cities)}）" if lang == "zh" else f" in {', '.join(cities)}"


def _summary_tail(c: Candidate, cities: Sequence[str], abroad: bool, lang: Lang) -> str:
    """What the summary adds after its first sentence whatever the job's length: that the
    place to buy is outside mainland China, and the figures nobody confirmed."""
    text = ""
    if abroad:
        text = (
            f"该地域在中国大陆以外（{'、'.join(cities)}）：数据出境，可能需要在云厂商的国际站另开账号。"
            if lang == "zh"
            else f" {', '.join(cities)} is outside mainland China: data leaves the mainland, "
            "and the cloud's international site may need a separate account."
        )
    return text + _unconfirmed(c, lang)


SummaryFrame = tuple[str, bool, str]
"""What :func:`framed_summary` fills in: the first sentence up to its hours, whether the
option is a spot estimate (its total is at the on-demand price) and the tail."""


def summary_frame(
    lang: Lang,
    display_name: str,
    c: Candidate,
    accel: str,
    serving: bool,
    cities: Sequence[str] = (),
    abroad: bool = False,
) -> SummaryFrame | None:
    """The summary of a priced option of a finite job but for its hours and total
    (:func:`framed_summary`), or ``None`` where the summary says more (open-ended
    serving's rate, an unknown price, a subscription's on-demand comparison, which
    depends on the hours): it reads only the option's offer, its nodes, its price per hour
    and where it is sold, so that the answers of one class at other lengths share it (the
    arguments are :func:`summary`'s; whether the option is timed is not read here)."""
    if serving or c.price_per_hour is None or c.offer.billing == "monthly":
        return None
    head, spot = _summary_head(lang, display_name + _where(cities, lang), c, accel)
    return head, spot is not None, _summary_tail(c, cities, abroad, lang)


def framed_summary(frame: SummaryFrame, c: Candidate, lang: Lang) -> str:
    """:func:`summary` of ``c``, an option with hours, from its :func:`summary_frame`:
    the same text."""
    head, spot, tail = frame
    assert c.hours is not None
    return head + _timed_ending(lang, c.hours, c.total_cost, spot) + tail


def over_budget(budget: float, cheapest: str, lang: Lang) -> str:
    """The budget removed every option with a known price and only unpriced ones are left
    (review 7 J23: a ¥100 budget, the cheapest priced plan ¥261, and a 24 h H20 of unknown
    price recommended without a word on it): said once, with the cheapest priced plan."""
    if lang == "zh":
        return (
            f"没有已知价格的方案在 ¥{budget:,.0f} 的预算之内：有价格的最便宜方案是{cheapest}。"
            "列出的方案没有公开价格，无法核对是否超出预算，请先询价。"
        )
    return (
        f"No option with a known price fits your budget of ¥{budget:,.0f}: the cheapest is "
        f"{cheapest}. The options listed have no published price, so they cannot be checked "
        "against the budget: get a quote first."
    )


def _unconfirmed(c: Candidate, lang: Lang) -> str:
    """What the summary must add when the top option stands on figures nobody confirmed
    (review 4 F18): a price borrowed from other clouds' card-hour prices, a row whose
    specs the catalog's sources disagree on or lack. Said in the one sentence a chatbot
    repeats, since a six-figure plan is committed on it."""
    offer = c.offer
    parts: list[str] = []
    if borrowed(offer.price):
        acc = offer.instance.accelerator or ""
        parts.append(
            f"价格是借用其他云 {acc} 卡时价的估算，不是该云的报价"
            if lang == "zh"
            else f"the price is an estimate from another cloud's {acc} card-hour price, not "
            "this cloud's quote"
        )
    if offer.instance.confidence == "low":
        parts.append(
            "该机型的规格未经核实（来源不全或相互矛盾）"
            if lang == "zh"
            else "this type's specs are not confirmed (its sources are thin or disagree)"
        )
    if not parts:
        return ""
    # a quote for a price nobody quoted, the specs for a type nobody confirmed (review 8
    # K14: a borrowed price on a well-sourced type was told to confirm its specs too)
    quote = borrowed(offer.price) or (c.price_per_hour is not None and _estimated(c))
    specs = offer.instance.confidence == "low"
    if lang == "zh":
        ask = {(True, True): "下单前请向云厂商询价并核实规格。",
               (True, False): "下单前请向云厂商询价。",
               (False, True): "下单前请核实规格。"}[(quote, specs)]  # fmt: skip
        return "注意：" + "；".join(parts) + "。" + ask
    ask = {(True, True): "Get a quote and confirm the specs", (True, False): "Get a quote",
           (False, True): "Confirm the specs"}[(quote, specs)]  # fmt: skip
    return f" Note: {'; '.join(parts)}. {ask} before committing."


def _spot_estimate(c: Candidate) -> tuple[float, float] | None:
    """(low, high) of an estimated spot price, or ``None``: a spot price is set by the
    market, so its estimate is said as a ceiling (the on-demand price the option is
    ranked at) with its range, never as "spot at ¥X/h" (review 3 R7)."""
    price = c.offer.price
    if c.offer.billing != "spot" or price is None or not price.estimated:
        return None
    if price.price_low is None or price.price_high is None or c.price_per_hour is None:
        return None
    return price.price_low, price.price_high


def _on_demand_said(c: Candidate, spot: tuple[float, float], lang: Lang) -> str:
    """The on-demand price a spot estimate is capped at, said so that it agrees with the
    range (review 4 F10): when that price is itself an estimate whose range reaches the
    spot range's top, both figures; else the one."""
    assert c.price_per_hour is not None
    if spot[1] > c.price_per_hour + 0.005:
        return (
            f"，而按量价格本身也是估算：约 ¥{c.price_per_hour:,.2f}/小时，上限 ¥{spot[1]:,.2f}/小时"
            if lang == "zh"  # inside the summary's own bracket (review 8 K13)
            else f", itself estimated at about ¥{c.price_per_hour:,.2f}/h and at most "
            f"¥{spot[1]:,.2f}/h"
        )
    return (
        f"约 ¥{c.price_per_hour:,.2f}/小时"
        if lang == "zh"
        else f" of about ¥{c.price_per_hour:,.2f}/h"
    )


def _estimated(c: Candidate) -> bool:
    price = c.offer.price
    return price is not None and price.estimated


def _summary_head(
    lang: Lang, display_name: str, c: Candidate, accel: str
) -> tuple[str, tuple[float, float] | None]:
    """The summary's first sentence up to its price, and the option's spot estimate
    (:func:`_spot_estimate`)."""
    offer = c.offer
    billing = billing_name(offer.billing, lang)
    name = offer.instance.instance_type
    nodes = f"{c.nodes}×" if c.nodes > 1 else ""
    spot = _spot_estimate(c)
    if lang == "zh":
        head = f"推荐{display_name} {nodes}{name}（{accel}，{billing}"
        price = (
            "，价格未知）"
            if c.price_per_hour is None
            else f"：价格由市场决定，估算 ¥{spot[0]:,.2f}–¥{spot[1]:,.2f}/小时，最高为按量价格"
            f"{_on_demand_said(c, spot, lang)}）"
            if spot is not None
            else f" 约 ¥{c.price_per_hour:,.2f}/小时，估算价）"
            if _estimated(c)
            else f" ¥{c.price_per_hour:,.2f}/小时）"
        )
        return head + price, spot
    head = f"Rent {nodes}{name} on {display_name} ({accel}, {billing}"
    price = (
        ", price unknown)"
        if c.price_per_hour is None
        else f": the market sets the price, estimated ¥{spot[0]:,.2f}–¥{spot[1]:,.2f}/h, at "
        f"most the on-demand price{_on_demand_said(c, spot, lang)})"
        if spot is not None
        else f" at about ¥{c.price_per_hour:,.2f}/h, estimated)"
        if _estimated(c)
        else f" at ¥{c.price_per_hour:,.2f}/h)"
    )
    return head + price, spot


def _timed_ending(lang: Lang, hours: float, total: float | None, spot: bool) -> str:
    """The end of a timed finite job's first sentence: its hours and total (``spot``: a
    spot estimate, whose total is at the on-demand price)."""
    if lang == "zh":
        most = "以按量价格估算，" if spot else ""  # review 7 J21: never 按按
        cost = f"，{most}总费用约 ¥{total:,.2f}" if total is not None else "，总费用未知"
        return f"，预计 {duration(hours, lang)}{cost}。"
    most = " at the on-demand price" if spot else ""
    cost = f", about ¥{total:,.2f} in total{most}" if total is not None else ", cost unknown"
    return f": about {duration(hours, lang)}{cost}."


def _summary_line(
    lang: Lang,
    display_name: str,
    c: Candidate,
    accel: str,
    serving: bool,
    image_model: bool,
    encoded_len: int | None = None,
    untimed: str = "unknown",
    pairs: bool = False,
) -> str:
    device = c.offer.instance.accelerator or ""
    tps = c.throughput_tokens_per_s
    head, spot = _summary_head(lang, display_name, c, accel)
    if lang == "zh":
        if serving and image_model:
            if not tps:
                return f"{head}，每秒可处理的图像数无法估计。"
            return f"{head}，预计每秒约 {image_rate(tps)} 张图像{image_every(tps, lang)}。"
        if serving and encoded_len:
            if not tps:
                return f"{head}，编码吞吐无法估计。"
            if pairs:
                return (
                    f"{head}，预计每秒打分的查询–段落对约 {tps / encoded_len:,.0f} 个"
                    f"（约 {tps:,.0f} tokens/秒）。"
                )
            return (
                f"{head}，预计每秒编码约 {tps / encoded_len:,.0f} 条序列"
                f"（约 {tps:,.0f} tokens/秒）。"
            )
        if serving:
            if not tps:
                return f"{head}，解码吞吐无法估计。"
            return f"{head}，预计解码吞吐约 {tps:,.0f} tokens/秒。"
        if c.hours is None:
            return f"{head}；{untimed_clause(untimed, lang, device)}。"
        return head + _timed_ending(lang, c.hours, c.total_cost, spot is not None)
    if serving and image_model:
        if not tps:
            return f"{head}; how many images per second it serves is not estimated."
        return f"{head}; expect about {image_rate(tps)} images/s{image_every(tps, lang)}."
    if serving and encoded_len:
        if not tps:
            return f"{head}; how many sequences per second it encodes is not estimated."
        if pairs:
            return (
                f"{head}; expect about {tps / encoded_len:,.0f} query–passage pairs "
                f"scored per second (about {tps:,.0f} tokens/s)."
            )
        return (
            f"{head}; expect about {tps / encoded_len:,.0f} sequences per second "
            f"encoded (about {tps:,.0f} tokens/s)."
        )
    if serving:
        if not tps:
            return f"{head}; its decode throughput cannot be estimated."
        return f"{head}; expect about {tps:,.0f} decode tokens/s."
    if c.hours is None:
        return f"{head}; {untimed_clause(untimed, lang, device)}."
    return head + _timed_ending(lang, c.hours, c.total_cost, spot is not None)


def serving_budget(budget: float, c: Candidate, lang: Lang) -> str | None:
    """What a budget means to an open-ended serving option (review 5 G3): the whole months
    of a subscription it pays for, or the hours it buys on demand or spot; ``None`` when
    the option has no price."""
    price = c.offer.price
    if c.offer.billing == "monthly" and price is not None and price.price_per_month:
        month = price.price_per_month * c.nodes
        months = int(budget // month)
        months_en = f"{months} whole month" + ("" if months == 1 else "s")
        return t("budget_months", lang, budget=budget, months=months, months_en=months_en,
                 month=month)  # fmt: skip
    if not c.price_per_hour:
        return None
    hours = budget / c.price_per_hour
    shown = f"{hours:,.0f}" if hours >= 10 else f"{hours:.1f}"
    return t("budget_hours", lang, budget=budget, per_hour=c.price_per_hour, hours=shown,
             days=hours / 24)  # fmt: skip
