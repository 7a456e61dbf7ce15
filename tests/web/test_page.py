"""The page at ``/`` in a real headless Chromium against the real service on loopback.

The browser fills the form, the page calls the API, and the test compares what the page
shows (table, chart, summary, advice) with the API's own answer to the same request.
The page runs under the ``Content-Security-Policy: default-src 'self'`` it is served
with; any violation (an inline script or style, an external asset) is a console error
and fails the test.

Needs Debian's ``chromium`` and ``chromium-driver``: without them the tests skip, unless
``SUANLI_REQUIRE_BROWSER=1`` (set by ``.ci/run``), which makes that a failure.
``SUANLI_SCREENSHOT_DIR=docs`` also writes the screenshots used by the README.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import urllib.request
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.served import ServedApp, served

pytestmark = pytest.mark.slow


def _browser_missing(reason: str) -> None:
    if os.environ.get("SUANLI_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser required (SUANLI_REQUIRE_BROWSER=1) but unavailable: {reason}")
    pytest.skip(f"no headless browser: {reason}")


@pytest.fixture(scope="module")
def app() -> Iterator[ServedApp]:
    with served() as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        _browser_missing("install Debian's chromium and chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium or ""
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1700", "--lang=en-US"):  # fmt: skip
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path or ""), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def api(app: ServedApp, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        app.url + path, data=data, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def open_page(browser: WebDriver, app: ServedApp, lang: str) -> None:
    browser.get(f"{app.url}/?lang={lang}")
    browser.get_log("browser")  # start each page with an empty console
    WebDriverWait(browser, 30).until(
        lambda d: d.execute_script("return document.body.dataset.ready === '1'")
    )


def fill(browser: WebDriver, values: dict[str, str]) -> None:
    for field, value in values.items():
        element = browser.find_element(By.ID, field)
        if element.tag_name == "select":
            Select(element).select_by_value(value)
        else:
            element.clear()
            element.send_keys(value)


def submit_and_wait(browser: WebDriver, rows: int) -> None:
    browser.find_element(By.ID, "submit").click()
    WebDriverWait(browser, 30).until(
        lambda d: (
            len(d.find_elements(By.CSS_SELECTOR, "#options tbody tr[data-rank]")) == rows
            and d.find_element(By.ID, "submit").is_enabled()
        )
    )


def console_errors(browser: WebDriver) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def table(browser: WebDriver) -> list[list[str]]:
    return [
        [td.text for td in row.find_elements(By.TAG_NAME, "td")]
        for row in browser.find_elements(By.CSS_SELECTOR, "#options tbody tr[data-rank]")
    ]


def circles(browser: WebDriver) -> list[dict[str, Any]]:
    """The plotted options (legend dots have no ``data-rank``)."""
    found = browser.find_elements(By.CSS_SELECTOR, "#chart circle[data-rank]")
    return [
        {
            "rank": int(c.get_attribute("data-rank") or 0),
            "pareto": "pareto" in (c.get_attribute("class") or ""),
            "cx": float(c.get_attribute("cx") or 0),
            "cy": float(c.get_attribute("cy") or 0),
        }
        for c in found
    ]


def check_chart(browser: WebDriver, options: list[dict[str, Any]]) -> None:
    plotted = {o["rank"]: o for o in options if o["hours"] is not None and o["total_cost"]}
    dots = {d["rank"]: d for d in circles(browser)}
    assert set(dots) == set(plotted)
    assert {r for r, d in dots.items() if d["pareto"]} == {r for r, o in plotted.items()
                                                           if o["pareto"]}  # fmt: skip
    # Position follows the numbers: longer job -> further right, dearer -> higher (smaller y).
    by_hours = sorted(plotted.values(), key=lambda o: o["hours"])
    for a, b in itertools.pairwise(by_hours):
        if b["hours"] > a["hours"]:
            assert dots[b["rank"]]["cx"] > dots[a["rank"]]["cx"]
    by_cost = sorted(plotted.values(), key=lambda o: o["total_cost"])
    for a, b in itertools.pairwise(by_cost):
        if b["total_cost"] > a["total_cost"]:
            assert dots[b["rank"]]["cy"] < dots[a["rank"]]["cy"]
    front = [d for d in dots.values() if d["pareto"]]
    polylines = browser.find_elements(By.CSS_SELECTOR, "#chart polyline.front")
    assert len(polylines) == (1 if len(front) > 1 else 0)
    if polylines:
        points = polylines[0].get_attribute("points") or ""
        assert len(points.split()) == len(front)


def screenshot(browser: WebDriver, name: str) -> None:
    target = os.environ.get("SUANLI_SCREENSHOT_DIR")
    if target:
        browser.execute_script("window.scrollTo(0, 0)")
        height = browser.execute_script("return document.body.scrollHeight")
        browser.set_window_size(1280, int(height) + 40)
        Path(target).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(target) / name))
        browser.set_window_size(1280, 1700)


def test_page_and_assets_come_from_the_service_under_a_strict_csp(app: ServedApp) -> None:
    with urllib.request.urlopen(app.url + "/", timeout=10) as response:
        assert response.status == 200
        csp = response.headers["Content-Security-Policy"]
        html = response.read().decode()
    assert "default-src 'self'" in csp

    class Assets(HTMLParser):
        found: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            values = dict(attrs)
            if tag == "script":
                assert values.get("src"), "inline <script> would break under the CSP"
            if tag == "style" or "style" in values:
                raise AssertionError("inline style would break under the CSP")
            for key in ("src", "href"):
                if values.get(key) and tag in ("script", "link"):
                    self.found.append(values[key] or "")

    parser = Assets()
    parser.feed(html)
    assert parser.found, "the page references its script and stylesheet"
    total = 0
    for asset in parser.found:
        assert asset.startswith("/static/"), f"{asset} is not served by the service"
        with urllib.request.urlopen(app.url + asset, timeout=10) as response:
            assert response.status == 200
            total += len(response.read())
    assert total < 100_000, f"page assets are {total} bytes: keep them small"


def test_english_qlora_form_shows_the_api_answer_as_table_and_chart(
    browser: WebDriver, app: ServedApp
) -> None:
    open_page(browser, app, "en")
    assert browser.find_element(By.CSS_SELECTOR, "label[data-for='finetune'] span").text == (
        "Method"
    )
    fill(browser, {"kind": "finetune", "model": "qwen2.5-7b", "method": "qlora",
                   "tokens": "20M", "seq_len": "1024", "accelerators": "A10, A100",
                   "objective": "cost", "top_k": "8"})  # fmt: skip
    request = {
        "workload": {"kind": "finetune", "model": "qwen2.5-7b", "tokens": 20_000_000,
                     "seq_len": 1024, "method": "qlora"},
        "constraints": {"accelerators": ["A10", "A100"]},
        "objective": "cost", "lang": "en", "top_k": 8,
    }  # fmt: skip
    status, answer = api(app, "/v1/recommend", request)
    assert status == 200, answer
    assert answer["options"], answer
    submit_and_wait(browser, len(answer["options"]))

    assert browser.find_element(By.ID, "summary").text == answer["summary"]
    rows = table(browser)
    assert [r[3] for r in rows] == [o["instance_type"] for o in answer["options"]]
    assert [r[0] for r in rows] == [str(o["rank"]) for o in answer["options"]]
    for row, option in zip(rows, answer["options"], strict=True):
        assert row[1] == option["provider"]
        if option["price_per_hour"] is None:
            assert row[6] == "unknown"
        else:
            assert re.sub(r"[^\d.]", "", row[6].split("(")[0]) == _money_digits(
                option["price_per_hour"]
            )
        assert row[10] == ("★" if option["pareto"] else "")
        acc = option["accelerator"]
        assert f"{acc['count']} × {acc['name']}" in row[4]
    advice = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#advice li")]
    assert advice == [a["text"] for a in answer["advice"]]
    check_chart(browser, answer["options"])
    assert console_errors(browser) == []
    screenshot(browser, "page-en.png")


def test_chinese_serving_form_answers_in_chinese(browser: WebDriver, app: ServedApp) -> None:
    open_page(browser, app, "zh")
    assert browser.find_element(By.ID, "submit").text == "推荐"
    assert browser.execute_script("return document.documentElement.lang") == "zh-CN"
    fill(browser, {"kind": "inference", "model": "qwen2.5-14b", "context_len": "8192",
                   "concurrency": "16", "output_tokens": "5000万", "top_k": "10"})  # fmt: skip
    request = {
        "workload": {"kind": "inference", "model": "qwen2.5-14b", "context_len": 8192,
                     "concurrency": 16, "output_tokens": 50_000_000},
        "constraints": {}, "objective": "cost", "lang": "zh", "top_k": 10,
    }  # fmt: skip
    status, answer = api(app, "/v1/recommend", request)
    assert status == 200, answer
    assert answer["options"], answer
    submit_and_wait(browser, len(answer["options"]))
    summary = browser.find_element(By.ID, "summary").text
    assert summary == answer["summary"]
    assert re.search(r"[\u4e00-\u9fff]", summary), "the zh answer is in Chinese"
    headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#options thead th")]
    assert headers[1:4] == ["云厂商", "地域", "实例规格"]
    assert [r[3] for r in table(browser)] == [o["instance_type"] for o in answer["options"]]
    check_chart(browser, answer["options"])
    assert console_errors(browser) == []
    screenshot(browser, "page-zh.png")

    # Switching the language relabels the page and asks again in that language.
    english = api(app, "/v1/recommend", {**request, "lang": "en"})[1]
    Select(browser.find_element(By.ID, "lang")).select_by_value("en")
    WebDriverWait(browser, 30).until(
        lambda d: d.find_element(By.ID, "summary").text == english["summary"]
    )
    assert browser.find_element(By.ID, "submit").text == "Recommend"


def test_no_option_shows_why_and_what_to_relax(browser: WebDriver, app: ServedApp) -> None:
    open_page(browser, app, "en")
    fill(browser, {"kind": "finetune", "model": "qwen2.5-7b", "method": "qlora",
                   "tokens": "1e7", "max_price_per_hour": "1"})  # fmt: skip
    request = {
        "workload": {"kind": "finetune", "model": "qwen2.5-7b", "tokens": 10_000_000,
                     "seq_len": 2048, "method": "qlora"},
        "constraints": {"max_price_per_hour": 1}, "objective": "cost", "lang": "en",
        "top_k": 10,
    }  # fmt: skip
    answer = api(app, "/v1/recommend", request)[1]
    assert answer["options"] == []
    browser.find_element(By.ID, "submit").click()
    WebDriverWait(browser, 30).until(
        lambda d: d.find_element(By.ID, "summary").text == answer["summary"]
    )
    warnings = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#warnings li")]
    assert warnings == answer["warnings"]
    assert any("max_price_per_hour" in h["constraint"] for h in answer["relax"])
    assert browser.find_element(By.CSS_SELECTOR, "#options tbody").text == (
        "No option fits these constraints."
    )
    assert circles(browser) == []


def test_a_refused_request_shows_the_field_and_the_suggestions(
    browser: WebDriver, app: ServedApp
) -> None:
    open_page(browser, app, "en")
    fill(browser, {"kind": "finetune", "model": "qwen2.5-7", "tokens": "1e7"})
    browser.find_element(By.ID, "submit").click()
    WebDriverWait(browser, 30).until(
        lambda d: "error" in (d.find_element(By.ID, "status").get_attribute("class") or "")
    )
    text = browser.find_element(By.ID, "status").text
    assert "(400)" in text
    assert "workload.model" in text
    assert "qwen2.5-7b" in text  # the closest valid preset is offered
    fill(browser, {"tokens": "lots"})
    browser.find_element(By.ID, "submit").click()
    assert "Training tokens: not a number (lots)" in browser.find_element(By.ID, "status").text


def _money_digits(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.2f}"
