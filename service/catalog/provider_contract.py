"""``ProviderContract``: the tests every provider plugin (built-in or third-party) must pass.

Subclass it in your plugin's test suite and override the ``provider`` fixture::

    class TestMyCloud(ProviderContract):
        @pytest.fixture
        def provider(self) -> Provider:
            return MyCloudProvider()

The checks encode the data rules of the product: exact unique names, positive specs,
accelerator fields that agree with each other and with the accelerator registry, provenance
(``source`` + ``as_of``) on every row and price, prices positive or unknown (never zero),
and regions that exist. Importing this module needs pytest (a dev dependency).
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from service.catalog.aggregate import price_problems, row_problems
from service.catalog.models import (
    ALL_REGIONS,
    AS_OF_PATTERN,
    InstanceType,
    Price,
    Provider,
)

_AS_OF = re.compile(AS_OF_PATTERN)


class ProviderContract:
    """Reusable contract tests for a :class:`~service.catalog.models.Provider`."""

    known_accelerators: frozenset[str] | None = None
    """Canonical accelerator names a row may use; ``None`` = the registry the installed
    plugins build (:func:`service.hooks.registries.default_accelerator_registry`)."""

    @pytest.fixture
    def provider(self) -> Provider:
        raise NotImplementedError("override the `provider` fixture in your subclass")

    def _accelerator_names(self) -> frozenset[str]:
        if self.known_accelerators is not None:
            return self.known_accelerators
        from service.hooks.registries import default_accelerator_registry

        return frozenset(spec.name for spec in default_accelerator_registry().all())

    def test_is_a_provider(self, provider: Provider) -> None:
        assert isinstance(provider, Provider)
        assert re.fullmatch(r"[a-z][a-z0-9_-]{1,31}", provider.name), provider.name
        assert provider.display_name.strip()
        assert provider.currency == "CNY"

    def test_regions_non_empty(self, provider: Provider) -> None:
        regions = list(provider.regions())
        assert regions, "a provider must name at least one region"
        assert len(regions) == len(set(regions)), "duplicate region ids"
        assert all(r and r == r.strip() and r != ALL_REGIONS for r in regions)

    def test_instance_type_names_unique(self, provider: Provider) -> None:
        names = Counter(row.instance_type for row in provider.instance_types())
        assert names, "empty catalog"
        duplicates = [name for name, n in names.items() if n > 1]
        assert not duplicates, f"duplicate instance types: {duplicates}"

    def test_rows_have_provenance(self, provider: Provider) -> None:
        for row in provider.instance_types():
            assert row.source.strip(), f"{row.instance_type}: empty source"
            assert _AS_OF.match(row.as_of), f"{row.instance_type}: as_of {row.as_of!r}"

    def test_specs_positive(self, provider: Provider) -> None:
        # The same rules the catalog loader applies (a failing row drops the provider).
        problems = [p for row in provider.instance_types() for p in row_problems(row)]
        assert not problems, problems

    def test_accelerator_fields_consistent(self, provider: Provider) -> None:
        known = self._accelerator_names()
        for row in provider.instance_types():
            _check_accelerator(row, known)

    def test_row_regions_are_provider_regions(self, provider: Provider) -> None:
        regions = set(provider.regions())
        for row in provider.instance_types():
            unknown = set(row.regions) - regions
            assert not unknown, f"{row.instance_type}: regions {unknown} not in provider.regions()"

    def test_zones_belong_to_row_regions(self, provider: Provider) -> None:
        for row in provider.instance_types():
            for zone in row.zones:
                assert any(zone.startswith(f"{r}-") for r in row.regions), (
                    f"{row.instance_type}: zone {zone} outside its regions {row.regions}"
                )

    def test_prices_positive_or_unknown(self, provider: Provider) -> None:
        names = {row.instance_type for row in provider.instance_types()}
        regions = set(provider.regions()) | {ALL_REGIONS}
        for price in provider.prices():
            _check_price(price, names, regions)

    def test_price_history_is_older_and_sourced(self, provider: Provider) -> None:
        for price in provider.prices():
            for record in price.history:
                assert record.source.strip(), f"{price.instance_type}: history without source"
                assert record.as_of <= price.as_of, f"{price.instance_type}: history newer"

    def test_prices_unique_per_key(self, provider: Provider) -> None:
        keys = Counter((p.instance_type, p.region, p.billing) for p in provider.prices())
        duplicates = [key for key, n in keys.items() if n > 1]
        assert not duplicates, f"duplicate prices: {duplicates}"


def _check_accelerator(row: InstanceType, known: frozenset[str]) -> None:
    name = row.instance_type
    if row.accelerator is None:
        assert row.accelerator_count == 0, f"{name}: CPU-only row with accelerator_count"
        assert row.accelerator_memory_gib is None, f"{name}: CPU-only row with GPU memory"
        return
    assert row.accelerator in known, f"{name}: unknown accelerator {row.accelerator!r}"
    assert not row_problems(row), row_problems(row)


def _check_price(price: Price, names: set[str], regions: set[str]) -> None:
    where = f"{price.instance_type}@{price.region}/{price.billing}"
    assert price.instance_type in names, f"{where}: price for a type not in the catalog"
    assert price.region in regions, f"{where}: unknown region"
    assert price.currency == "CNY", f"{where}: currency {price.currency}"
    assert price.source.strip(), f"{where}: empty source"
    assert _AS_OF.match(price.as_of), f"{where}: as_of {price.as_of!r}"
    assert not price_problems(price), price_problems(price)
    if price.estimated:
        assert price.basis, f"{where}: an estimated price must state its basis"
