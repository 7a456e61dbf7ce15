"""The ``suanli`` command, run for real: in-process (typer's CliRunner, the shipped
catalogs) and against a real server on a loopback port (``--url``), with the server's
own REST answers as the reference. Both paths must print the same documents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from service.cli import app
from tests.conftest import BUILTIN_PROVIDERS, REPO_ROOT
from tests.live_server import LiveServer, live_server

ENV = {"SUANLI_PLUGINS": ",".join(BUILTIN_PROVIDERS), "COLUMNS": "200", "SUANLI_URL": ""}
QLORA = ["--model", "llama-2-7b", "--method", "qlora", "--tokens", "20M", "--seq-len", "1024"]
QLORA_BODY = {
    "workload": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora",
                 "tokens": 20_000_000, "seq_len": 1024},
}  # fmt: skip


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with live_server() as running:
        yield running


def run(*args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(app, list(args), env=ENV)
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def run_json(*args: str, code: int = 0) -> Any:
    return json.loads(run(*args, "--json", code=code).stdout)


def rest(server: LiveServer, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        server.url + path, data=data, headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_offers_json_is_the_api_document(server: LiveServer) -> None:
    local = run_json("offers", "--gpu", "A100")
    remote = run_json("offers", "--gpu", "A100", "--url", server.url)
    # Regions folded by default (`--all-regions` lists one row per region).
    assert local == remote == rest(server, "/v1/offers?accelerator=A100&fold_regions=true")
    per_region = run_json("offers", "--gpu", "A100", "--all-regions")
    assert per_region == rest(server, "/v1/offers?accelerator=A100")
    assert per_region["total"] > local["total"]
    assert local["total"] > 0
    assert {o["accelerator"]["name"] for o in local["items"]} <= {"A100-40GB", "A100-80GB"}


def test_offers_table(server: LiveServer) -> None:
    page = rest(server, "/v1/offers?accelerator=A100&limit=5&fold_regions=true")
    for where in ([], ["--url", server.url]):
        out = run("offers", "--gpu", "A100", "--limit", "5", *where).stdout
        assert "PROVIDER" in out
        assert "INSTANCE TYPE" in out
        assert "¥/ACC·H" in out
        for item in page["items"]:
            assert item["instance_type"] in out
            assert f"¥{item['price_per_hour']:,.2f}" in out
        assert f"Shown 5 of {page['total']} offers ({page['priced']} priced)" in out


def test_offers_flags_become_the_query(server: LiveServer) -> None:
    args = ["offers", "--gpu", "A10", "--gpu", "V100", "--count", "2..4", "--provider",
            "alibaba", "--max-price", "80", "--sort", "price_per_accelerator", "--group-by",
            "accelerator,provider", "--billing", "on_demand"]  # fmt: skip
    query = ("accelerator=A10&accelerator=V100&min_accelerators=2&max_accelerators=4"
             "&provider=alibaba&max_price=80&sort=price_per_accelerator&billing=on_demand"
             "&fold_regions=true&group_by=accelerator&group_by=provider")  # fmt: skip
    assert run_json(*args) == rest(server, f"/v1/offers?{query}")
    table = run(*args).stdout
    assert "ACCELERATOR" in table
    assert "PROVIDER" in table
    assert "groups of" in table


def test_unknown_price_reads_unknown_and_estimates_are_marked() -> None:
    """Without price estimates the unpriced volcengine rows read ``unknown``; with them
    every estimated price carries ``~`` and the table says what ``~`` means."""
    quiet = {**ENV, "SUANLI_PRICE_ESTIMATES": "false"}
    result = CliRunner().invoke(
        app, ["offers", "--provider", "volcengine", "--limit", "3"], env=quiet
    )
    assert result.exit_code == 0, result.stderr
    assert "unknown" in result.stdout
    assert "¥0.00" not in result.stdout
    page = run_json("offers", "--provider", "volcengine", "--limit", "3")
    table = run("offers", "--provider", "volcengine", "--limit", "3").stdout
    estimated = [item for item in page["items"] if item["price_estimated"]]
    assert estimated, "the shipped volcengine rows are priced by the estimate model"
    for item in estimated:
        assert f"~¥{item['price_per_hour']:,.2f}" in table
    assert "~ estimated price, not a quote" in table


def test_recommend_same_answer_in_process_and_from_the_server(server: LiveServer) -> None:
    flags = [*QLORA, "--lang", "en", "--top-k", "3"]
    local = run_json("recommend", *flags)
    remote = run_json("recommend", *flags, "--url", server.url)
    direct = rest(server, "/v1/recommend", {**QLORA_BODY, "lang": "en", "top_k": 3})
    assert local == remote == direct
    assert len(local["options"]) == 3
    assert local["lang"] == "en"
    table = run("recommend", *flags).stdout
    assert local["summary"] in table
    top = local["options"][0]
    assert top["instance_type"] in table
    assert f"¥{top['total_cost']:,.2f}" in table


def test_recommend_constraints_reach_the_planner() -> None:
    answer = run_json("recommend", *QLORA, "--provider", "tencent", "--gpu", "A100",
                      "--objective", "time", "--lang", "zh")  # fmt: skip
    assert answer["objective"] == "time"
    assert answer["lang"] == "zh"
    assert answer["options"]
    assert {o["provider"] for o in answer["options"]} == {"tencent"}
    assert all(o["accelerator"]["name"].startswith("A100") for o in answer["options"])


def test_estimate_same_numbers(server: LiveServer) -> None:
    flags = [*QLORA, "--gpu", "T4", "--count", "1"]
    local = run_json("estimate", *flags)
    direct = rest(
        server, "/v1/estimate", {**QLORA_BODY, "placement": {"accelerator": "T4", "count": 1}}
    )
    assert local == run_json("estimate", *flags, "--url", server.url) == direct
    table = run("estimate", *flags).stdout
    assert f"{local['memory']['per_device_gib']:.2f}" in table
    assert f"about {local['time']['hours']:.1f} h" in table
    assert "Placement: 1xT4 fits" in table


def test_refusals_show_the_api_reasons(server: LiveServer) -> None:
    for where in ([], ["--url", server.url]):
        result = run("offers", "--gpu", "A1OO", *where, code=2)
        assert "accelerator: unknown accelerator 'A1OO'" in result.stderr
        assert "did you mean A10" in result.stderr
        body = run_json("recommend", "--model", "llama-2-7x", "--tokens", "1M", *where, code=2)
        assert body["status_code"] == 400
        assert "llama-2-7b" in json.dumps(body["extra"])


def test_flags_the_shell_cannot_read_are_refused() -> None:
    assert "--count" in run("offers", "--count", "two", code=2).stderr
    assert "--tokens" in run("recommend", "--model", "llama-2-7b", "--tokens", "lots",
                             code=2).stderr  # fmt: skip


def test_unreachable_server_exits_1() -> None:
    result = run("models", "--url", "http://127.0.0.1:9", code=1)
    assert "cannot reach the Suanli server" in result.stderr


def test_models_and_accelerators(server: LiveServer) -> None:
    assert run_json("models") == rest(server, "/v1/models")
    assert run_json("accelerators") == rest(server, "/v1/accelerators")
    assert "llama-2-7b" in run("models").stdout
    assert "A100-80GB" in run("accelerators").stdout


def test_version_and_completion() -> None:
    assert run("--version").stdout.strip() == "suanli 0.1.0"
    script = run("--show-completion", "bash").stdout
    assert "_SUANLI_COMPLETE" in script
    assert "complete" in script


def test_prices_refresh_takes_every_option(tmp_path: Path) -> None:
    """The options the old outer parser refused (``--timeout``) reach the job; with no
    credentials every provider is off, which is not an error."""
    out = tmp_path / "prices.json"
    env = {**ENV, **{name: "" for name in _CREDENTIALS}}
    result = CliRunner().invoke(
        app,
        ["prices", "refresh", "--timeout", "5", "--region", "cn-beijing", "--output", str(out),
         "--progress"],
        env=env,
    )  # fmt: skip
    assert result.exit_code == 0, (result.stdout, result.stderr)
    report = json.loads(out.read_text())
    assert {r["provider"] for r in report["results"]} == set(BUILTIN_PROVIDERS)
    assert all(r["outcome"] == "disabled" for r in report["results"])
    assert "live prices off" in result.stderr
    named = CliRunner().invoke(
        app, ["prices", "refresh", "--provider", "alibaba", "--output", str(out)], env=env
    )
    assert named.exit_code == 1


_CREDENTIALS = (
    "ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "TENCENTCLOUD_SECRET_ID",
    "TENCENTCLOUD_SECRET_KEY", "HUAWEICLOUD_SDK_AK", "HUAWEICLOUD_SDK_SK",
    "HUAWEICLOUD_SDK_PROJECT_ID", "VOLCENGINE_ACCESS_KEY", "VOLCENGINE_SECRET_KEY",
)  # fmt: skip


def test_refresh_fails_when_credentials_are_set_but_nothing_can_be_fetched(
    tmp_path: Path,
) -> None:
    """Alibaba credentials set, its SDK not importable (as in an image built without the
    extra): the job must not "succeed" with no price. Run as the real command in a
    subprocess whose path hides the SDK; no request leaves the machine (the SDK is never
    reached)."""
    shadow = tmp_path / "shadow" / "alibabacloud_ecs20140526"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    env = {k: v for k, v in os.environ.items() if k not in _CREDENTIALS}
    env.update(ENV)
    env.update(
        PYTHONPATH=os.pathsep.join([str(shadow.parent), str(REPO_ROOT)]),
        ALIBABA_CLOUD_ACCESS_KEY_ID="test-id",
        ALIBABA_CLOUD_ACCESS_KEY_SECRET="test-secret",
        SUANLI_REDIS_URL="",
    )
    out = tmp_path / "prices.json"
    done = subprocess.run(
        [sys.executable, "-m", "service", "prices", "refresh", "--timeout", "5",
         "--output", str(out)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "alibaba: live prices off (SDK not installed" in done.stderr
    assert "credentials are set, so this is an error" in done.stderr
    results = {r["provider"]: r["outcome"] for r in json.loads(out.read_text())["results"]}
    assert results == dict.fromkeys(BUILTIN_PROVIDERS, "disabled")


def test_recommend_table_speaks_the_answers_language() -> None:
    answer = run_json("recommend", *QLORA, "--lang", "zh", "--top-k", "2")
    table = run("recommend", *QLORA, "--lang", "zh", "--top-k", "2").stdout
    assert "云厂商" in table
    assert "实例规格" in table
    assert answer["summary"] in table
    assert {"on_demand": "按量", "monthly": "包月", "spot": "竞价"}[
        answer["options"][0]["billing"]
    ] in table
