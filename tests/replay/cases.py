"""The recorded requests: every route, every workload kind, both languages, the errors.

Each case is one request through the real app (the built-in providers, the in-process
cache). Names are unique: the recording is keyed by them. Add a case here, then regenerate
the recording (see :mod:`tests.replay.test_replay` for the command and when it is
legitimate).
"""

from __future__ import annotations

from typing import Any

import msgspec

Case = dict[str, Any]
"""``{name, method, path, query?, json?, body?, headers?}``."""

QLORA = {
    "kind": "finetune",
    "model": "qwen2.5-7b",
    "method": "qlora",
    "tokens": 20_000_000,
    "seq_len": 2048,
}
LORA = {
    "kind": "finetune",
    "model": "llama-3.1-8b",
    "method": "lora",
    "tokens": 50_000_000,
    "seq_len": 4096,
}
FULL_FT = {
    "kind": "finetune",
    "model": "qwen2.5-14b",
    "method": "full",
    "tokens": 100_000_000,
    "seq_len": 2048,
}
PRETRAIN = {
    "kind": "pretrain",
    "model": "qwen2.5-1.5b",
    "tokens": 30_000_000_000,
    "seq_len": 4096,
    "micro_batch_size": 4,
}
SERVING = {
    "kind": "inference",
    "model": "qwen2.5-14b",
    "context_len": 8192,
    "concurrency": 16,
    "output_tokens": 50_000_000,
}


def _recommend(name: str, body: dict[str, Any], **headers: str) -> Case:
    case: Case = {
        "name": f"recommend/{name}",
        "method": "POST",
        "path": "/v1/recommend",
        "json": body,
    }
    if headers:
        case["headers"] = {k.replace("_", "-"): v for k, v in headers.items()}
    return case


def _estimate(name: str, body: dict[str, Any]) -> Case:
    return {"name": f"estimate/{name}", "method": "POST", "path": "/v1/estimate", "json": body}


def _get(name: str, path: str, query: list[tuple[str, str]] | None = None) -> Case:
    return {"name": name, "method": "GET", "path": path, "query": query or []}


