"""The accelerator registry: shipped figures, alias resolution, family matching, suggestions.

The registry is built from the core's NVIDIA specs plus the Huawei plugin's Ascend specs,
read directly (``default_accelerator_registry()`` needs the package's entry points, i.e. an
install).
Figure checks pin *dense* numbers: a 2x "with sparsity" datasheet figure slipping in would
halve every time estimate, so the exact values are asserted.
"""

from __future__ import annotations

import math

import pytest
from prometheus_client import REGISTRY

from plugins.huawei import ascend_accelerators
from service.catalog.accelerators import AcceleratorRegistry, builtin_accelerators, family_keys
from service.catalog.models import AcceleratorSpec
from tests.providers import BRIEF_ASCEND, BRIEF_NVIDIA

NVIDIA_NAMES = {
    *BRIEF_NVIDIA,
    # consumer/workstation parts rented on these clouds (issue 13)
    "RTX-4090",
    "RTX-3090",
    "RTX-A6000",
    "A40",
    "L40",
    # the PCIe form factor where its rates differ from the SXM2 part (review-3 R19)
    "V100-32GB-PCIe",
}
ASCEND_NAMES = BRIEF_ASCEND - {"Ascend-310"}
"""Ascend-310 is absent on purpose: no source gives its per-chip memory size."""


@pytest.fixture(scope="module")
def registry() -> AcceleratorRegistry:
    return AcceleratorRegistry([*ascend_accelerators(), *builtin_accelerators()])


def test_builtin_specs_are_exactly_the_nvidia_canon() -> None:
    specs = builtin_accelerators()
    assert {s.name for s in specs} == NVIDIA_NAMES
    assert len(specs) == len(NVIDIA_NAMES)
    assert all(s.vendor == "NVIDIA" and s.stack == "cuda" for s in specs)
    assert builtin_accelerators() is specs, "decoded once and cached"


def test_registry_holds_nvidia_and_ascend(registry: AcceleratorRegistry) -> None:
    assert set(registry.names()) == NVIDIA_NAMES | ASCEND_NAMES
    assert len(registry) == len(NVIDIA_NAMES) + len(ASCEND_NAMES)


def test_no_alias_names_two_chips(registry: AcceleratorRegistry) -> None:
    assert registry.alias_conflicts == ()


@pytest.mark.parametrize("spec", [*builtin_accelerators(), *ascend_accelerators()], ids=str)
def test_every_spec_is_sourced_and_positive(spec: AcceleratorSpec) -> None:
    assert len(spec.source) > 20, f"{spec.name}: source too thin to check"
    assert spec.memory_gib > 0
    for field in (
        "mem_bandwidth_gbps",
        "bf16_tflops",
        "fp16_tflops",
        "fp8_tflops",
        "int8_tops",
        "fp32_tflops",
        "interconnect_gbps",
    ):
        value = getattr(spec, field)
        assert value is None or (math.isfinite(value) and value > 0), (spec.name, field)
    assert spec.architecture
    assert spec.bf16_tflops is None or spec.supports_bf16, f"{spec.name}: BF16 rate without BF16"
    assert spec.fp8_tflops is None or spec.supports_fp8, f"{spec.name}: FP8 rate without FP8"


