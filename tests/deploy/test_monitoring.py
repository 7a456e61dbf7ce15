"""Offline validation of the Grafana dashboard and the Prometheus alert rules.

No Grafana or Prometheus server here, so: the dashboard's JSON structure is checked the
way Grafana would need it (unique panel ids, a 24-column grid, every target with a
``refId`` and an expression, every ``$variable`` defined); every metric name in every
PromQL expression of the dashboard and the rules must be one the real app exposes at
``/metrics`` (with the labels the selectors name, where the app has samples); and
``promtool check rules`` plus ``promtool test rules`` run when Debian's ``prometheus``
package is installed (``.ci/run`` installs it and sets ``SUANLI_REQUIRE_PROMTOOL=1``, so
there the test fails instead of skipping).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parents[2]
MONITORING = REPO / "deploy" / "monitoring"
DASHBOARD = MONITORING / "grafana-dashboard.json"
ALERTS = MONITORING / "alerts.yml"
ALERT_TESTS = MONITORING / "alerts.test.yml"

# Series Prometheus makes itself (not on /metrics) that expressions may use.
PROMETHEUS_SERIES = {"up"}
_METRIC = re.compile(r"\b(?:suanli|litestar)_[a-z0-9_]+\b")
_SELECTOR = re.compile(r"\b((?:suanli|litestar)_[a-z0-9_]+)\{([^}]*)\}")
_LABEL = re.compile(r"([a-z_]+)\s*(?:=~|!~|!=|=)")
_SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "gauge": ("",),
    "summary": ("", "_sum", "_count", "_created"),
}


def dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return data


def panels(data: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in data["panels"]:
        yield panel
        yield from panel.get("panels", [])


def dashboard_expressions() -> list[str]:
    data = dashboard()
    found = [t["expr"] for p in panels(data) for t in p.get("targets", [])]
    for variable in data["templating"]["list"]:
        if variable["type"] == "query":
            found.append(variable["definition"])
    return found


def rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    return [rule for group in doc["groups"] for rule in group["rules"]]


@pytest.fixture(scope="module")
def exposed() -> tuple[set[str], dict[str, set[str]]]:
    """Metric names /metrics of the real app exposes (every sample name its families
    can have), and the label names seen per sample name, after real traffic."""
    from service.app import create_app
    from tests.conftest import app_settings

    qlora = {"workload": {"kind": "finetune", "model": "qwen2.5-7b", "method": "qlora"}}
    with TestClient(create_app(app_settings())) as client:
        client.post("/v1/recommend", json=qlora)
        client.post("/v1/recommend", json=qlora)  # a hit
        nothing = {**qlora, "constraints": {"max_price_per_hour": 0.01}}
        client.post("/v1/recommend", json=nothing)  # no option
        client.post("/v1/estimate", json={"workload": {"kind": "finetune", "model": "x"}})
        client.get("/v1/models")
        text = client.get("/metrics").text
    names: set[str] = set()
    labels: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        names.update(family.name + s for s in _SUFFIXES.get(family.type, ("",)))
        for sample in family.samples:
            names.add(sample.name)
            labels.setdefault(sample.name, set()).update(sample.labels)
    return names, labels


def _check(expressions: list[str], exposed: tuple[set[str], dict[str, set[str]]]) -> None:
    names, labels = exposed
    assert expressions
    for expr in expressions:
        used = set(_METRIC.findall(expr))
        assert used, f"no Suanli metric in {expr!r}"
        missing = used - names - PROMETHEUS_SERIES
        assert not missing, f"{expr!r} uses metrics /metrics does not expose: {missing}"
        for name, selector in _SELECTOR.findall(expr):
            wanted = set(_LABEL.findall(selector)) - {"instance", "job"}  # added by scraping
            if name in labels:
                assert wanted <= labels[name], f"{name} has no label {wanted - labels[name]}"


def test_every_dashboard_metric_is_exposed_by_the_app(
    exposed: tuple[set[str], dict[str, set[str]]],
) -> None:
    _check(dashboard_expressions(), exposed)


def test_every_alert_metric_is_exposed_by_the_app(
    exposed: tuple[set[str], dict[str, set[str]]],
) -> None:
    _check([rule["expr"] for rule in rules()], exposed)


def test_dashboard_covers_what_operators_watch() -> None:
    text = "\n".join(dashboard_expressions())
    for metric in (
        "litestar_requests_total",  # rate and errors per route
        "litestar_request_duration_seconds_bucket",  # latency per route
        "suanli_cache_events_total",  # hit ratio
        "suanli_store_up",  # Redis breaker
        "suanli_provider_failures_total",
        "suanli_live_price_age_seconds",
        "suanli_recommend_answers_total",  # unpriced / estimated / no-option shares
    ):
        assert metric in text, f"the dashboard does not show {metric}"
    for top_pick in ("unpriced", "estimated", "none"):
        assert f'top_pick="{top_pick}"' in text


def test_dashboard_structure_is_what_grafana_loads() -> None:
    data = dashboard()
    assert data["uid"]
    assert data["title"]
    assert isinstance(data["schemaVersion"], int)
    all_panels = list(panels(data))
    ids = [p["id"] for p in all_panels]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    variables = {v["name"] for v in data["templating"]["list"]}
    used_variables: set[str] = set()
    for panel in all_panels:
        grid = panel["gridPos"]
        assert all(isinstance(grid[k], int) for k in ("x", "y", "w", "h"))
        assert grid["x"] >= 0
        assert grid["x"] + grid["w"] <= 24
        assert panel["title"]
        if panel["type"] == "row":
            continue
        assert panel.get("description"), f"panel {panel['title']!r} needs a description"
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        ref_ids = [t["refId"] for t in panel["targets"]]
        assert ref_ids
        assert len(ref_ids) == len(set(ref_ids))
        for target in panel["targets"]:
            assert target["expr"].count("(") == target["expr"].count(")")
            used_variables.update(re.findall(r"\$(\w+)", target["expr"]))
    used_variables -= {"__rate_interval", "__interval", "__range"}  # Grafana's own
    assert used_variables <= variables, f"undefined variables {used_variables - variables}"
    # panels do not overlap
    cells: set[tuple[int, int]] = set()
    for panel in all_panels:
        g = panel["gridPos"]
        area = {
            (x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])
        }
        assert not area & cells, f"panel {panel['title']!r} overlaps another"
        cells |= area


def test_every_alert_is_labelled_and_explained() -> None:
    for rule in rules():
        assert rule["alert"].startswith("Suanli")
        assert rule["labels"]["severity"] in {"page", "warn", "info"}
        assert rule["annotations"]["summary"]
        assert rule["annotations"]["description"]


def _promtool() -> str | None:
    found = shutil.which("promtool")
    if found is None and os.environ.get("SUANLI_REQUIRE_PROMTOOL") == "1":
        pytest.fail("promtool required (SUANLI_REQUIRE_PROMTOOL=1): apt-get install prometheus")
    return found


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)


def test_promtool_accepts_the_rules() -> None:
    promtool = _promtool()
    if promtool is None:
        pytest.skip("promtool not installed (Debian package prometheus)")
    result = _run(promtool, "check", "rules", str(ALERTS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rules())} rules found" in result.stdout


def test_alerts_fire_on_the_series_they_watch() -> None:
    """``promtool test rules``: synthetic series in, the expected alerts out."""
    promtool = _promtool()
    if promtool is None:
        pytest.skip("promtool not installed (Debian package prometheus)")
    result = _run(promtool, "test", "rules", str(ALERT_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout
