"""Input clamping shared by the player models (mirrored in players/model-util.js)."""

from __future__ import annotations

import math
from typing import Any, Mapping

Spec = Mapping[str, Mapping[str, Any]]


def clamp_inputs(spec: Spec, raw: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Return ``(values, clamped)``: every input of ``spec`` brought into range.

    * a missing input takes its default (not reported);
    * a choice that is not one of ``choices`` becomes the default;
    * a number that is not finite becomes the default; an ``int`` is rounded half up
      (``floor(x + 0.5)``); below ``min`` or above ``max`` it is set to the bound.
    ``clamped`` names every input that was changed, in ``spec`` order.
    """
    values: dict[str, Any] = {}
    clamped: list[str] = []
    for name, s in spec.items():
        default = s["default"]
        if name not in raw or raw[name] is None:
            values[name] = default
            continue
        v = raw[name]
        if s["kind"] == "choice":
            if v not in s["choices"]:
                v = default
                clamped.append(name)
            values[name] = v
            continue
        try:
            x = float(v)
        except (TypeError, ValueError):
            x = math.nan
        changed = False
        if not math.isfinite(x):
            x, changed = float(default), True
        if s["kind"] == "int":
            r = math.floor(x + 0.5)
            changed = changed or r != x
            x = r
        if x < s["min"]:
            x, changed = s["min"], True
        elif x > s["max"]:
            x, changed = s["max"], True
        values[name] = int(x) if s["kind"] == "int" else float(x)
        if changed:
            clamped.append(name)
    return values, clamped


def ceil_div(a: int, b: int) -> int:
    """Integer ceiling of a / b for a >= 0, b > 0."""
    return -(-a // b)
