"""The scenario suite's jobs: what a person asks, and what an expert expects of the answer.

Each case is a request body plus the expert's expectations of the top option (``top``)
and of every option (``every``); the invariants every answer must meet whatever the job
(fits, can run, priced or honestly unpriced, right size, clean words) live in
``test_scenarios.py``. Sources of the expectations: the seed articles in
``/work/shared/seeds`` (CPU:GPU 4–8:1, a T4 holds an int4 13B, V100/T4 for medium jobs,
RDMA for multi-node), the memory rules of the sizing engine, and the capability table.
"""

from __future__ import annotations

from typing import Any

Case = dict[str, Any]


def wl(kind: str, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, **fields}


CASES: list[Case] = [
    # --- the seed articles' scenarios -------------------------------------------------
    {"id": "seed-qlora-7b-budget", "expert": "QLoRA of a 7B on a budget: one 16-24 GB GPU, "
     "priced, well under ¥200.",
     "body": {"workload": wl("finetune", model="llama-2-7b", method="qlora", seq_len=1024,
                             tokens=2e7)},
     "top": {"devices": (1, 1), "memory": (16, 24), "priced": True, "max_total": 200}},
    {"id": "seed-t4-int4-13b", "expert": "The seed's claim: one 16 GB T4 serves an int4 13B.",
     "body": {"workload": wl("inference", model="llama-2-13b", precision="int4"),
              "constraints": {"accelerators": ["T4"]}},
     "top": {"devices": (1, 1), "accelerators": {"T4"}}},
    {"id": "seed-llm-pretrain-cluster", "expert": "Pre-training a 7B on 200B tokens is a "
     "cluster job on A100/A800/H800-class parts, ranked by time.",
     "body": {"workload": wl("pretrain", model="llama-2-7b", tokens=2e11), "objective": "time"},
     "top": {"devices": (8, 4096), "accelerators": {"A100-40GB", "A100-80GB", "A800-80GB",
                                                    "H800", "H100-80GB", "H20"}}},
    {"id": "seed-cv-resnet", "expert": "ResNet-50 on ImageNet-scale samples fits one GPU.",
     "body": {"workload": wl("finetune", model="resnet-50", method="full", tokens=1.2e7)},
     "top": {"devices": (1, 1), "priced": True}},
    {"id": "seed-cv-yolo", "expert": "YOLOv8-m training: one GPU.",
     "body": {"workload": wl("finetune", model="yolov8-m", method="full", tokens=1e6)},
     "top": {"devices": (1, 1)}},
    {"id": "seed-nlp-bert", "expert": "BERT-base fine-tune: one small GPU, cheap.",
     "body": {"workload": wl("finetune", model="bert-base", method="full", tokens=1e8,
                             seq_len=512)},
     "top": {"devices": (1, 1), "priced": True}},
    {"id": "seed-serving-7b", "expert": "Online serving of a 7B in bf16: one 24 GB+ GPU with "
     "BF16; price per hour ranked.",
     "body": {"workload": wl("inference", model="qwen2.5-7b")},
     "top": {"devices": (1, 2), "memory": (24, 96)}},
    {"id": "seed-preprocess", "expert": "Data preparation is CPU-only, sized to the data.",
     "body": {"workload": wl("preprocess", data_gb=500)},
     "top": {"cpu_only": True}},
    {"id": "seed-cpu-ratio", "expert": "The host follows 4-8 vCPUs per GPU (seed practice).",
     "body": {"workload": wl("finetune", model="llama-2-7b", method="lora", tokens=5e7)},
     "top": {"vcpus_per_device": (4, 64)}},
    # --- LLM training ---------------------------------------------------------------
    {"id": "full-7b", "expert": "Full fine-tune of a 7B needs ZeRO over several GPUs or an "
     "80 GB part (16 B/param mixed-precision AdamW).",
     "body": {"workload": wl("finetune", model="llama-2-7b", method="full", tokens=1e8)},
     "every": {"min_device_memory_total": 100}},
    {"id": "full-70b", "expert": "Full fine-tune of a 70B: over 1 TB of model states; many "
     "GPUs, multi-node only over RDMA.",
     "body": {"workload": wl("finetune", model="llama-2-70b", method="full", tokens=1e8),
              "objective": "time", "top_k": 10},
     "every": {"devices": (8, 4096), "multi_node_rdma": True}},
    {"id": "eight-gpus", "expert": "\"On 8 GPUs\" means 8, on one node when a type has 8.",
     "body": {"workload": wl("finetune", model="llama-2-13b", method="full", tokens=1e8),
              "constraints": {"accelerator_count": 8}, "top_k": 10},
     "every": {"devices": (8, 8), "nodes": (1, 1)}},
    {"id": "sixteen-gpus", "expert": "16 GPUs: two 8-GPU nodes over RDMA.",
     "body": {"workload": wl("finetune", model="llama-2-70b", method="full", tokens=1e8),
              "constraints": {"accelerator_count": 16}},
     "every": {"devices": (16, 16), "nodes": (2, 16), "multi_node_rdma": True}},
    {"id": "one-gpu-max", "expert": "max_accelerators 1: single-GPU options only.",
     "body": {"workload": wl("finetune", model="qwen2.5-7b", method="qlora", tokens=2e7),
              "constraints": {"max_accelerators": 1}, "top_k": 20},
     "every": {"devices": (1, 1)}},
    {"id": "lora-qwen3-8b", "expert": "LoRA of Qwen3-8B: one 24-48 GB GPU.",
     "body": {"workload": wl("finetune", model="Qwen/Qwen3-8B", method="lora", tokens=5e7)},
     "top": {"devices": (1, 2), "memory": (24, 96), "priced": True}},
    {"id": "qlora-72b", "expert": "QLoRA of a 72B: a 4-bit base of ~40 GB, one 80 GB GPU or "
     "two 48 GB.",
     "body": {"workload": wl("finetune", model="qwen2.5-72b", method="qlora", tokens=1e7)},
     "top": {"devices": (1, 2), "memory": (40, 96)}},
    {"id": "no-tokens-no-subscription", "expert": "Unknown length: never a subscription; "
     "on-demand with the monthly break-even as information.",
     "body": {"workload": wl("finetune", model="deepseek-r1-distill-qwen-7b", method="lora"),
              "top_k": 20},
     "every": {"billing": {"on_demand", "spot"}}},
    {"id": "glm4-zh", "expert": "GLM-4-9B LoRA asked in Chinese: a zh answer naming 阿里云/腾讯云.",
     "body": {"workload": wl("finetune", model="glm-4-9b", method="lora", tokens=3e7),
              "lang": "zh"},
     "summary": ("推荐",)},
    {"id": "internlm-lora", "expert": "InternLM2.5-7B LoRA: one 24 GB+ GPU.",
     "body": {"workload": wl("finetune", model="internlm2_5-7b-chat", method="lora",
                             tokens=2e7)},
     "top": {"devices": (1, 1), "memory": (24, 96)}},
    {"id": "baichuan-lora", "expert": "Baichuan2-13B LoRA: one 40-80 GB GPU or two 24 GB.",
     "body": {"workload": wl("finetune", model="baichuan2-13b", method="lora", tokens=2e7)},
     "top": {"devices": (1, 2)}},
    {"id": "yi-34b-qlora", "expert": "Yi-1.5-34B QLoRA: one 40-48 GB GPU class.",
     "body": {"workload": wl("finetune", model="yi-1.5-34b", method="qlora", tokens=1e7)},
     "top": {"devices": (1, 2), "memory": (24, 96)}},
    {"id": "llama32-3b-full", "expert": "Full fine-tune of Llama-3.2-3B: ~50 GB of states; "
     "one 80 GB or ZeRO over a few GPUs.",
     "body": {"workload": wl("finetune", model="llama-3.2-3b", method="full", tokens=5e7)},
     "every": {"min_device_memory_total": 48}},
    {"id": "mixtral-qlora", "expert": "Mixtral-8x7B QLoRA: 47B in 4-bit, one 40 GB+ GPU.",
     "body": {"workload": wl("finetune", model="mixtral-8x7b", method="qlora", tokens=1e7)},
     "top": {"memory": (40, 96)}},
    {"id": "fp8-pretrain", "expert": "FP8 training only on FP8 tensor cores (Hopper/Ada).",
     "body": {"workload": wl("pretrain", model="qwen3-0.6b", tokens=1e10, precision="fp8"),
              "top_k": 20},
     "every": {"accelerators": {"H800", "H20", "L20", "L40S", "L4", "H100-80GB",
                                "RTX-4090D"}}},
    {"id": "budget", "expert": "A ¥100 budget: every option's total is within it.",
     "body": {"workload": wl("finetune", model="llama-2-7b", method="qlora", tokens=2e7),
              "constraints": {"budget": 100}, "top_k": 10},
     "every": {"max_total": 100, "priced": True}},
    {"id": "deadline", "expert": "A 48 h deadline: every option finishes in time.",
     "body": {"workload": wl("pretrain", model="llama-2-7b", tokens=2e10),
              "constraints": {"deadline_hours": 48}, "top_k": 10},
     "every": {"max_hours": 48}},
    {"id": "hourly-cap", "expert": "¥20/h cap: every option is priced at or below it.",
     "body": {"workload": wl("finetune", model="llama-2-7b", method="qlora", tokens=2e7),
              "constraints": {"max_price_per_hour": 20}, "top_k": 20},
     "every": {"max_hourly": 20, "priced": True}},
    {"id": "cuda-only", "expert": "cuda_required: no Ascend option.",
     "body": {"workload": wl("finetune", model="llama-2-7b", method="lora", tokens=2e7),
              "constraints": {"cuda_required": True}, "top_k": 50},
     "every": {"no_ascend": True}},
    # --- regions and providers ------------------------------------------------------
    {"id": "region-shanghai", "expert": "cn-shanghai: every option sold there.",
     "body": {"workload": wl("finetune", model="llama-2-7b", method="qlora", tokens=2e7),
              "constraints": {"regions": ["cn-shanghai"]}, "top_k": 10},
     "every": {"region": "cn-shanghai"}},
    {"id": "region-tencent-beijing", "expert": "ap-beijing is Tencent's Beijing.",
     "body": {"workload": wl("inference", model="qwen2.5-7b"),
              "constraints": {"regions": ["ap-beijing"]}},
     "every": {"providers": {"tencent"}}},
    {"id": "region-huawei-beijing", "expert": "cn-north-4 is Huawei's Beijing 4 (its GPU "
     "rows publish no regions yet, so a CPU job).",
     "body": {"workload": wl("preprocess", data_gb=50),
              "constraints": {"regions": ["cn-north-4"]}},
     "every": {"providers": {"huawei"}}},
    {"id": "volcano-unpriced", "expert": "Volcano Engine publishes no prices here: the "
     "smallest sufficient machine first, honestly unpriced.",
     "body": {"workload": wl("finetune", model="llama-2-7b", method="lora", tokens=2e7),
              "constraints": {"providers": ["火山引擎"]}, "top_k": 10},
     "top": {"devices": (1, 1), "priced": False}, "every": {"providers": {"volcengine"}},
     "summary": ("价格未知",)},
    {"id": "aliyun-alias", "expert": "aliyun = Alibaba Cloud.",
     "body": {"workload": wl("finetune", model="llama-2-7b", method="qlora", tokens=2e7),
              "constraints": {"providers": ["aliyun"]}, "lang": "en"},
     "every": {"providers": {"alibaba"}}, "summary": ("Alibaba Cloud",)},
    {"id": "region-typo", "expert": "cn-bejing is a typo: 400 naming cn-beijing.",
     "body": {"workload": wl("finetune", model="llama-2-7b", tokens=2e7),
              "constraints": {"regions": ["cn-bejing"]}},
     "status": 400, "suggest": "cn-beijing"},
    # --- inference ------------------------------------------------------------------
    {"id": "serve-72b", "expert": "Qwen2.5-72B in bf16 (145 GB): tensor parallel over "
     "several GPUs.",
     "body": {"workload": wl("inference", model="qwen2.5-72b"), "top_k": 10},
     "every": {"devices": (2, 64)}},
    {"id": "serve-72b-v100", "expert": "On V100 the 72B runs in FP16 with the Volta engine "
     "caveat, said on every option.",
     "body": {"workload": wl("inference", model="qwen2.5-72b"),
              "constraints": {"accelerators": ["V100"]}, "lang": "en"},
     "every": {"warns": ("no BF16", "Volta")}},
    {"id": "serve-fp8", "expert": "FP8 serving only on FP8 hardware.",
     "body": {"workload": wl("inference", model="llama-3.1-8b", precision="fp8"), "top_k": 20},
     "every": {"accelerators": {"H800", "H20", "L20", "L40S", "L4", "H100-80GB",
                                "RTX-4090D"}}},
    {"id": "serve-moe-int4", "expert": "Qwen3-30B-A3B in int4: ~16 GB of weights, one GPU.",
     "body": {"workload": wl("inference", model="qwen3-30b-a3b", precision="int4")},
     "top": {"devices": (1, 1)}},
    {"id": "serve-deepseek-int4", "expert": "DeepSeek-V3/R1 in int4: ~340 GB, a full 8-GPU "
     "node of 80 GB+ parts at least.",
     "body": {"workload": wl("inference", model="deepseek-r1", precision="int4")},
     "every": {"min_device_memory_total": 340}},
    {"id": "serve-deepseek-v3-bf16-spans-servers", "expert": "DeepSeek-V3 in BF16 (the upcast "
     "of its FP8 release, ~1,250 GiB of weights): no server holds it, so replicas over several "
     "servers, tensor parallel within each and pipeline stages across, as vLLM serves it.",
     "body": {"workload": wl("inference", model="deepseek-v3"), "lang": "en"},
     "every": {"nodes": (2, 16), "min_device_memory_total": 1250}},
    {"id": "batch-7b", "expert": "Batch generation with a known output: hours and total known.",
     "body": {"workload": wl("inference", model="qwen2.5-7b", output_tokens=1e8)},
     "top": {"priced": True, "hours_known": True}},
    {"id": "serve-ascend-no-bandwidth", "expert": "910B4 has no published bandwidth: no "
     "decode rate and no per-token price, with a warning.",
     "body": {"workload": wl("inference", model="qwen2.5-7b"),
              "constraints": {"accelerators": ["昇腾910B4"]}, "lang": "en"},
     "every": {"no_throughput": True, "warns": ("no published memory bandwidth",)}},
    {"id": "serve-ascend-910b3", "expert": "910B3 decodes at the Atlas A2 bandwidth "
     "(1.6 TB/s, Huawei's CANN docs): a decode rate on every option.",
     "body": {"workload": wl("inference", model="qwen2.5-7b"),
              "constraints": {"accelerators": ["昇腾910B3"]}, "lang": "en"},
     "every": {"min_throughput": 1}},
    {"id": "serve-target-rate", "expert": "A throughput target adds replicas; a device "
     "whose rate is unknown cannot promise it and is not offered.",
     "body": {"workload": wl("inference", model="llama-2-7b", target_tokens_per_s=300),
              "top_k": 5},
     "every": {"min_throughput": 300}},
    {"id": "serve-long-context", "expert": "64 sequences of 8k on a 14B: the KV cache needs "
     "more than one 24 GB card.",
     "body": {"workload": wl("inference", model="qwen2.5-14b", concurrency=64,
                             context_len=8192)},
     "every": {"min_device_memory_total": 48}},
    # --- Ascend ---------------------------------------------------------------------
    {"id": "ascend-lora", "expert": "LoRA on Ascend 910B: CANN migration said on every option.",
     "body": {"workload": wl("finetune", model="qwen2.5-7b", method="lora", tokens=2e7),
              "constraints": {"accelerators": ["910B"]}, "lang": "en"},
     "every": {"warns": ("CANN",), "accelerator_prefix": "Ascend-910B"}},
    {"id": "ascend-pretrain", "expert": "Pre-training on Ascend NPUs: time is estimated.",
     "body": {"workload": wl("pretrain", model="qwen3-1.7b", tokens=2e10),
              "constraints": {"accelerators": ["Ascend"]}},
     "top": {"hours_known": True}},
    {"id": "ascend-cuda-conflict", "expert": "Ascend with cuda_required contradicts itself.",
     "body": {"workload": wl("finetune", model="qwen2.5-7b", tokens=2e7),
              "constraints": {"accelerators": ["910B"], "cuda_required": True}},
     "status": 422},
    # --- review 3: billing and batching an expert expects --------------------------------
    {"id": "r3-batch-generation", "expert": "Generating 500M tokens with a 7B is an offline "
     "batch job: continuous batching at the engine's limit, days on one GPU for about "
     "¥1,300, not months at one sequence on a subscription.",
     "body": {"workload": wl("inference", model="qwen2.5-7b", prompt_len=1000,
                             output_tokens=5e8, context_len=1500), "lang": "en"},
     "top": {"devices": (1, 2), "max_total": 2000},
     "every": {"max_hours": 400}},
    {"id": "r3-cap-per-hour-of-use", "expert": "A ¥30/h cap on a 17-hour LoRA means ¥30 per "
     "hour of use: on demand, never a ¥5,190 month.",
     "body": {"workload": wl("finetune", model="qwen2.5-7b", method="lora", seq_len=2048,
                             tokens=5e7), "constraints": {"max_price_per_hour": 30},
              "top_k": 10, "lang": "en"},
     "every": {"billing": ("on_demand", "spot"), "max_hourly": 30, "max_total": 600}},
    {"id": "r3-short-job-no-month", "expert": "A 17-hour job is billed on demand: a month "
     "only pays off after 288-480 h.",
     "body": {"workload": wl("finetune", model="qwen2.5-7b", method="lora", seq_len=2048,
                             tokens=5e7), "top_k": 20},
     "every": {"billing": ("on_demand", "spot")}},
    {"id": "r3-open-training-per-token", "expert": "Training of unknown length on Tencent: "
     "the A100 trains each token for less than the cheaper-per-hour V100.",
     "body": {"workload": wl("finetune", model="qwen2.5-7b", method="lora", seq_len=2048),
              "constraints": {"providers": ["tencent"]}, "lang": "en"},
     "top": {"accelerators": {"A100-40GB", "A100-80GB"}}},
    {"id": "r3-prep-one-machine", "expert": "2 TB in 6 h needs about 19 vCPUs and 76 GiB: one "
     "machine that covers it, not 5 or 10 small nodes.",
     "body": {"workload": wl("preprocess", data_gb=2000, target_hours=6), "lang": "zh"},
     "top": {"cpu_only": True, "nodes": (1, 1), "min_vcpus": 19}},
    # --- preprocessing ----------------------------------------------------------------
    {"id": "prep-small", "expert": "50 GB: one small CPU machine.",
     "body": {"workload": wl("preprocess", data_gb=50)},
     "top": {"cpu_only": True, "nodes": (1, 1)}},
    {"id": "prep-fast", "expert": "2 TB in 2 h needs many vCPUs.",
     "body": {"workload": wl("preprocess", data_gb=2000, target_hours=2)},
     "top": {"cpu_only": True, "min_vcpus": 32}},
    {"id": "prep-min-vcpus", "expert": "min_vcpus 64 per node is respected.",
     "body": {"workload": wl("preprocess", data_gb=100), "constraints": {"min_vcpus": 64},
              "top_k": 10},
     "every": {"min_vcpus_per_node": 64}},
    # --- the hardware table -------------------------------------------------------------
    {"id": "t4-training-fp16", "expert": "BF16 training on T4 runs in FP16 (said).",
     "body": {"workload": wl("finetune", model="llama-2-7b", method="qlora", tokens=1e7),
              "constraints": {"accelerators": ["T4"]}, "lang": "en"},
     "every": {"warns": ("FP16 mixed precision",)}},
    # --- models asked for by their own name (same architecture as a preset) -----------
    {"id": "qwq-32b-by-name", "expert": "QwQ-32B served as asked: about 61 GiB of 16-bit "
     "weights, so every option holds at least 64 GB of accelerator memory in total.",
     "body": {"workload": wl("inference", model="Qwen/QwQ-32B", context_len=8192,
                             concurrency=8), "lang": "en", "top_k": 10},
     "top": {"devices": (1, 8)}, "every": {"min_device_memory_total": 64}},
    {"id": "qwen2-7b-qlora-by-name", "expert": "QLoRA of Qwen2-7B-Instruct (the Qwen2.5-7B "
     "architecture): one 16-24 GB GPU, priced.",
     "body": {"workload": wl("finetune", model="Qwen/Qwen2-7B-Instruct", method="qlora",
                             seq_len=2048, tokens=2e7), "lang": "zh"},
     "top": {"devices": (1, 1), "memory": (16, 24), "priced": True}},
    {"id": "yi-34b-qlora-by-name", "expert": "QLoRA of Yi-34B: about 18 GiB of 4-bit weights "
     "plus activations, so one GPU of 40 GB or more, or a few smaller ones.",
     "body": {"workload": wl("finetune", model="01-ai/Yi-34B", method="qlora", seq_len=2048,
                             tokens=2e7), "lang": "en", "top_k": 10},
     "every": {"min_device_memory_total": 40}},
    # --- tried as users would (session 6): serving to a target, zh names ---------------
    {"id": "serve-llama31-8b-hf-id-target", "expert": "Llama-3.1-8B by its Hugging Face id "
     "at 1,000 tokens/s: every option reaches the target (batched servers), priced first.",
     "body": {"workload": wl("inference", model="meta-llama/Llama-3.1-8B",
                             target_tokens_per_s=1000), "lang": "en", "top_k": 5},
     "top": {"priced": True, "devices": (1, 8)}, "every": {"min_throughput": 1000}},
    {"id": "serve-qwen3-32b-huawei-zh", "expert": "Qwen3-32B on Huawei Cloud (named in "
     "Chinese) at 500 tokens/s: Huawei options only, each reaching the target; 64 GB+ in all "
     "for 61 GiB of 16-bit weights.",
     "body": {"workload": wl("inference", model="Qwen/Qwen3-32B", target_tokens_per_s=500),
              "constraints": {"providers": ["华为云"]}, "lang": "zh", "top_k": 5},
     "every": {"providers": {"huawei"}, "min_throughput": 500,
               "min_device_memory_total": 64}},
    {"id": "lora-qwen25-7b-zh-priced", "expert": "LoRA of Qwen2.5-7B on 50M tokens: one "
     "GPU of 24 GB or more is enough, priced, a few hours.",
     "body": {"workload": wl("finetune", model="qwen2.5-7b", method="lora", tokens=5e7),
              "lang": "zh"},
     "top": {"devices": (1, 1), "memory": (24, 96), "priced": True, "hours_known": True}},
]  # fmt: skip

