"""A refused value told as a sentence a chatbot can act on (expert review 3, R12).

msgspec says ``Invalid enum value 'LoRA'`` and ``Expected `float | null`, got `str```:
true, but a client cannot correct itself from it. Here the same refusal names the field,
the values it takes and the closest one (``method must be one of full, lora, qlora,
freeze, not 'LoRA'; did you mean lora?``), or what a number written as text should be
(``tokens must be a number, not the text '10M': write 10000000``), in English and — by
:func:`zh_refusal`, which reads those sentences back — in Chinese. ``suggestions`` carry
the values a client can send back as they are (JSON text for numbers and lists).

Built on the error path only; the enum values come from the request type itself.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Sequence

_VALUE_SYNONYMS: dict[str, str] = {
    # workload.kind
    "fine-tune": "finetune", "fine_tune": "finetune", "fine-tuning": "finetune",
    "finetuning": "finetune", "fine_tuning": "finetune", "sft": "finetune", "微调": "finetune",
    "pre-train": "pretrain", "pretraining": "pretrain", "pre-training": "pretrain",
    "预训练": "pretrain",
    "serving": "inference", "serve": "inference", "deploy": "inference", "推理": "inference",
    "部署": "inference",
    "preprocessing": "preprocess", "预处理": "preprocess", "数据处理": "preprocess",
    # lang
    "cn": "zh", "zh-cn": "zh", "zh_cn": "zh", "zh-hans": "zh", "chinese": "zh", "中文": "zh",
    "english": "en", "en-us": "en", "en_us": "en", "en-gb": "en", "英文": "en", "英语": "en",
    # objective
    "cheapest": "cost", "cheap": "cost", "price": "cost", "lowest_cost": "cost",
    "min_cost": "cost", "便宜": "cost", "最便宜": "cost", "省钱": "cost", "成本": "cost",
    "费用": "cost", "价格": "cost",
    "fastest": "time", "fast": "time", "speed": "time", "最快": "time", "快": "time",
    "时间": "time", "耗时": "time", "速度": "time",
    "balance": "balanced", "平衡": "balanced", "均衡": "balanced", "性价比": "balanced",
    # billing
    "ondemand": "on_demand", "on-demand": "on_demand", "payg": "on_demand",
    "postpaid": "on_demand", "按量": "on_demand", "按量付费": "on_demand",
    "hourly": "on_demand", "per_hour": "on_demand", "pay_as_you_go": "on_demand",
    "pay-as-you-go": "on_demand", "按小时": "on_demand", "按需": "on_demand",
    "yearly": "monthly", "annual": "monthly", "reserved": "monthly", "包年": "monthly",
    "preemptible": "spot", "竞价": "spot", "抢占式": "spot",
    "subscription": "monthly", "prepaid": "monthly", "包月": "monthly", "包年包月": "monthly",
    # method
    "full_finetune": "full", "full-finetune": "full", "全参": "full", "全参数": "full",
    "全量": "full",
    # framework: RL and training stacks that are not values, by how this API sizes them
    # (review 6 H8). verl's Megatron backend with vLLM rollouts is what `megatron` sizes;
    # OpenRLHF trains with DeepSpeed ZeRO (--zero_stage) and its vLLM engines default to
    # --vllm_tensor_parallel_size 1, a whole actor copy per engine as `deepspeed` sizes
    # (openrlhf/cli/train_ppo_ray.py @f5b3f08a, https://github.com/OpenRLHF/OpenRLHF);
    # TRL runs on the HF Trainer and its
    # trainers generate with the training model unless use_vllm (`hf`).
    "verl": "megatron", "openrlhf": "deepspeed", "deepspeed-chat": "deepspeed",
    "deepspeed_chat": "deepspeed", "dschat": "deepspeed", "trl": "hf",
    "transformers": "hf", "huggingface": "hf", "megatron-lm": "megatron",
    "megatron_lm": "megatron", "megatron-core": "megatron", "swift": "ms-swift",
    "llamafactory": "llama-factory", "llama_factory": "llama-factory",
    # booleans written as words (JSON true/false, where a field takes them)
    "yes": "true", "on": "true", "是": "true", "no": "false", "off": "false", "否": "false",
}  # fmt: skip
"""What people and chatbots write for a valid value (lower case) -> that value; used
only when the value is among those the field takes."""


def suggest_values(value: object, allowed: Sequence[str]) -> list[str]:
    """The valid values closest to ``value``: the same in another case, a known synonym
    (``fine-tune`` -> ``finetune``, ``便宜`` -> ``cost``), then by spelling."""
    text = str(value).strip()
    lowered = text.lower()
    found = [v for v in allowed if v.lower() == lowered]
    synonym = _VALUE_SYNONYMS.get(lowered) or _VALUE_SYNONYMS.get(lowered.replace(" ", "_"))
    if synonym is not None and synonym in allowed and synonym not in found:
        found.append(synonym)
    if found:  # the value in another case or words: nothing closer to add
        return found
    for close in difflib.get_close_matches(lowered, [v.lower() for v in allowed], 2, 0.6):
        original = next(v for v in allowed if v.lower() == close)
        if original not in found:
            found.append(original)
    return found[:3]


def _shown(value: object) -> str:
    return repr(value) if isinstance(value, str) else json.dumps(value)


RLHF_ALGORITHMS = ("ppo", "grpo", "dpo")
"""The values of an RLHF job's ``algorithm``, which chatbots send as its ``method`` (the
way the policy's weights are trained: full, LoRA ...)."""