@pytest.mark.parametrize(
    ("name", "bf16", "fp16", "int8", "memory", "bandwidth"),
    [
        ("A100-80GB", 312, 312, 624, 80, 2039),
        ("A100-40GB", 312, 312, 624, 40, 1555),
        ("H100-80GB", 989, 989, 1979, 80, 3350),
        ("H800", 989, 989, 1979, 80, 3350),
        ("H20", 148, 148, 296, 96, 4000),
        ("A10", 125, 125, 250, 24, 600),
        ("L4", 121, 121, 242.5, 24, 300),
        ("L20", 119.5, 119.5, 239, 48, 864),
        ("L40S", 362.05, 362.05, 733, 48, 864),
        ("A800-80GB", 312, 312, 624, 80, 2039),
        ("A30", 165, 165, 330, 24, 933),
    ],
)
def test_dense_not_sparse_figures(
    registry: AcceleratorRegistry,
    name: str,
    bf16: float,
    fp16: float,
    int8: float,
    memory: float,
    bandwidth: float,
) -> None:
    spec = registry.get(name)
    assert (spec.bf16_tflops, spec.fp16_tflops, spec.int8_tops) == (bf16, fp16, int8)
    assert (spec.memory_gib, spec.mem_bandwidth_gbps) == (memory, bandwidth)
    assert spec.supports_bf16
    assert spec.dense_tflops_16bit == bf16


def test_pre_ampere_gpus_have_no_bf16(registry: AcceleratorRegistry) -> None:
    t4 = registry.get("T4")
    assert (t4.fp16_tflops, t4.bf16_tflops, t4.supports_bf16) == (65, None, False)
    assert t4.dense_tflops_16bit == 65
    assert (t4.int8_tops, t4.memory_gib, t4.architecture) == (130, 16, "Turing")
    for name in ("V100-16GB", "V100-32GB", "P100", "P4", "P40"):
        spec = registry.get(name)
        assert spec.bf16_tflops is None, name
        assert not spec.supports_bf16, name
    assert registry.get("V100-32GB").fp16_tflops == 125
    assert registry.get("P4").fp16_tflops is None, "no tensor cores: no FP16 figure"


def test_fp8_only_on_hopper_and_ada(registry: AcceleratorRegistry) -> None:
    fp8 = {s.name for s in registry.all() if s.supports_fp8}
    assert fp8 == {"H100-80GB", "H800", "H20", "L20", "L40S", "L4", "RTX-4090D", "RTX-4090", "L40"}
    assert {registry.get(n).architecture for n in fp8} == {"Hopper", "Ada"}
    assert registry.get("H100-80GB").fp8_tflops == 1979


def test_ascend_specs_use_cann_and_keep_reference_confidence(
    registry: AcceleratorRegistry,
) -> None:
    ascend = [s for s in registry.all() if s.vendor == "Huawei"]
    assert {s.name for s in ascend} == ASCEND_NAMES
    assert all(s.stack == "cann" for s in ascend)
    assert {s.name: s.confidence for s in ascend} == {
        "Ascend-910": "medium",
        "Ascend-910B1": "low",
        "Ascend-910B2": "low",
        "Ascend-910B3": "low",
        "Ascend-910B4": "low",
        "Ascend-310P": "low",
    }
    assert registry.get("Ascend-910B3").fp16_tflops == 313
    assert registry.get("Ascend-910B4").memory_gib == 32
    assert registry.get("Ascend-910B3").memory_gib == 64
    assert registry.get("Ascend-910").fp16_tflops == 256
    assert not registry.get("Ascend-910").supports_bf16
    assert registry.get("Ascend-910B2").bf16_tflops is None, "rate unpublished: stays null"
    assert registry.get("Ascend-910B2").dense_tflops_16bit == 376, "falls back to FP16"


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        ("A100-80GB", "A100-80GB"),
        ("a100 80g", "A100-80GB"),
        ("A100 80G", "A100-80GB"),
        ("a100-80g", "A100-80GB"),
        ("NVIDIA A100 80GB", "A100-80GB"),
        ("A100-SXM4-80GB", "A100-80GB"),
        ("A100_40GB", "A100-40GB"),
        ("v100 32g", "V100-32GB"),
        ("Tesla V100-SXM2-16GB", "V100-16GB"),
        ("Tesla T4", "T4"),
        ("NVIDIA A10", "A10"),
        ("A10 24G", "A10"),
        ("nvidia h800", "H800"),
        ("H20-SXM5-96GB", "H20"),
        ("H100", "H100-80GB"),
        ("910b3", "Ascend-910B3"),
        ("Ascend 910B3", "Ascend-910B3"),
        ("ascend-910b3", "Ascend-910B3"),
        ("Huawei Ascend 910B2", "Ascend-910B2"),
        ("snt9b1", "Ascend-910B4"),
        ("Ascend-snt9b3", "Ascend-910B3"),
        ("910A", "Ascend-910"),
        ("snt9", "Ascend-910"),
        ("310P3", "Ascend-310P"),
    ],
)
def test_resolve_aliases(registry: AcceleratorRegistry, typed: str, canonical: str) -> None:
    spec = registry.resolve(typed)
    assert spec is not None, typed
    assert spec.name == canonical
    assert typed in registry