ESTIMATES: list[Case] = [
    {"id": "est-7b-target-one-a10", "expert": "A 7B at 800 tokens/s on one A10: batched "
     "to what its KV cache holds (~600 tokens/s), short of the target, so two servers.",
     "body": {"workload": wl("inference", model="qwen2.5-7b", target_tokens_per_s=800),
              "placement": {"accelerator": "A10", "count": 1}},
     "expect": {"throughput": (400, 800), "nodes": 1, "replicas": 1, "fits": True,
                "says": ("as many as its KV cache holds", "about 2 such servers")}},
    {"id": "est-70b-target-two-h800-servers", "expert": "Llama-3.3-70B at 5,000 tokens/s "
     "on 16 H800: two servers, each two copies of tensor parallel 4, the lowest degree that "
     "holds it (131 GiB of bf16 weights: 33 GiB per card at TP 4 with room for 34 requests' "
     "KV cache of 72 usable GiB; TP 2's 66 GiB per card leaves none), 34 requests per copy "
     "reaching the target together (session 13: one copy of TP 8 at 52 per server before).",
     "body": {"workload": wl("inference", model="llama-3.3-70b", target_tokens_per_s=5000),
              "placement": {"accelerator": "H800", "count": 16}},
     "expect": {"throughput": (5000, 8000), "nodes": 2, "replicas": 4, "fits": True,
                "pipeline": 1, "tensor_parallel": 4, "says": ("2 replicas over 2 servers",
                                                               "2 copies of the model")}},
    {"id": "est-deepseek-v3-fp8-two-servers", "expert": "DeepSeek-V3 in FP8 (~625 GiB of "
     "weights) on 2x8 H800: too big for one server, so TP 8 x PP 2 as vLLM advises, one replica.",
     "body": {"workload": wl("inference", model="deepseek-v3", precision="fp8",
                             concurrency=32),
              "placement": {"accelerator": "H800", "count": 16}},
     "expect": {"nodes": 2, "replicas": 1, "fits": True, "pipeline": 2, "tensor_parallel": 8,
                "says": ("2 pipeline stages across them",)}},
    {"id": "est-7b-batch-job-two-servers", "expert": "1B output tokens of a 7B on 16 A10: "
     "two servers serve 32 sequences each, 16 on each of their 2 copies of tensor parallel 4 "
     "(about 4,650 tokens/s: 8 one-GPU copies of 4 sequences would decode about 1,950, one "
     "copy of tensor parallel 8 pays a PCIe ring across the sockets); time follows their "
     "joint rate.",
     "body": {"workload": wl("inference", model="qwen2.5-7b", output_tokens=1e9,
                             concurrency=64),
              "placement": {"accelerator": "A10", "count": 16}},
     "expect": {"nodes": 2, "replicas": 4, "fits": True, "tensor_parallel": 4,
                "hours": (20, 160)}},
]  # fmt: skip
"""``/v1/estimate`` jobs: what an expert expects of the placement it describes."""
