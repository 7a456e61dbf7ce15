"""The README's provider table shows exactly the coverage ``/v1/providers`` computes."""

from __future__ import annotations

from pathlib import Path

from service.catalog.aggregate import CatalogService
from service.catalog.coverage import coverage
from service.hooks.loader import get_plugin_manager
from tests.conftest import BUILTIN_PROVIDERS

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_provider_table_matches_the_loaded_catalogs() -> None:
    text = README.read_text(encoding="utf-8")
    table = text.split("<!-- provider-table -->")[1].split("<!-- /provider-table -->")[0]
    rows = {
        line.split("`")[1]: [cell.strip() for cell in line.strip("|").split("|")]
        for line in table.strip().splitlines()[2:]
    }
    snapshot = CatalogService(get_plugin_manager().hook.suanli_register_providers).load()
    builtin = [c for c in snapshot.providers if c.name in BUILTIN_PROVIDERS]
    assert set(rows) == set(BUILTIN_PROVIDERS)
    for catalog in builtin:
        cov = coverage(catalog)
        expected = [
            str(cov.rows),
            f"{cov.accelerated} ({cov.accelerated_with_regions})",
            str(cov.priced),
            str(cov.estimated),
            str(cov.unknown),
            catalog.prices_as_of or "—",
            catalog.prices_oldest or "—",
        ]
        assert rows[catalog.name][1:] == expected, catalog.name