def enum_refusal(field: str, value: object, allowed: Sequence[str]) -> tuple[str, list[str]]:
    """``method must be one of full, lora, qlora, freeze, not 'LoRA'; did you mean lora?``
    An RLHF algorithm sent as ``method`` is pointed at the field it belongs to
    (``"kind": "rlhf", "algorithm": "ppo"``), in code both languages read."""
    lowered = str(value).strip().lower()
    if field == "method" and lowered in RLHF_ALGORITHMS:
        hint = f'; did you mean "kind": "rlhf", "algorithm": "{lowered}"?'
        return f"{field} must be one of {', '.join(allowed)}, not {_shown(value)}{hint}", [
            "algorithm"
        ]
    suggestions = suggest_values(value, allowed)
    hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
    return f"{field} must be one of {', '.join(allowed)}, not {_shown(value)}{hint}", suggestions


_WORDS = {
    "int": ("an integer", "整数"), "float": ("a number", "数字"), "str": ("a string", "字符串"),
    "bool": ("true or false", "true 或 false"), "array": ("a list", "数组（列表）"),
    "object": ("an object", "对象"), "null": ("null", "null"),
}  # fmt: skip
_ZH_OF_EN = {en: zh for en, zh in _WORDS.values()}


def _wanted(types: str) -> str:
    """``float | null`` -> ``a number`` (null is what leaving a field out means)."""
    names = [t for t in types.split(" | ") if t != "null"] or ["null"]
    if set(names) == {"int", "float"}:
        names = ["float"]
    return " or ".join(_WORDS.get(t, (t, t))[0] for t in names)


_SCALES = {
    "k": 1e3, "千": 1e3, "w": 1e4, "万": 1e4, "m": 1e6, "mm": 1e6, "百万": 1e6, "千万": 1e7,
    "b": 1e9, "bn": 1e9, "g": 1e9, "亿": 1e8, "t": 1e12, "万亿": 1e12,
}  # fmt: skip
"""Count suffixes (``10M`` tokens, ``5亿``); ``k`` of a length is 1024 (``8k`` context)."""
_HOURS = {
    "h": 1.0, "hr": 1.0, "hrs": 1.0, "hour": 1.0, "hours": 1.0, "小时": 1.0, "个小时": 1.0,
    "时": 1.0, "d": 24.0, "day": 24.0, "days": 24.0, "天": 24.0, "日": 24.0, "w": 168.0,
    "week": 168.0, "weeks": 168.0, "周": 168.0, "星期": 168.0, "个星期": 168.0,
    "min": 1 / 60, "mins": 1 / 60, "minute": 1 / 60, "minutes": 1 / 60, "分钟": 1 / 60,
    "month": 730.0, "months": 730.0, "月": 730.0, "个月": 730.0,
}  # fmt: skip
"""Durations for fields in hours (``3天`` = 72); a month is 730 h, as monthly prices."""
_NUMBER = re.compile(r"^(?P<n>[0-9]*\.?[0-9]+(?:e[+-]?[0-9]{1,3})?)\s*(?P<unit>[^\s0-9.]*)$")
_NOISE = re.compile(r"[,_，\s]|^[¥￥$]|(?:元|块|rmb|cny|yuan)?(?:/(?:h|hr|hour|小时|时))?$")


_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}  # fmt: skip
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_NUMERAL = re.compile(f"^[{''.join(_ZH_DIGITS)}{''.join(_ZH_UNITS)}]+")


def _arabic(text: str) -> str:
    """``五千万`` -> ``5000万``, ``一亿`` -> ``1亿``, ``三天`` -> ``3天``, ``十二`` -> ``12``: a
    leading Chinese numeral below ten thousand in digits (review 10 R4: a chatbot passes
    the words its user typed); the scale after it (万, 亿, 小时) is read as for ``5千万``."""
    match = _ZH_NUMERAL.match(text)
    if match is None or not (set(match[0]) & {*_ZH_DIGITS, "十"}):
        return text
    total = digit = 0
    for char in match[0]:
        if char in _ZH_DIGITS:
            digit = _ZH_DIGITS[char]
        else:
            total += (digit or 1) * _ZH_UNITS[char]
            digit = 0
    return f"{total + digit}{text[match.end() :]}"


def number_from_text(field: str, raw: str, integer: bool) -> int | float | None:
    """The number a text such as ``10M``, ``1.5e7``, ``3天``, ``8k``, ``¥20/小时``, ``五千万``
    means for ``field``, or ``None`` when it is not one (or not whole where an integer is)."""
    text = _arabic(_NOISE.sub("", raw.strip().lower()))
    match = _NUMBER.match(text)
    if match is None:
        return None
    value, unit = float(match["n"]), match["unit"]
    if field.endswith("_hours") and unit in _HOURS:
        value *= _HOURS[unit]
    elif field.endswith("_len") and unit == "k":
        value *= 1024
    elif unit in _SCALES:
        value *= _SCALES[unit]
    elif unit not in ("", "%") and not (unit == "tokens" and field == "tokens"):
        return None
    if not math.isfinite(value):
        return None
    if value.is_integer():
        return int(value)
    return None if integer else round(value, 6)


def type_refusal(field: str, want: str, got: str | None, sent: object) -> tuple[str, list[str]]:
    """The sentence for a value of the wrong type (``want``/``got``: msgspec's names) and
    the value to send instead, when the one sent says it."""
    wanted = _wanted(want)
    if got == "str" and isinstance(sent, str) and wanted in ("a number", "an integer"):
        number = number_from_text(field, sent, wanted == "an integer")
        if number is not None:
            return (f"{field} must be {wanted}, not the text {sent!r}: write {number} "
                    "(without quotes)"), [str(number)]  # fmt: skip
        return f"{field} must be {wanted}, not the text {sent!r}", []
    if got == "str" and isinstance(sent, str) and wanted == "a list":
        fixed = json.dumps([sent], ensure_ascii=False)
        return f"{field} is a list, not a single value: write {fixed}", [fixed]
    if got is None:
        return f"{field} must be {wanted}", []
    return f"{field} must be {wanted}, not {_WORDS.get(got, (got, got))[0]}", []