@pytest.mark.parametrize("typed", ["A100", "V100", "910B", "A800", "snt9b", "A10G", "L40X", ""])
def test_families_and_unknowns_do_not_resolve(registry: AcceleratorRegistry, typed: str) -> None:
    assert registry.resolve(typed) is None
    assert typed not in registry


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("A100", ["A100-40GB", "A100-80GB"]),
        ("a100", ["A100-40GB", "A100-80GB"]),
        ("V100", ["V100-16GB", "V100-32GB", "V100-32GB-PCIe"]),
        ("A800", ["A800-40GB", "A800-80GB"]),
        ("910B", ["Ascend-910B1", "Ascend-910B2", "Ascend-910B3", "Ascend-910B4"]),
        ("Ascend 910B", ["Ascend-910B1", "Ascend-910B2", "Ascend-910B3", "Ascend-910B4"]),
        ("snt9b", ["Ascend-910B3", "Ascend-910B4"]),
        ("A10", ["A10"]),
        ("L4", ["L4"]),
        ("a100 80g", ["A100-80GB"]),
        ("L40", ["L40"]),
        ("RTX 4090", ["RTX-4090"]),
        ("MI300X", []),
    ],
)
def test_matching_families(registry: AcceleratorRegistry, query: str, expected: list[str]) -> None:
    assert sorted(s.name for s in registry.matching(query)) == expected


def test_matching_ascend_vendor_family(registry: AcceleratorRegistry) -> None:
    assert {s.name for s in registry.matching("Ascend")} == ASCEND_NAMES


def test_family_keys_cut_only_at_separators() -> None:
    assert family_keys("A100-SXM4-80GB") == {"a100", "a100sxm4", "a100sxm480gb"}
    assert "a10" not in family_keys("A100-80GB")
    assert family_keys("Ascend-910B3") == {"ascend", "ascend910b3", "ascend910b"}
    assert family_keys("910B3") == {"910b3", "910b"}
    assert family_keys("Tesla P4") == {"tesla", "teslap4"}


@pytest.mark.parametrize(
    ("typed", "first"),
    [
        ("A100", ["A100-40GB", "A100-80GB"]),
        ("a100 80", ["A100-80GB"]),
        ("H8000", ["H800"]),
        ("L40X", ["L40", "L40S"]),
    ],
)
def test_suggest(registry: AcceleratorRegistry, typed: str, first: list[str]) -> None:
    hints = registry.suggest(typed)
    assert 1 <= len(hints) <= 3
    assert all(h in registry.names() for h in hints)
    assert hints[: len(first)] == first, hints


def test_suggest_unknown_submodel_offers_its_siblings(registry: AcceleratorRegistry) -> None:
    hints = registry.suggest("Ascend 910B5")
    assert len(hints) == 3
    assert all(h.startswith("Ascend-910B") for h in hints), hints


def test_suggest_nothing_for_garbage(registry: AcceleratorRegistry) -> None:
    assert registry.suggest("zzzzqqq") == []
    assert registry.suggest("   ") == []
    assert registry.suggest("A100", n=1) == ["A100-40GB"]


