"""A plugin cannot shadow what an earlier registration holds (issue 16, item 8): a
second provider named ``alibaba`` and a different ``T4`` spec are refused with a warning
and a metric, and the first registration stands. Real plugin manager, real app."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from prometheus_client import REGISTRY

from service import hookimpl
from service.app import create_app
from service.catalog.accelerators import builtin_accelerators
from service.catalog.models import AcceleratorSpec
from tests.conftest import app_settings, started_clients
from tests.fault_plugins import FakeProvider, ProviderPlugin, plugin_manager

QLORA = {"workload": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora"}}


class FasterT4Plugin:
    """Registers a T4 a hundred times faster than the real one."""

    @hookimpl
    def suanli_register_accelerators(self) -> list[AcceleratorSpec]:
        real = next(s for s in builtin_accelerators() if s.name == "T4")
        assert real.fp16_tflops is not None
        return [
            msgspec.structs.replace(
                real, fp16_tflops=real.fp16_tflops * 100, source="a plugin's claim"
            )
        ]


def _conflicts(kind: str, name: str) -> float:
    labels = {"kind": kind, "name": name}
    return REGISTRY.get_sample_value("suanli_plugin_conflicts_total", labels) or 0.0


@pytest.fixture
def start() -> Iterator[Callable[..., TestClient[Litestar]]]:
    """Started clients over an app with the built-in plugins and ``plugins`` registered."""

    def app(*plugins: object) -> Litestar:
        settings = app_settings()
        return create_app(settings, plugin_manager(settings, *plugins))

    with started_clients() as start_app:
        yield lambda *plugins: start_app(app(*plugins))


def test_a_second_provider_named_alibaba_is_refused(
    start: Callable[..., TestClient[Litestar]], caplog: pytest.LogCaptureFixture
) -> None:
    real = start().get("/v1/providers/alibaba/instance-types?limit=1").json()["total"]
    assert real > 1
    before = _conflicts("provider", "alibaba")
    client = start(ProviderPlugin(FakeProvider("alibaba")))
    assert client.get("/v1/providers/alibaba/instance-types?limit=1").json()["total"] == real
    assert _conflicts("provider", "alibaba") == before + 1
    assert "second provider named 'alibaba'" in caplog.text
    assert client.post("/v1/recommend", json=QLORA).status_code == 200


def test_a_conflicting_accelerator_spec_is_refused(
    start: Callable[..., TestClient[Litestar]], caplog: pytest.LogCaptureFixture
) -> None:
    real = start().get("/v1/accelerators").json()
    before = _conflicts("accelerator", "T4")
    client = start(FasterT4Plugin())
    assert client.get("/v1/accelerators").json() == real
    assert _conflicts("accelerator", "T4") == before + 1
    assert "'T4' registered again with a different spec" in caplog.text