def body_refusal(got: str | None) -> str:
    """The sentence for a body that is not a JSON object (``[]``, ``"x"``, ``3``)."""
    if got is None:
        return "the request body must be a JSON object"
    return f"the request body must be a JSON object, not {_WORDS.get(got, (got, got))[0]}"


BOUND = re.compile(r"^Expected `(?P<want>[^`]*)` (?P<op>[<>]=?) (?P<n>\S+)$")
"""msgspec's words for a broken bound (``Expected `int` >= 1``), in body and query."""


def bound_refusal(field: str, want: str, op: str, bound: str, sent: object = None) -> str:
    """``limit must be an integer <= 500`` (``, not 501`` when the value is known)."""
    number = float(bound)
    shown = f"{int(number)}" if number.is_integer() else bound
    text = f"{field} must be {_wanted(want)} {op} {shown}"
    return text if sent is None else f"{text}, not {_shown(sent)}"


_FIELD = r"(?P<field>[A-Za-z_][A-Za-z0-9_]*)"
_ZH_OPS = {">=": "≥", ">": ">", "<=": "≤", "<": "<"}
_REFUSALS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"^{_FIELD} must be one of (?P<values>.*), not (?P<value>.*?)"
                r"(?:; did you mean (?P<hint>.*)\?)?$"), "enum"),
    (re.compile(rf"^{_FIELD} must be (?P<want>a number|an integer), not the text "
                r"(?P<value>.*?)(?:: write (?P<n>\S+) \(without quotes\))?$"), "text"),
    (re.compile(rf"^{_FIELD} is a list, not a single value: write (?P<fixed>.*)$"), "list"),
    (re.compile(rf"^{_FIELD} must be (?P<want>.*?) (?P<op>[<>]=?) (?P<n>\S+?)"
                r"(?:, not (?P<value>.*))?$"), "bound"),
    (re.compile(rf"^{_FIELD} must be (?P<want>.*?)(?:, not (?P<got>.*))?$"), "type"),
)  # fmt: skip


def _zh_words(english: str) -> str:
    if english in _ZH_OF_EN:  # "true or false" is one word pair: "true 或 false"
        return _ZH_OF_EN[english]
    return "或".join(_ZH_OF_EN.get(w, w) for w in english.split(" or "))


_BODY = re.compile(r"^the request body must be a JSON object(?:, not (?P<got>.*))?$")


def zh_refusal(message: str) -> str | None:
    """A sentence of this module in Chinese, or ``None`` when it is not one of them."""
    body = _BODY.match(message)
    if body is not None:
        said = _zh_words(body["got"]) if body["got"] else ""
        gap = " " if said[:1].isascii() else ""  # "不能是 null", "不能是数组（列表）"
        got = f"，不能是{gap}{said}" if said else ""
        return f"请求体应为 JSON 对象{got}"
    for pattern, kind in _REFUSALS:
        m = pattern.match(message)
        if m is None:
            continue
        field = m["field"]
        if kind == "enum":
            hint = f"；是否想写 {m['hint']}？" if m["hint"] else ""
            return (
                f"{field} 应为 {'、'.join(m['values'].split(', '))} 之一，实际为 {m['value']}{hint}"
            )
        if kind == "text":
            want = "整数" if m["want"] == "an integer" else "数字"
            fix = f"：请写作 {m['n']}（不加引号）" if m["n"] else ""
            return f"{field} 应为{want}，实际为字符串 {m['value']}{fix}"
        if kind == "list":
            return f"{field} 应为数组（列表），不能是单个值：请写作 {m['fixed']}"
        if kind == "bound":
            sent = f"，实际为 {m['value']}" if m["value"] else ""
            return f"{field} 应为 {_ZH_OPS[m['op']]} {m['n']} 的{_zh_words(m['want'])}{sent}"
        got = f"，实际为{_zh_words(m['got'])}" if m["got"] else ""
        return f"{field} 应为{_zh_words(m['want'])}{got}"
    return None
