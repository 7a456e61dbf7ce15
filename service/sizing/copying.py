"""Copies of frozen, slotted dataclasses with a few fields changed, every other one shared.

The planner copies a resolution (:class:`~service.sizing.resolve.ResolvedWorkload`) and
its job (:class:`~service.planning.resolve.Job`) once per answer, for the request's
length. ``dataclasses.replace`` checks each field's kind and runs the generated
``__init__``; a loop of ``getattr`` and ``object.__setattr__`` by name looks every slot
up by its name twice. The copier :func:`copier` builds instead reads each field as a
plain attribute and stores it through the slot's own descriptor, in straight-line code
generated once per class (as :mod:`dataclasses` generates ``__init__``): measured on the
2-core build machine, 2.5 µs for a 16-field copy where the loop took 6.7 µs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def copier(cls: type[T], changed: tuple[str, ...]) -> Callable[..., T]:
    """``copy(old, *values)``: a new ``cls`` sharing every field of ``old`` but
    ``changed``, which are set to ``values`` in that order (no ``__init__``,
    ``__post_init__`` or checks run: what ``dataclasses.replace`` would give for a class
    whose ``__init__`` only stores its fields)."""
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    missing = set(changed) - set(names)
    if missing:
        raise ValueError(f"{cls.__name__} has no fields {sorted(missing)}")
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    lines = [f"def copy(old, {', '.join(changed)}):", "    new = _new(_cls)"]
    for i, name in enumerate(names):
        setter = f"_set{i}"
        scope[setter] = cls.__dict__[name].__set__  # the slot's member descriptor
        value = name if name in changed else f"old.{name}"
        lines.append(f"    {setter}(new, {value})")
    lines.append("    return new")
    exec("\n".join(lines), scope)  # noqa: S102 (generated from the class's own field names)
    made: Callable[..., T] = scope["copy"]
    return made