RECOMMEND: list[Case] = [
    _recommend("qlora-en", {"workload": QLORA, "constraints": {"max_nodes": 1}, "lang": "en"}),
    _recommend("qlora-zh", {"workload": QLORA, "lang": "zh"}),
    _recommend("qlora-4bit-top3", {"workload": {**QLORA, "quant_bits": 4}, "top_k": 3}),
    _recommend("lora-en", {"workload": LORA, "lang": "en"}),
    _recommend(
        "lora-all-linear",
        {"workload": {**LORA, "lora_targets": "all_linear", "lora_rank": 64}, "lang": "en"},
    ),
    _recommend("full-ft-time", {"workload": FULL_FT, "objective": "time", "lang": "en"}),
    _recommend("full-ft-balanced-zh", {"workload": FULL_FT, "objective": "balanced"}),
    _recommend(
        "full-ft-8gpus",
        {"workload": FULL_FT, "constraints": {"accelerator_count": 8}, "lang": "en"},
    ),
    _recommend(
        "finetune-no-tokens",
        {"workload": {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora"}, "lang": "en"},
    ),
    _recommend(
        "pretrain-deadline",
        {
            "workload": PRETRAIN,
            "constraints": {"deadline_hours": 336, "interruptible": True},
            "objective": "balanced",
        },
    ),
    _recommend(
        "pretrain-70b-multinode",
        {
            "workload": {
                "kind": "pretrain",
                "model": "llama-3-70b",
                "tokens": 1_000_000_000_000,
                "seq_len": 4096,
            },
            "constraints": {"max_nodes": 64},
            "lang": "en",
        },
    ),
    _recommend(
        "pretrain-budget", {"workload": PRETRAIN, "constraints": {"budget": 50_000}, "lang": "en"}
    ),
    _recommend(
        "pretrain-custom-model",
        {
            "workload": {
                "kind": "pretrain",
                "model": {
                    "params_b": 3.0,
                    "layers": 28,
                    "hidden": 3072,
                    "heads": 24,
                    "kv_heads": 8,
                    "intermediate": 8192,
                    "vocab": 151_936,
                },
                "tokens": 5_000_000_000,
            },
            "lang": "en",
        },
    ),
    _recommend(
        "moe-mixtral-lora",
        {
            "workload": {
                "kind": "finetune",
                "model": "mixtral-8x7b",
                "method": "lora",
                "tokens": 10_000_000,
            },
            "lang": "en",
        },
    ),
    _recommend(
        "serving-zh",
        {
            "workload": SERVING,
            "constraints": {"providers": ["alibaba", "tencent"], "billing": ["monthly"]},
            "top_k": 3,
            "lang": "zh",
        },
    ),
    _recommend("serving-en", {"workload": SERVING, "lang": "en"}),
    _recommend(
        "serving-int4",
        {"workload": {**SERVING, "precision": "int4", "concurrency": 4}, "lang": "en"},
    ),
    _recommend(
        "serving-70b-target",
        {
            "workload": {
                "kind": "inference",
                "model": "llama-3.1-70b",
                "context_len": 4096,
                "concurrency": 32,
                "target_tokens_per_s": 2000,
            },
            "lang": "en",
        },
    ),
    _recommend(  # no concurrency: each server batched to the target (N1)
        "serving-14b-target-batched",
        {
            "workload": {
                "kind": "inference",
                "model": "qwen2.5-14b",
                "target_tokens_per_s": 1000,
            },
            "lang": "zh",
        },
    ),
    _recommend(
        "serving-deepseek-v3",
        {
            "workload": {
                "kind": "inference",
                "model": "deepseek-v3",
                "context_len": 4096,
                "concurrency": 8,
            },
            "constraints": {"max_nodes": 4},
            "lang": "en",
        },
    ),
    _recommend(
        "serving-open-ended",
        {"workload": {"kind": "inference", "model": "qwen2.5-7b"}, "lang": "zh"},
    ),
    _recommend(
        "cv-resnet-train",
        {
            "workload": {
                "kind": "pretrain",
                "model": "resnet-50",
                "tokens": 100_000_000,
                "image_size": 224,
                "micro_batch_size": 64,
            },
            "lang": "en",
        },
    ),
    _recommend(
        "cv-vit-finetune",
        {
            "workload": {
                "kind": "finetune",
                "model": "vit-b-16",
                "method": "full",
                "tokens": 10_000_000,
                "image_size": 224,
            },
            "lang": "zh",
        },
    ),
    _recommend(
        "cv-yolo-inference",
        {
            "workload": {
                "kind": "inference",
                "model": "yolov8-m",
                "concurrency": 4,
                "image_size": 640,
            },
            "lang": "en",
        },
    ),
    _recommend(
        "cv-sd-inference",
        {"workload": {"kind": "inference", "model": "sd-1.5", "concurrency": 2}, "lang": "zh"},
    ),
    _recommend(
        "bert-finetune",
        {
            "workload": {
                "kind": "finetune",
                "model": "bert-base",
                "method": "full",
                "tokens": 5_000_000,
                "seq_len": 512,
            },
            "lang": "en",
        },
    ),
    _recommend(
        "rlhf-dpo",
        {
            "workload": {
                "kind": "rlhf",
                "model": "qwen2.5-7b",
                "algorithm": "dpo",
                "method": "lora",
                "tokens": 10_000_000,
            },
            "lang": "en",
        },
    ),
    _recommend(
        "rlhf-ppo-zh",
        {
            "workload": {
                "kind": "rlhf",
                "model": "qwen2.5-7b",
                "algorithm": "ppo",
                "tokens": 5_000_000,
            },
            "lang": "zh",
        },
    ),
    _recommend(
        "preprocess",
        {"workload": {"kind": "preprocess", "data_gb": 500, "target_hours": 4}, "lang": "en"},
    ),
    _recommend(
        "ascend-910b",
        {"workload": FULL_FT, "constraints": {"accelerators": ["910B"]}, "lang": "zh"},
    ),
    _recommend(
        "ascend-huawei-en",
        {"workload": QLORA, "constraints": {"providers": ["huawei"]}, "lang": "en"},
    ),
    _recommend(
        "cuda-required", {"workload": FULL_FT, "constraints": {"cuda_required": True}, "lang": "en"}
    ),
    _recommend(
        "region-beijing",
        {"workload": QLORA, "constraints": {"regions": ["cn-beijing"]}, "lang": "en"},
    ),
    _recommend(
        "region-shanghai-tencent",
        {
            "workload": LORA,
            "constraints": {"providers": ["tencent"], "regions": ["ap-shanghai"]},
            "lang": "zh",
        },
    ),
    _recommend(
        "volcengine-only",
        {"workload": SERVING, "constraints": {"providers": ["volcengine"]}, "lang": "en"},
    ),
    _recommend(
        "accelerators-a100-h800",
        {"workload": FULL_FT, "constraints": {"accelerators": ["A100", "H800"]}, "lang": "en"},
    ),
    _recommend(
        "max-price", {"workload": QLORA, "constraints": {"max_price_per_hour": 10}, "lang": "en"}
    ),
    _recommend(
        "tiny-budget-relax", {"workload": FULL_FT, "constraints": {"budget": 1}, "lang": "en"}
    ),
    _recommend(
        "tight-deadline-zh",
        {"workload": PRETRAIN, "constraints": {"deadline_hours": 1}, "lang": "zh"},
    ),
    _recommend(
        "spot-interruptible",
        {
            "workload": LORA,
            "constraints": {"billing": ["spot"], "interruptible": True},
            "lang": "en",
        },
    ),
    _recommend(
        "billing-on-demand",
        {
            "workload": LORA,
            "constraints": {"billing": ["on_demand"]},
            "objective": "time",
            "top_k": 10,
            "lang": "en",
        },
    ),
    _recommend(
        "headroom-host",
        {
            "workload": QLORA,
            "constraints": {
                "min_headroom_pct": 40,
                "min_vcpus": 16,
                "min_memory_gib": 64,
                "max_accelerators": 2,
            },
            "lang": "en",
        },
    ),
    _recommend("top-k-1", {"workload": QLORA, "top_k": 1, "lang": "en"}),
    _recommend("top-k-50", {"workload": SERVING, "top_k": 50, "lang": "en"}),
    _recommend("accept-language-en", {"workload": QLORA}, accept_language="en-US,en;q=0.9"),
    _recommend("accept-language-zh", {"workload": QLORA}, accept_language="zh-CN"),
    _recommend(
        "no-fit",
        {
            "workload": {
                "kind": "finetune",
                "model": "llama-3.1-405b",
                "method": "full",
                "tokens": 1_000_000,
            },
            "constraints": {"max_nodes": 1},
            "lang": "en",
        },
    ),
    # errors
    _recommend("err-unknown-model", {"workload": {**QLORA, "model": "qwen2.5-7"}, "lang": "en"}),
    _recommend("err-unknown-field", {"workload": {**QLORA, "seq_length": 4096}}),
    _recommend(
        "err-unknown-provider", {"workload": QLORA, "constraints": {"providers": ["alibba"]}}
    ),
    _recommend(
        "err-unknown-accelerator", {"workload": QLORA, "constraints": {"accelerators": ["A1000"]}}
    ),
    _recommend(
        "err-unknown-region", {"workload": QLORA, "constraints": {"regions": ["cn-bejing"]}}
    ),
    _recommend(
        "err-spot-not-interruptible-422",
        {"workload": SERVING, "constraints": {"billing": ["spot"]}},
    ),
    _recommend(
        "err-cuda-ascend-422",
        {"workload": QLORA, "constraints": {"cuda_required": True, "accelerators": ["910B"]}},
    ),
    _recommend("err-bad-kind", {"workload": {"kind": "train", "model": "qwen2.5-7b"}}),
    _recommend("err-string-number", {"workload": {**QLORA, "tokens": "20000000"}}),
    _recommend("err-top-k-zero", {"workload": QLORA, "top_k": 0}),
    _recommend("err-quant-bits-lora", {"workload": {**LORA, "quant_bits": 4}}),
    _recommend("err-bad-lang", {"workload": QLORA, "lang": "fr"}),
    {
        "name": "recommend/err-malformed",
        "method": "POST",
        "path": "/v1/recommend",
        "body": '{"workload": ',
        "headers": {"content-type": "application/json"},
    },
    {
        "name": "recommend/err-duplicate-key",
        "method": "POST",
        "path": "/v1/recommend",
        "body": '{"workload": {"kind": "finetune", "model": "qwen2.5-7b", "model": "x"}}',
        "headers": {"content-type": "application/json"},
    },
    {
        "name": "recommend/err-form-415",
        "method": "POST",
        "path": "/v1/recommend",
        "body": "workload=x",
        "headers": {"content-type": "application/x-www-form-urlencoded"},
    },
    {
        "name": "recommend/err-empty-body",
        "method": "POST",
        "path": "/v1/recommend",
        "body": "",
        "headers": {"content-type": "application/json"},
    },
]

ESTIMATE: list[Case] = [
    _estimate("qlora-a10", {"workload": QLORA, "placement": {"accelerator": "A10", "count": 1}}),
    _estimate(
        "pretrain-a100-zero1",
        {
            "workload": PRETRAIN,
            "placement": {"accelerator": "A100-80GB", "count": 8, "zero_stage": 1},
        },
    ),
    _estimate("serving-no-placement", {"workload": SERVING}),
    _estimate(
        "full-ft-910b3",
        {"workload": FULL_FT, "placement": {"accelerator": "Ascend-910B3", "count": 8}},
    ),
    _estimate(
        "err-family-not-a-device",
        {"workload": FULL_FT, "placement": {"accelerator": "910B", "count": 8}},
    ),
    _estimate(
        "serving-tp",
        {
            "workload": {
                "kind": "inference",
                "model": "llama-3.1-70b",
                "context_len": 4096,
                "concurrency": 8,
            },
            "placement": {"accelerator": "H800", "count": 4, "tensor_parallel": 4},
        },
    ),
    _estimate(
        "rlhf-grpo",
        {
            "workload": {
                "kind": "rlhf",
                "model": "qwen2.5-7b",
                "algorithm": "grpo",
                "tokens": 1_000_000,
            }
        },
    ),
    _estimate(
        "err-unknown-accelerator",
        {"workload": QLORA, "placement": {"accelerator": "A11", "count": 1}},
    ),
    _estimate("err-missing-workload", {"placement": {"accelerator": "A10"}}),
]

OFFERS: list[Case] = [
    _get("offers/default", "/v1/offers"),
    _get("offers/a100-price", "/v1/offers", [("accelerator", "A100"), ("sort", "price")]),
    _get(
        "offers/multi-accelerator",
        "/v1/offers",
        [("accelerator", "A100"), ("accelerator", "H800"), ("billing", "monthly")],
    ),
    _get(
        "offers/provider-region",
        "/v1/offers",
        [("provider", "alibaba"), ("region", "cn-beijing"), ("limit", "20")],
    ),
    _get(
        "offers/max-price",
        "/v1/offers",
        [("max_price", "20"), ("priced_only", "true"), ("sort", "price")],
    ),
    _get(
        "offers/min-specs",
        "/v1/offers",
        [("min_accelerators", "8"), ("min_accelerator_memory_gib", "64"), ("min_vcpus", "64")],
    ),
    _get(
        "offers/include-cpu",
        "/v1/offers",
        [("include_cpu", "true"), ("limit", "10"), ("offset", "5")],
    ),
    _get("offers/fold-regions", "/v1/offers", [("fold_regions", "true"), ("provider", "huawei")]),
    _get("offers/group-accelerator", "/v1/offers", [("group_by", "accelerator")]),
    _get(
        "offers/group-provider-region",
        "/v1/offers",
        [("group_by", "provider"), ("group_by", "region"), ("limit", "1")],
    ),
    _get("offers/err-unknown-param", "/v1/offers", [("acelerator", "A100")]),
    _get("offers/err-bad-sort", "/v1/offers", [("sort", "cheapest")]),
    _get("offers/err-bad-limit", "/v1/offers", [("limit", "ten")]),
    _get("offers/err-twice", "/v1/offers", [("limit", "1"), ("limit", "2")]),
    _get("offers/err-unknown-accelerator", "/v1/offers", [("accelerator", "A1000")]),
]

CATALOG: list[Case] = [
    _get("providers", "/v1/providers"),
    _get("providers/alibaba/instance-types", "/v1/providers/alibaba/instance-types"),
    _get("providers/huawei/instance-types", "/v1/providers/huawei/instance-types"),
    _get("providers/err-unknown", "/v1/providers/alibabba/instance-types"),
    _get("models", "/v1/models"),
    _get("accelerators", "/v1/accelerators"),
    _get("err-not-found", "/v1/nothing"),
    {"name": "err-method-not-allowed", "method": "DELETE", "path": "/v1/recommend"},
]

CASES: list[Case] = [*RECOMMEND, *ESTIMATE, *OFFERS, *CATALOG]


def request_body(case: Case) -> bytes | None:
    """The bytes sent: ``json`` encoded compactly, or the literal ``body``."""
    if "json" in case:
        return msgspec.json.encode(case["json"])
    body = case.get("body")
    return None if body is None else str(body).encode()
