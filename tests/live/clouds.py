"""One test case per cloud: its stand-in, its adapter, a small catalog and the prices
the adapter must read back.

Instance type names and accelerator counts are real (shared/reference catalog facts).
Where shared/reference/price-facts.csv has a price for a type it is used (Tencent list
prices; the one Alibaba A100-80GB figure); every other amount is a synthetic stand-in
value chosen inside the plausibility ranges, marked ``# synthetic``. These numbers
test parsing; they are not claims about today's prices.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from service.catalog.live.adapter import Clock
from service.catalog.models import InstanceType, LivePriceSource

from .cloud_alibaba import AlibabaPrices
from .cloud_alibaba import action_of as alibaba_action
from .cloud_alibaba import error as alibaba_error
from .cloud_huawei import HuaweiPrices
from .cloud_huawei import action_of as huawei_action
from .cloud_huawei import error as huawei_error
from .cloud_tencent import TencentPrices, ZoneQuote
from .cloud_tencent import action_of as tencent_action
from .cloud_tencent import error as tencent_error
from .cloud_volcengine import VolcenginePrices
from .cloud_volcengine import action_of as volcengine_action
from .cloud_volcengine import error as volcengine_error
from .conftest import row
from .standin import ActionOf, Answer, Reply

Expected = dict[tuple[str, str], tuple[float, float | None, str]]
"""(instance_type, billing) -> (price_per_hour, price_per_month, source)."""

SourceFactory = Callable[[str | None, Mapping[str, str], Clock], LivePriceSource]


@dataclass
class CloudCase:
    name: str
    region: str
    catalog: tuple[InstanceType, ...]
    unpriced: str
    """A catalog type the stand-in does not quote (partial coverage)."""
    env: dict[str, str]
    answer: Answer
    action_of: ActionOf
    make_source: SourceFactory
    expected: Expected
    main_action: str
    """The action faults are injected into (the first one the adapter calls)."""
    throttle: Reply
    server_error: Reply
    malformed: Reply
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [r.instance_type for r in self.catalog]

    def __str__(self) -> str:
        return self.name


def alibaba() -> CloudCase:
    from plugins.alibaba.live import AlibabaLivePrices

    region = "cn-beijing"
    a100, t4, a10 = "ecs.gn7e-c16g1.4xlarge", "ecs.gn6i-c4g1.xlarge", "ecs.gn7i-c8g1.2xlarge"
    prices = AlibabaPrices(
        hourly={
            (region, a100): 34.74,  # shared/reference/price-facts.csv (Alibaba, secondary)
            (region, t4): 8.4,  # synthetic
        },
        monthly={(region, a100): 16800.0, (region, t4): 2700.0},  # synthetic
        spot={
            (region, a100): [  # synthetic
                ("cn-beijing-h", "2026-11-30T06:00:00Z", 12.5),
                ("cn-beijing-h", "2026-11-30T07:00:00Z", 11.9),
                ("cn-beijing-i", "2026-11-30T07:00:00Z", 12.2),
            ],
            (region, t4): [("cn-beijing-g", "2026-11-30T07:00:00Z", 1.9)],  # synthetic
        },
    )
    return CloudCase(
        name="alibaba",
        region=region,
        catalog=(row(a100, "A100-80GB", 1), row(t4, "T4", 1), row(a10, "A10", 1)),
        unpriced=a10,
        env={
            "ALIBABA_CLOUD_ACCESS_KEY_ID": "standin-ak",
            "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "standin-secret",
        },
        answer=prices.answer,
        action_of=alibaba_action,
        make_source=lambda endpoint, env, clock: AlibabaLivePrices(
            endpoint=endpoint, environ=env, timeout_s=5, clock=clock
        ),
        expected={
            (a100, "on_demand"): (34.74, None, "live:DescribePrice"),
            (a100, "monthly"): (round(16800.0 / 730, 6), 16800.0, "live:DescribePrice"),
            (a100, "spot"): (11.9, None, "live:DescribeSpotPriceHistory"),
            (t4, "on_demand"): (8.4, None, "live:DescribePrice"),
            (t4, "monthly"): (round(2700.0 / 730, 6), 2700.0, "live:DescribePrice"),
            (t4, "spot"): (1.9, None, "live:DescribeSpotPriceHistory"),
        },
        main_action="DescribePrice",
        throttle=alibaba_error(
            400, "Throttling.User", "Request was denied due to user flow control."
        ),
        server_error=alibaba_error(
            503, "ServiceUnavailable", "The service is temporarily unavailable."
        ),
        malformed=Reply(
            200,
            {
                "RequestId": "standin-malformed",
                "PriceInfo": {"Price": {"Currency": "CNY", "TradePrice": "n/a"}},
            },
        ),
        extra={"prices": prices},
    )


def tencent() -> CloudCase:
    from plugins.tencent.live import TencentLivePrices

    region = "ap-beijing"
    t4, a100, v100 = "GN7.2XLARGE32", "GT4.4XLARGE96", "GN10Xp.2XLARGE40"
    prices = TencentPrices(
        quotes={
            region: [
                # on-demand and monthly amounts: price-facts.csv (Tencent 标准刊例价)
                ZoneQuote("ap-beijing-5", t4, "POSTPAID_BY_HOUR", 8.68),
                ZoneQuote("ap-beijing-7", t4, "POSTPAID_BY_HOUR", 8.68),
                ZoneQuote("ap-beijing-5", t4, "PREPAID", 2500.0),
                ZoneQuote("ap-beijing-5", t4, "SPOTPAID", 2.1, list_amount=8.68),  # synthetic
                ZoneQuote("ap-beijing-7", t4, "SPOTPAID", 1.95, list_amount=8.68),  # synthetic
                ZoneQuote("ap-beijing-6", a100, "POSTPAID_BY_HOUR", 28.64, status="SOLD_OUT"),
                ZoneQuote("ap-beijing-6", a100, "PREPAID", 13748.0),
            ]
        }
    )
    return CloudCase(
        name="tencent",
        region=region,
        catalog=(row(t4, "T4", 1), row(a100, "A100-40GB", 1), row(v100, "V100-32GB", 1)),
        unpriced=v100,
        env={"TENCENTCLOUD_SECRET_ID": "standin-id", "TENCENTCLOUD_SECRET_KEY": "standin-key"},
        answer=prices.answer,
        action_of=tencent_action,
        make_source=lambda endpoint, env, clock: TencentLivePrices(
            endpoint=endpoint, environ=env, timeout_s=5, clock=clock
        ),
        expected={
            (t4, "on_demand"): (8.68, None, "live:DescribeZoneInstanceConfigInfos"),
            (t4, "monthly"): (
                round(2500.0 / 730, 6),
                2500.0,
                "live:DescribeZoneInstanceConfigInfos",
            ),
            (t4, "spot"): (1.95, None, "live:DescribeZoneInstanceConfigInfos"),
            (a100, "on_demand"): (28.64, None, "live:DescribeZoneInstanceConfigInfos"),
            (a100, "monthly"): (
                round(13748.0 / 730, 6),
                13748.0,
                "live:DescribeZoneInstanceConfigInfos",
            ),
        },
        main_action="DescribeZoneInstanceConfigInfos",
        throttle=tencent_error("RequestLimitExceeded", "请求的次数超过了频率限制。"),
        server_error=Reply(502, b"<html>502 Bad Gateway</html>", content_type="text/html"),
        malformed=Reply(
            200,
            {
                "Response": {
                    "InstanceTypeQuotaSet": [
                        {
                            "Zone": "ap-beijing-5",
                            "InstanceType": t4,
                            "InstanceChargeType": "POSTPAID_BY_HOUR",
                            "Price": {"UnitPrice": "abc", "ChargeUnit": "HOUR"},
                        }
                    ],
                    "RequestId": "standin-malformed",
                }
            },
        ),
        extra={"prices": prices},
    )


def huawei() -> CloudCase:
    from plugins.huawei.live import HuaweiLivePrices

    region = "cn-north-4"
    t4x1, t4x8, p100 = "pi2.3xlarge.4", "pi2.16xlarge.4", "p1.2xlarge.8"
    prices = HuaweiPrices(
        hourly={(region, f"{t4x1}.linux"): 9.2, (region, f"{t4x8}.linux"): 70.1},  # synthetic
        monthly={(region, f"{t4x1}.linux"): 3600.0, (region, f"{t4x8}.linux"): 27500.0},
        monthly_best_offer={(region, f"{t4x8}.linux"): 24750.0},  # synthetic
    )
    return CloudCase(
        name="huawei",
        region=region,
        catalog=(row(t4x1, "T4", 1), row(t4x8, "T4", 8), row(p100, "P100", 1)),
        unpriced=p100,
        env={
            "HUAWEICLOUD_SDK_AK": "standin-ak",
            "HUAWEICLOUD_SDK_SK": "standin-sk",
            "HUAWEICLOUD_SDK_PROJECT_ID": "standin-project",
            "HUAWEICLOUD_SDK_DOMAIN_ID": "standin-domain",
        },
        answer=prices.answer,
        action_of=huawei_action,
        make_source=lambda endpoint, env, clock: HuaweiLivePrices(
            endpoint=endpoint, environ=env, timeout_s=5, clock=clock
        ),
        expected={
            (t4x1, "on_demand"): (9.2, None, "live:ListOnDemandResourceRatings"),
            (t4x8, "on_demand"): (70.1, None, "live:ListOnDemandResourceRatings"),
            (t4x1, "monthly"): (round(3600.0 / 730, 6), 3600.0, "live:ListRateOnPeriodDetail"),
            (t4x8, "monthly"): (round(24750.0 / 730, 6), 24750.0, "live:ListRateOnPeriodDetail"),
        },
        main_action="ListOnDemandResourceRatings",
        throttle=huawei_error(429, "CBC.0250", "消息流量控制。"),
        server_error=huawei_error(500, "CBC.0999", "其他错误。"),
        malformed=Reply(
            200,
            {
                "currency": "CNY",
                "product_rating_results": [{"id": "0", "amount": "abc", "measure_id": 1}],
            },
        ),
        extra={"prices": prices},
    )


def volcengine() -> CloudCase:
    from plugins.volcengine.live import VolcanoPriceCodes, VolcengineLivePrices

    region = "cn-beijing"
    h20x8, a800 = "ecs.hpcpni3ln.45xlarge", "ecs.ebmhpcpni2l.32xlarge"
    codes = {  # synthetic codes: the real ones are operator configuration
        h20x8: VolcanoPriceCodes(
            product="ECS", configuration_code="standin-hpcpni3ln-45xl", charge_item_code="standin"
        ),
        a800: VolcanoPriceCodes(product="ECS", configuration_code="standin-ebmhpcpni2l-32xl"),
    }
    prices = VolcenginePrices(
        hourly={("ECS", "standin-hpcpni3ln-45xl"): ("160.00", "152.00")},  # synthetic
        monthly={("ECS", "standin-hpcpni3ln-45xl"): ("78000.00", "70200.00")},  # synthetic
    )
    return CloudCase(
        name="volcengine",
        region=region,
        catalog=(row(h20x8, "H20", 8), row(a800, "A800-80GB", 8)),
        unpriced=a800,
        env={"VOLCENGINE_ACCESS_KEY": "standin-ak", "VOLCENGINE_SECRET_KEY": "standin-sk"},
        answer=prices.answer,
        action_of=volcengine_action,
        make_source=lambda endpoint, env, clock: VolcengineLivePrices(
            codes=codes, endpoint=endpoint, environ=env, timeout_s=5, clock=clock
        ),
        expected={
            (h20x8, "on_demand"): (152.0, None, "live:QueryPriceForPayAsYouGo"),
            (h20x8, "monthly"): (
                round(70200.0 / 730, 6),
                70200.0,
                "live:QueryPriceForSubscription",
            ),
        },
        main_action="QueryPriceForPayAsYouGo",
        throttle=volcengine_error(
            429, "QueryPriceForPayAsYouGo", "FlowLimitExceeded", "flow limit exceeded"
        ),
        server_error=volcengine_error(
            500, "QueryPriceForPayAsYouGo", "InternalError", "internal error"
        ),
        malformed=Reply(
            200,
            {
                "ResponseMetadata": {"RequestId": "standin", "Action": "QueryPriceForPayAsYouGo"},
                "Result": {
                    "Currency": "CNY",
                    "ConfigList": [
                        {
                            "ConfigurationCode": "standin-hpcpni3ln-45xl",
                            "ChargeItemCode": "standin",
                            "DiscountAmount": "abc",
                        }
                    ],
                },
            },
        ),
        extra={"codes": codes, "prices": prices},
    )


CASES: tuple[Callable[[], CloudCase], ...] = (alibaba, tencent, huawei, volcengine)
