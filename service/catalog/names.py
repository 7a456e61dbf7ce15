"""Names people use for providers and price sources, and the names answers show.

Users and chatbots say ``aliyun``, ``阿里云``, ``腾讯云`` or ``火山引擎``, not the plugin ids
``alibaba``, ``tencent``, ``volcengine``; answers in Chinese say 阿里云, in English
Alibaba Cloud. Price sources are stored as exact provenance (a repository path at a
commit, a URL); reasons name them the way a person would, and the exact text moves to the
option's ``price_source_ref``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from service.catalog.models import normalize_name

PROVIDER_ALIASES: dict[str, str] = {
    "aliyun": "alibaba",
    "alibabacloud": "alibaba",
    "alicloud": "alibaba",
    "阿里云": "alibaba",
    "阿里": "alibaba",
    "tencentcloud": "tencent",
    "qcloud": "tencent",
    "腾讯云": "tencent",
    "腾讯": "tencent",
    "huaweicloud": "huawei",
    "华为云": "huawei",
    "华为": "huawei",
    "volc": "volcengine",
    "volcano": "volcengine",
    "volcanoengine": "volcengine",
    "火山引擎": "volcengine",
    "火山云": "volcengine",
    "火山": "volcengine",
}
"""Folded alias -> provider id (keys as :func:`fold_provider` leaves them)."""


def fold_provider(name: str) -> str:
    """Case, spaces, ``-``/``_`` and dots do not matter: ``Alibaba Cloud`` = ``alibabacloud``."""
    return re.sub(r"[\s_\-.]+", "", name.strip().lower())


def resolve_provider(name: str, known: Iterable[str], fold: bool = True) -> str | None:
    """The loaded provider a user's name denotes, or ``None``. ``fold=False`` (URL paths,
    which have one spelling): only the exact id or an alias exactly as listed."""
    names = set(known)
    if name in names:
        return name
    if not fold:
        target = PROVIDER_ALIASES.get(name)
        return target if target in names else None
    folded = fold_provider(name)
    for provider in names:
        if fold_provider(provider) == folded:
            return provider
    target = PROVIDER_ALIASES.get(folded)
    return target if target in names else None


_PAREN = re.compile(r"^(?P<en>[^(（]+?)\s*[(（](?P<zh>[^)）]+)[)）]\s*$")


def localized_name(display_name: str, lang: str) -> str:
    """``Alibaba Cloud (阿里云)`` -> ``阿里云`` in zh, ``Alibaba Cloud`` in en (a display
    name without that shape is shown as it is)."""
    match = _PAREN.match(display_name)
    if match is None:
        return display_name
    return match["zh"] if lang == "zh" else match["en"]


_SOURCE_LABELS: tuple[tuple[str, str, str], ...] = (
    ("qcloud-documents", "Tencent Cloud price overview, official documentation",
     "腾讯云官方文档《价格总览》"),
    ("gpu-prices", "ArthurChiao's published GPU price comparison, copied from the "
     "purchase page", "ArthurChiao 博客转录自购买页的 GPU 价格对比"),
    ("bbs.huaweicloud.com", "a Huawei Cloud community forum quote", "华为云社区论坛报价"),
    ("service/catalog/price_model.py", "Suanli's estimate from this catalog's confirmed prices",
     "Suanli 依据本目录已确认价格的估算"),
)  # fmt: skip
"""Substring of a stored source -> how a person names it (en, zh)."""

_COMMIT = re.compile(r"\s*@[0-9a-f]{6,40}\b")
_INDEX_ID = re.compile(r"\s*\((?:search-)?index id[^)]*\)")
_URL_HOST = re.compile(r"^(?:https?://)?(?P<host>[a-z0-9.-]+\.[a-z]{2,})(?:/|$)", re.I)


def price_source_label(source: str, lang: str) -> str:
    """How a reason names a stored price source: known documents by their title, a URL
    by its site, anything else without commit hashes and store ids."""
    for needle, en, zh in _SOURCE_LABELS:
        if needle in source:
            return zh if lang == "zh" else en
    text = _INDEX_ID.sub("", _COMMIT.sub("", source)).strip()
    host = _URL_HOST.match(text)
    if host is not None:
        return host["host"]
    return text.split(":", 1)[0].strip() or text


CITY_NAMES: dict[str, str] = {
    "北京": "beijing", "上海": "shanghai", "广州": "guangzhou", "深圳": "shenzhen",
    "杭州": "hangzhou", "成都": "chengdu", "重庆": "chongqing", "南京": "nanjing",
    "青岛": "qingdao", "张家口": "zhangjiakou", "乌兰察布": "wulanchabu",
    "呼和浩特": "huhehaote", "河源": "heyuan", "福州": "fuzhou", "贵阳": "guiyang",
    "香港": "hongkong", "新加坡": "singapore", "东京": "tokyo", "首尔": "seoul",
    "曼谷": "bangkok", "雅加达": "jakarta", "法兰克福": "frankfurt",
}  # fmt: skip
"""Chinese city name -> the romanized name most clouds put in their region ids
(``北京`` -> ``cn-beijing`` on Alibaba Cloud and Volcano Engine, ``ap-beijing`` on
Tencent Cloud)."""

CITY_REGIONS: dict[str, tuple[str, ...]] = {
    "beijing": ("cn-north-4",),
    "shanghai": ("cn-east-3",),
    "guangzhou": ("cn-south-1",),
    "guiyang": ("cn-southwest-2",),
}
"""Region ids that do not spell their city (Huawei Cloud's: cn-north-4 is Beijing 4,
cn-east-3 Shanghai 1, cn-south-1 Guangzhou, cn-southwest-2 Guiyang 1; Huawei Cloud
"Regions and Endpoints", https://developer.huaweicloud.com/intl/en-us/endpoint)."""


def _city(name: str) -> str | None:
    """The romanized city a region name means: ``北京``, ``北京市``, ``Beijing``."""
    key = name.strip().lower().removesuffix("市")
    if key in CITY_NAMES:
        return CITY_NAMES[key]
    folded = re.sub(r"[\s_\-.]+", "", key)
    return folded if folded in CITY_REGIONS or folded in CITY_NAMES.values() else None


def region_suggestions(name: str, regions: Iterable[str], n: int = 3) -> list[str]:
    """Closest region ids (``cn-bejing`` -> ``cn-beijing``; a city's id on every cloud:
    ``北京`` or ``beijing`` -> ``cn-beijing``, ``ap-beijing``, ``cn-north-4``)."""
    import difflib

    pool = sorted(set(regions))
    city = _city(name)
    if city is not None:
        spelled = [region for region in pool if city in normalize_name(region)]
        unspelled = [region for region in CITY_REGIONS.get(city, ()) if region in pool]
        if spelled or unspelled:
            return spelled + unspelled
    found = difflib.get_close_matches(name.lower(), pool, n=n, cutoff=0.6)
    city_key = normalize_name(name).removeprefix("cn").removeprefix("ap")
    for region in pool:
        if len(found) >= n:
            break
        if (
            city_key
            and len(city_key) > 3
            and city_key in normalize_name(region)
            and region not in found
        ):
            found.append(region)
    return found[:n]


_MAINLAND = True
_ABROAD = False
REGION_NAMES: dict[tuple[str, str], tuple[str, str, bool]] = {
    # Alibaba Cloud, "Regions and zones": https://www.alibabacloud.com/help/en/ecs/regions-and-zones
    **{("alibaba", r): (zh, en, _MAINLAND) for r, zh, en in (
        ("cn-qingdao", "青岛", "Qingdao"), ("cn-beijing", "北京", "Beijing"),
        ("cn-zhangjiakou", "张家口", "Zhangjiakou"), ("cn-huhehaote", "呼和浩特", "Hohhot"),
        ("cn-wulanchabu", "乌兰察布", "Ulanqab"), ("cn-hangzhou", "杭州", "Hangzhou"),
        ("cn-shanghai", "上海", "Shanghai"), ("cn-nanjing", "南京", "Nanjing"),
        ("cn-fuzhou", "福州", "Fuzhou"), ("cn-shenzhen", "深圳", "Shenzhen"),
        ("cn-heyuan", "河源", "Heyuan"), ("cn-guangzhou", "广州", "Guangzhou"),
        ("cn-chengdu", "成都", "Chengdu"))},
    **{("alibaba", r): (zh, en, _ABROAD) for r, zh, en in (
        ("cn-hongkong", "中国香港", "Hong Kong"), ("ap-northeast-1", "东京", "Tokyo"),
        ("ap-northeast-2", "首尔", "Seoul"), ("ap-southeast-1", "新加坡", "Singapore"),
        ("ap-southeast-3", "吉隆坡", "Kuala Lumpur"), ("ap-southeast-5", "雅加达", "Jakarta"),
        ("ap-southeast-6", "马尼拉", "Manila"), ("ap-southeast-7", "曼谷", "Bangkok"),
        ("us-east-1", "弗吉尼亚", "Virginia"), ("us-west-1", "硅谷", "Silicon Valley"),
        ("eu-central-1", "法兰克福", "Frankfurt"), ("eu-west-1", "伦敦", "London"),
        ("me-east-1", "迪拜", "Dubai"))},
    # Tencent Cloud, "Regions and Availability Zones":
    # https://www.tencentcloud.com/document/product/213/6091
    **{("tencent", r): (zh, en, _MAINLAND) for r, zh, en in (
        ("ap-guangzhou", "广州", "Guangzhou"), ("ap-shanghai", "上海", "Shanghai"),
        ("ap-beijing", "北京", "Beijing"), ("ap-nanjing", "南京", "Nanjing"),
        ("ap-chengdu", "成都", "Chengdu"), ("ap-chongqing", "重庆", "Chongqing"))},
    **{("tencent", r): (zh, en, _ABROAD) for r, zh, en in (
        ("ap-hongkong", "中国香港", "Hong Kong"), ("eu-frankfurt", "法兰克福", "Frankfurt"),
        ("ap-singapore", "新加坡", "Singapore"), ("na-siliconvalley", "硅谷", "Silicon Valley"),
        ("na-ashburn", "弗吉尼亚", "Virginia"), ("ap-bangkok", "曼谷", "Bangkok"),
        ("ap-jakarta", "雅加达", "Jakarta"), ("ap-seoul", "首尔", "Seoul"),
        ("ap-tokyo", "东京", "Tokyo"), ("sa-saopaulo", "圣保罗", "São Paulo"))},
    # Huawei Cloud, "Regions and Endpoints": https://developer.huaweicloud.com/intl/en-us/endpoint
    **{("huawei", r): (zh, en, _MAINLAND) for r, zh, en in (
        ("cn-north-1", "北京一", "Beijing 1"), ("cn-north-2", "北京二", "Beijing 2"),
        ("cn-north-4", "北京四", "Beijing 4"), ("cn-north-9", "乌兰察布一", "Ulanqab 1"),
        ("cn-east-2", "上海二", "Shanghai 2"), ("cn-east-3", "上海一", "Shanghai 1"),
        ("cn-south-1", "广州", "Guangzhou"), ("cn-southwest-2", "贵阳一", "Guiyang 1"))},
    **{("huawei", r): (zh, en, _ABROAD) for r, zh, en in (
        ("ap-southeast-1", "中国香港", "Hong Kong"), ("ap-southeast-2", "曼谷", "Bangkok"),
        ("ap-southeast-3", "新加坡", "Singapore"), ("ap-southeast-4", "雅加达", "Jakarta"),
        ("af-south-1", "约翰内斯堡", "Johannesburg"), ("tr-west-1", "伊斯坦布尔", "Istanbul"),
        ("me-east-1", "利雅得", "Riyadh"))},
    # Volcano Engine: the three mainland ids spell their city
    **{("volcengine", r): (zh, en, _MAINLAND) for r, zh, en in (
        ("cn-beijing", "北京", "Beijing"), ("cn-shanghai", "上海", "Shanghai"),
        ("cn-guangzhou", "广州", "Guangzhou"))},
}  # fmt: skip
"""(provider, region id) -> (city in Chinese, in English, in mainland China?), from each
cloud's region list above; a region not listed is named by its id."""


def region_city(provider: str, region: str, lang: str) -> str:
    """``广州`` / ``Guangzhou`` for Tencent's ``ap-guangzhou``; the id when unknown."""
    named = REGION_NAMES.get((provider, region))
    if named is None:
        return region
    return named[0] if lang == "zh" else named[1]


def outside_mainland(provider: str, regions: Iterable[str]) -> bool:
    """Every one of ``regions`` is a known region outside mainland China."""
    listed = [REGION_NAMES.get((provider, r)) for r in regions]
    return bool(listed) and all(n is not None and not n[2] for n in listed)


def _folded_city(english: str) -> str:
    """``Beijing 4`` -> ``beijing``, ``Hong Kong`` -> ``hongkong`` (as :data:`CITY_NAMES`
    romanizes)."""
    return re.sub(r"[\s\d]+", "", english.lower())


def city_regions(name: str, regions: Iterable[str]) -> tuple[tuple[str, ...], bool] | None:
    """The loaded region ids of the city ``name`` means (``上海``, ``上海市``, ``Shanghai``:
    ``cn-shanghai`` on Alibaba Cloud and Volcano Engine, ``ap-shanghai`` on Tencent Cloud,
    ``cn-east-2``/``cn-east-3`` on Huawei Cloud, per :data:`REGION_NAMES`), and whether one
    of them names another city on another cloud (Huawei's ``ap-southeast-1`` is Hong Kong,
    Alibaba's Singapore: such a city cannot be read as a set of ids, since the region
    filter matches ids on every cloud). ``None``: ``name`` is not a city (review 8 K3)."""
    city = _city(name)
    if city is None:
        return None
    chinese = next((zh for zh, latin in CITY_NAMES.items() if latin == city), None)

    def named(entry: tuple[str, str, bool]) -> bool:
        zh, en, _ = entry
        return _folded_city(en) == city or (chinese is not None and zh.startswith(chinese))

    loaded = set(regions)
    ids = sorted({r for (_, r), entry in REGION_NAMES.items() if r in loaded and named(entry)})
    mixed = any(not named(entry) for (_, r), entry in REGION_NAMES.items() if r in ids)
    return tuple(ids), mixed


def asked_region_ids(name: str, regions: frozenset[str]) -> tuple[str, ...] | str:
    """The loaded region ids a region constraint ``name`` asks for: itself when it is one
    of ``regions``, a city's ids on every cloud (:func:`city_regions`), else why it asks
    for none: ``"unknown"`` (neither), ``"ambiguous"`` (a city some of whose ids name
    other cities on other clouds), ``"absent"`` (a city no loaded cloud has a region in).
    What ``/v1/recommend`` and ``/v1/offers`` both read a region as (review 8 K3)."""
    if name in regions:
        return (name,)
    city = city_regions(name, regions)
    if city is None:
        return "unknown"
    ids, mixed = city
    if mixed:
        return "ambiguous"
    return ids if ids else "absent"
