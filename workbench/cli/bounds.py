"""Integer flags inside a stated range: argparse refuses any other value with one line naming the
flag (exit 2), before a workspace is opened.

>>> hops = between(0, 10)
>>> hops("3")
3
>>> hops("-1")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: -1 is not a whole number from 0 to 10
>>> like_setting("retrieval.k")("1" + "0" * 30)
Traceback (most recent call last):
...
argparse.ArgumentTypeError: 1000000000000000000000000000000 is not a whole number from 1 to 1000
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import annotated_types

from ..settings import Settings

__all__ = ["between", "finite_between", "like_setting", "setting_range"]


def between(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type``: a whole number from ``low`` to ``high``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            shown = text if len(text) <= 40 else text[:37] + "..."
            raise argparse.ArgumentTypeError(f"{shown} is not a whole number from {low} to {high}")
        return value
    return parse


def finite_between(low: float, high: float) -> Callable[[str], float]:
    """An argparse ``type``: a number from ``low`` to ``high`` (``inf`` and ``nan`` are neither).

    >>> finite_between(0, 100)("2.5")
    2.5
    """
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not low <= value <= high:  # false for nan
            shown = text if len(text) <= 40 else text[:37] + "..."
            raise argparse.ArgumentTypeError(f"{shown} is not a number from {low:g} to {high:g}")
        return value
    return parse


def setting_range(path: str) -> tuple[int, int]:
    """The whole numbers the integer setting ``"section.field"`` accepts, as the settings model states them.

    >>> setting_range("graph.max_path_hops")
    (1, 10)
    """
    section, _, name = path.partition(".")
    model = Settings.model_fields[section].annotation
    assert isinstance(model, type)
    low, high = None, None
    for rule in model.model_fields[name].metadata:  # type: ignore[attr-defined]
        if isinstance(rule, annotated_types.Gt):
            low = int(rule.gt) + 1  # type: ignore[call-overload]
        elif isinstance(rule, annotated_types.Ge):
            low = int(rule.ge)  # type: ignore[call-overload]
        elif isinstance(rule, annotated_types.Lt):
            high = int(rule.lt) - 1  # type: ignore[call-overload]
        elif isinstance(rule, annotated_types.Le):
            high = int(rule.le)  # type: ignore[call-overload]
    if low is None or high is None:
        raise KeyError(f"{path!r} states no range")
    return low, high


def like_setting(path: str) -> Callable[[str], int]:
    """An argparse ``type`` for a flag that overrides the integer setting ``path``: its range."""
    return between(*setting_range(path))
