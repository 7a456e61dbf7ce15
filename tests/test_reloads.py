"""An admin reload reaches every worker of a multi-worker server, with and without Redis,
and answers "reloaded" only once all of them serve the new catalog (issue 16, item 4)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers import ServerProcess

pytestmark = pytest.mark.slow

API_KEY = "reload-test-admin-key-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {API_KEY}", "Connection": "close"}
RECOMMEND = {
    "workload": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora", "tokens": 10**7},
    "constraints": {"providers": ["tencent"]},
    "lang": "en",
    "top_k": 10,
}
GT4 = "GT4.8XLARGE192"
GT4_LIST_PRICE = 57.28  # tencent catalog, price per hour (see plugins/tencent/prices.json)


def _override(path: Path, discount: float) -> None:
    path.write_text(f'[[override]]\nprovider = "tencent"\nfamily = "GT4"\ndiscount = {discount}\n')


@pytest.fixture(params=["without_redis", "with_redis"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[ServerProcess, Path]]:
    overrides = tmp_path / "overrides.toml"
    _override(overrides, 0.5)
    env = {
        "SUANLI_API_KEY": API_KEY,
        "SUANLI_PRICE_OVERRIDES": str(overrides),
        "SUANLI_REFRESH_INTERVAL_S": "0.5",
    }
    if request.param == "with_redis":
        env["SUANLI_REDIS_URL"] = request.getfixturevalue("redis_url")
    process = ServerProcess(workers=2, **env)
    deadline = time.monotonic() + 30
    while process.request("POST", "/v1/admin/reload", headers=AUTH)[2]["workers"] < 2:
        assert time.monotonic() < deadline, "the second worker never reported"
        time.sleep(0.3)  # a worker still starting has not joined the board yet
    try:
        yield process, overrides
    finally:
        process.stop()


def test_reload_reaches_every_worker_before_it_answers(
    server: tuple[ServerProcess, Path],
) -> None:
    process, overrides = server
    _override(overrides, 0.25)
    status, _, result = process.request("POST", "/v1/admin/reload", headers=AUTH)
    assert status == 200, result
    assert result["status"] == "reloaded", result
    assert result["workers"] == 2, result
    assert result["applied"] == 2, result
    assert result["not_applied"] == []
    # Fresh connections land on either worker: none may still hold the old catalog.
    fingerprints = {
        process.request("GET", "/readyz", headers={"Connection": "close"})[2]["catalog_fingerprint"]
        for _ in range(16)
    }
    assert fingerprints == {result["fingerprint"]}
    prices = set()
    for _ in range(8):
        status, _, body = process.request(
            "POST", "/v1/recommend", RECOMMEND, headers={"Connection": "close"}
        )
        assert status == 200, body
        prices |= {o["price_per_hour"] for o in body["options"] if o["instance_type"] == GT4}
    assert prices == {round(GT4_LIST_PRICE * 0.25, 2)}, prices
