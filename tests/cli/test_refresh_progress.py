"""``suanli prices refresh``'s progress display, driven by a real refresh: the Tencent
adapter (its official SDK) against the loopback stand-in of its API."""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path

from rich.console import Console

from service.catalog.live.cli import run_refresh
from service.cli.progress import RichRefreshProgress
from service.hooks.loader import get_plugin_manager
from tests.live.clouds import CloudCase
from tests.live.conftest import Clock
from tests.live.standin import StandIn
from tests.live.test_cli import (  # the stand-in provider and its fixtures
    ProviderPlugin,
    StandInProvider,
    no_cloud_credentials,
    tencent_standin,
)

__all__ = ["no_cloud_credentials", "tencent_standin"]


def test_progress_per_provider_and_region(
    no_cloud_credentials: None, tmp_path: Path, tencent_standin: tuple[CloudCase, StandIn]
) -> None:
    case, standin = tencent_standin
    name = f"standin-{uuid.uuid4().hex[:8]}"
    provider = StandInProvider(name, case.make_source(standin.url, case.env, Clock()), case)
    pm = get_plugin_manager(load_entrypoints=False, extra_plugins=[ProviderPlugin(provider)])
    screen = io.StringIO()
    console = Console(file=screen, width=120, force_terminal=False)
    lines: list[str] = []
    out = tmp_path / "report.json"
    with RichRefreshProgress(console) as progress:
        code = run_refresh(
            regions=[case.region],
            output=str(out),
            timeout_s=5,
            plugin_manager=pm,
            progress=progress,
            echo=lines.append,
        )
    assert code == 0
    (result,) = json.loads(out.read_text())["results"]
    assert result["outcome"] == "published"
    published = len(result["snapshot"]["prices"])
    assert published == len(case.expected) > 0
    text = screen.getvalue()
    assert f"{name} {case.region}: {published} prices" in text
    assert "1/1" in text  # the provider's bar: one region of one
    assert lines
    assert lines[0].startswith(f"{name}: published v1 ({published} prices)")
