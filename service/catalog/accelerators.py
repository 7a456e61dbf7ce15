"""The accelerator registry: canonical specs, alias resolution, family matching, suggestions.

Catalog rows name accelerators by canonical name (``A100-80GB``, ``Ascend-910B3``); people
and clients type anything (``"a100 80g"``, ``"NVIDIA A10"``, ``"910b3"``). The registry is
the one place that maps user text to a spec, so every endpoint resolves names the same way.

Three kinds of lookup, because they answer different questions:

- :meth:`AcceleratorRegistry.resolve` — *which one chip is this?* Exact canonical name or an
  alias that names exactly one chip. A family name (``"A100"``, ``"910B"``) is deliberately
  **not** an alias: the 40 GB and 80 GB parts fit different models, so guessing one would
  be a wrong answer.
- :meth:`AcceleratorRegistry.matching` — *which chips does this constraint allow?* A family
  name matches every member (``"A100"`` → ``A100-40GB`` and ``A100-80GB``).
- :meth:`AcceleratorRegistry.suggest` — *what did the user probably mean?* For "did you
  mean" hints in 400 responses.

Specs come from the ``suanli_register_accelerators`` hook: NVIDIA specs ship with the core
(:func:`builtin_accelerators`, registered ``tryfirst``), Ascend specs with the Huawei plugin.
**The first registration of a name stands**: the core's hook runs first, so a plugin that
registers a *different* spec under an existing canonical name (a T4 100x faster) is
refused with a warning and counted in ``suanli_plugin_conflicts_total``; registering the
same spec again is harmless.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

import msgspec

from service.catalog.models import AcceleratorSpec, normalize_name
from service.runtime.errors import InputError
from service.runtime.metrics import PLUGIN_CONFLICTS

log = logging.getLogger(__name__)

DATA_FILE = Path(__file__).parent / "data" / "accelerators.json"
"""NVIDIA specs shipped with the core (a JSON list of :class:`AcceleratorSpec`)."""

_TOKEN_SPLIT = re.compile(r"[\s_\-/().]+")
_SUBMODEL = re.compile(r"^(.*\d[a-z])\d+$")
"""A trailing sub-model number after ``<digit><letter>``: ``910b3`` → family ``910b``."""


@cache
def builtin_accelerators() -> tuple[AcceleratorSpec, ...]:
    """The NVIDIA specs shipped with the core, decoded once per process."""
    return msgspec.json.decode(DATA_FILE.read_bytes(), type=tuple[AcceleratorSpec, ...])


def family_keys(name: str) -> frozenset[str]:
    """Normalized family prefixes of one name, cut at the separators a human typed.

    ``"A100-SXM4-80GB"`` gives ``a100``, ``a100sxm4``, ``a100sxm``, ``a100sxm480gb``;
    ``"Ascend-910B3"`` gives ``ascend``, ``ascend910b3`` and (sub-model stripped)
    ``ascend910b``. Cutting only at separators keeps ``"A10"`` from matching ``A100``.
    """
    tokens = [t for t in _TOKEN_SPLIT.split(name.strip()) if t]
    keys: set[str] = set()
    for end in range(1, len(tokens) + 1):
        key = normalize_name("".join(tokens[:end]))
        if not key:
            continue
        keys.add(key)
        submodel = _SUBMODEL.match(key)
        if submodel:
            keys.add(submodel.group(1))
    return frozenset(keys)


class AcceleratorRegistry:
    """An immutable, indexed set of accelerator specs (cheap lookups on the request path)."""

    def __init__(self, specs: Iterable[AcceleratorSpec]) -> None:
        by_name: dict[str, AcceleratorSpec] = {}
        refused: list[str] = []
        for spec in specs:
            first = by_name.get(spec.name)
            if first is None:
                by_name[spec.name] = spec
            elif first != spec:
                PLUGIN_CONFLICTS.labels(kind="accelerator", name=spec.name).inc()
                log.warning(
                    "accelerator %r registered again with a different spec (source %s): "
                    "refused, the first registration (source %s) stands",
                    spec.name,
                    spec.source,
                    first.source,
                )
                refused.append(spec.name)
        self.refused = tuple(refused)
        """Names whose later, conflicting specs were refused."""
        self._by_name = by_name
        self._specs = tuple(by_name.values())
        self._keys, self.alias_conflicts = _build_keys(self._specs)
        self._families = _build_families(self._specs)

    def all(self) -> tuple[AcceleratorSpec, ...]:
        """Every spec, in registration order."""
        return self._specs

    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.resolve(name) is not None

    def get(self, name: str) -> AcceleratorSpec:
        """The spec with exactly this canonical name; ``KeyError`` otherwise."""
        try:
            return self._by_name[name]
        except KeyError:
            hint = self.suggest(name)
            raise KeyError(
                f"unknown accelerator {name!r}" + (f"; did you mean {hint}?" if hint else "")
            ) from None

    def resolve(self, name_or_alias: str) -> AcceleratorSpec | None:
        """The one spec a canonical name or alias denotes, or ``None`` (unknown or a family).

        Case, spaces, ``-``/``_`` and a leading ``NVIDIA``/``Huawei`` do not matter, and a
        trailing ``G`` after a number means ``GB`` (``"a100 80g"`` → ``A100-80GB``).
        """
        exact = self._by_name.get(name_or_alias)
        if exact is not None:
            return exact
        return self._keys.get(normalize_name(name_or_alias))

    def matching(self, query: str) -> tuple[AcceleratorSpec, ...]:
        """Every spec a constraint names: one chip, or all members of a family.

        ``"A100-80GB"`` → that chip; ``"A100"`` → both A100s; ``"910B"`` → Ascend 910B1–B4;
        ``"Ascend"`` → every Ascend chip. Empty when nothing matches.
        """
        one = self.resolve(query)
        if one is not None:
            return (one,)
        return self._families.get(normalize_name(query), ())

    def named(self, query: str, field: str, source: str = "body") -> tuple[AcceleratorSpec, ...]:
        """:meth:`matching`, or the 400 every field naming accelerators answers when
        nothing matches (with suggestions, in both languages)."""
        matches = self.matching(query)
        if not matches:
            raise InputError(
                field,
                f"unknown accelerator {query!r}",
                self.suggest(query),
                source=source,
                zh=f"未知加速卡型号 {query!r}",
            )
        return matches

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """Up to ``n`` canonical names close to ``name`` (for "did you mean" hints).

        Members of a family come first (``"A100"`` → ``A100-40GB``, ``A100-80GB``): a
        family name is the commonest reason a single-chip field fails to resolve.
        """
        key = normalize_name(name)
        if not key:
            return []
        found = [spec.name for spec in self._families.get(key, ())]
        candidates = difflib.get_close_matches(key, list(self._keys), n=n * 4, cutoff=0.6)
        if not found and not candidates:  # a typo in a short name ("a1oo"): look wider
            candidates = difflib.get_close_matches(key, list(self._keys), n=n * 4, cutoff=0.4)
        for candidate in candidates:
            canonical = self._keys[candidate].name
            if canonical not in found:
                found.append(canonical)
        return found[:n]


def _build_keys(
    specs: Sequence[AcceleratorSpec],
) -> tuple[dict[str, AcceleratorSpec], tuple[str, ...]]:
    """Normalized canonical names first, then aliases; an alias never shadows a name.

    An alias that two specs claim is ambiguous: the first claim keeps it and the clash is
    recorded in ``alias_conflicts`` (the plugin tests assert there are none).
    """
    keys: dict[str, AcceleratorSpec] = {}
    conflicts: list[str] = []
    for spec in specs:
        key = normalize_name(spec.name)
        if key in keys and keys[key].name != spec.name:
            conflicts.append(f"{spec.name} vs {keys[key].name} ({key})")
            continue
        keys[key] = spec
    for spec in specs:
        for alias in spec.aliases:
            key = normalize_name(alias)
            if not key:  # e.g. an alias of just "NVIDIA": would match the empty query
                continue
            owner = keys.get(key)
            if owner is None:
                keys[key] = spec
            elif owner.name != spec.name:
                conflicts.append(f"alias {alias!r} of {spec.name} already names {owner.name}")
    for conflict in conflicts:
        log.warning("accelerator alias conflict: %s", conflict)
    return keys, tuple(conflicts)


def _build_families(
    specs: Sequence[AcceleratorSpec],
) -> dict[str, tuple[AcceleratorSpec, ...]]:
    families: dict[str, list[AcceleratorSpec]] = {}
    for spec in specs:
        keys: set[str] = set()
        for name in (spec.name, *spec.aliases):
            keys |= family_keys(name)
        for key in keys:
            families.setdefault(key, []).append(spec)
    return {key: tuple(members) for key, members in families.items()}
