"""Request examples of the contract: a QLoRA fine-tune, a pre-training run, a serving job.

Routes carry them in ``opt["examples"]`` (body examples) and :mod:`service.api.openapi` puts
them into the served document, after checking each one against the route's own body type
with the strict decoder: an example that stopped being valid fails at start-up, not in a
user's hands. Plain JSON (not structs) so they show only what a user would write.
"""

from __future__ import annotations

from typing import Any

Example = tuple[str, dict[str, Any]]
"""(one-line summary, JSON body)."""

QLORA: dict[str, Any] = {
    "kind": "finetune",
    "model": "qwen2.5-7b",
    "method": "qlora",
    "tokens": 20_000_000,
    "seq_len": 2048,
}
PRETRAIN: dict[str, Any] = {
    "kind": "pretrain",
    "model": "qwen2.5-1.5b",
    "tokens": 30_000_000_000,
    "seq_len": 4096,
    "micro_batch_size": 4,
}
SERVING: dict[str, Any] = {
    "kind": "inference",
    "model": "qwen2.5-14b",
    "context_len": 8192,
    "concurrency": 16,
    "output_tokens": 50_000_000,
}

RECOMMEND: dict[str, Example] = {
    "qlora": (
        "QLoRA fine-tune of Qwen2.5-7B on 20M tokens, one server, answer in English",
        {"workload": QLORA, "constraints": {"max_nodes": 1}, "lang": "en"},
    ),
    "pretrain": (
        "Pre-train a 1.5B model on 30B tokens within two weeks, interruptible allowed",
        {
            "workload": PRETRAIN,
            "constraints": {"deadline_hours": 336, "interruptible": True},
            "objective": "balanced",
        },
    ),
    "serving": (
        "Serve Qwen2.5-14B to 16 concurrent users on Alibaba or Tencent, monthly billing",
        {
            "workload": SERVING,
            "constraints": {"providers": ["alibaba", "tencent"], "billing": ["monthly"]},
            "top_k": 3,
            "lang": "zh",
        },
    ),
}

ESTIMATE: dict[str, Example] = {
    "qlora": (
        "QLoRA fine-tune of Qwen2.5-7B on one A10",
        {"workload": QLORA, "placement": {"accelerator": "A10", "count": 1}},
    ),
    "pretrain": (
        "Pre-train a 1.5B model on 8 A100-80GB with ZeRO-1",
        {
            "workload": PRETRAIN,
            "placement": {"accelerator": "A100-80GB", "count": 8, "zero_stage": 1},
        },
    ),
    "serving": (
        "Serve Qwen2.5-14B: memory for 16 sequences of 8k tokens, no placement",
        {"workload": SERVING},
    ),
}