def test_get_is_exact_and_names_a_hint(registry: AcceleratorRegistry) -> None:
    assert registry.get("H20").memory_gib == 96
    with pytest.raises(KeyError, match=r"unknown accelerator 'A100'.*A100-40GB"):
        registry.get("A100")
    with pytest.raises(KeyError):
        registry.get("a100-80gb")


def test_first_registration_wins() -> None:
    builtin = {s.name: s for s in builtin_accelerators()}
    override = AcceleratorSpec(
        name="T4", vendor="NVIDIA", memory_gib=15.0, source="operator plugin measurement"
    )
    registry = AcceleratorRegistry([override, *builtin_accelerators()])
    assert registry.get("T4") is override
    assert len(registry) == len(builtin)
    assert registry.resolve("Tesla T4") is None, "the override declares no aliases"
    registry = AcceleratorRegistry([*builtin_accelerators(), override])
    assert registry.get("T4") is builtin["T4"]


def test_conflicting_alias_is_reported_and_first_claim_kept() -> None:
    a = AcceleratorSpec(name="X-1", vendor="V", memory_gib=1, aliases=("xx",), source="test a")
    b = AcceleratorSpec(name="X-2", vendor="V", memory_gib=2, aliases=("XX",), source="test b")
    registry = AcceleratorRegistry([a, b])
    assert registry.resolve("xx") is a
    assert len(registry.alias_conflicts) == 1
    assert "X-2" in registry.alias_conflicts[0]


def test_hook_order_refuses_a_plugin_spec_that_conflicts_with_a_builtin() -> None:
    """Through the real plugin manager: the core's specs register first (tryfirst), so a
    plugin's different A10 is refused, counted, and the built-in stands."""
    import plugins.huawei
    from service import hookimpl
    from service.hooks.loader import collect, get_plugin_manager

    class OperatorPlugin:
        @hookimpl
        def suanli_register_accelerators(self) -> list[AcceleratorSpec]:
            return [AcceleratorSpec(name="A10", vendor="NVIDIA", memory_gib=22.0, source="ops")]

    pm = get_plugin_manager(
        load_entrypoints=False, extra_plugins=[plugins.huawei, OperatorPlugin()]
    )
    specs = collect(pm.hook.suanli_register_accelerators())
    builtin = {s.name: s for s in builtin_accelerators()}
    assert specs[: len(builtin)] == list(builtin_accelerators())  # the core comes first
    before = REGISTRY.get_sample_value(
        "suanli_plugin_conflicts_total", {"kind": "accelerator", "name": "A10"}
    )
    registry = AcceleratorRegistry(specs)
    assert set(registry.names()) == NVIDIA_NAMES | ASCEND_NAMES
    assert registry.get("A10") is builtin["A10"]
    assert registry.get("A10").memory_gib != 22.0
    assert registry.refused == ("A10",)
    after = REGISTRY.get_sample_value(
        "suanli_plugin_conflicts_total", {"kind": "accelerator", "name": "A10"}
    )
    assert after == (before or 0) + 1


def test_v100_pcie_has_its_own_rates_and_no_nvlink(registry: AcceleratorRegistry) -> None:
    """Review-3 R19: Huawei p2s (V100 PCIe) was planned with the SXM2 spec (125 TFLOPS,
    NVLink 300 GB/s); the datasheet's PCIe column is 112 TFLOPS, 14 FP32, PCIe 32 GB/s."""
    pcie = registry.get("V100-32GB-PCIe")
    assert pcie.fp16_tflops == 112
    assert pcie.fp32_tflops == 14
    assert pcie.interconnect_gbps == 32
    assert "nvlink" not in (pcie.interconnect or "").lower()
    assert registry.resolve("Tesla V100-PCIE-32GB") is pcie
    sxm = registry.get("V100-32GB")
    assert sxm.fp16_tflops == 125
    assert registry.resolve("Tesla V100-SXM2-32GB") is sxm
