"""A rich progress display for ``suanli prices refresh``: one bar per provider, its
current region, and each region's outcome as it ends."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from service.catalog.live.refresh import RegionOutcome


class RichRefreshProgress:
    """A :class:`~service.catalog.live.refresh.RefreshProgress` drawn with ``rich.progress``."""

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("{task.fields[provider]:<11}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            console=console,
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> RichRefreshProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def planned(self, provider: str, regions: Sequence[str]) -> None:
        description = f"{len(regions)} regions" if regions else "no region to fetch"
        self._tasks[provider] = self._progress.add_task(
            description, total=max(1, len(regions)), provider=provider
        )
        if not regions:
            self._progress.update(self._tasks[provider], completed=1)

    def started(self, provider: str, region: str) -> None:
        self._progress.update(self._tasks[provider], description=f"fetching {region} ...")

    def finished(self, provider: str, outcome: RegionOutcome) -> None:
        status = f"{outcome.prices} prices" if outcome.error is None else f"failed: {outcome.error}"
        self._progress.console.print(f"  {provider} {outcome.region}: {status}", markup=False)
        self._progress.update(
            self._tasks[provider], advance=1, description=f"{outcome.region} done"
        )
