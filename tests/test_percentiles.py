"""Percentiles of measured values."""

from __future__ import annotations

import math

from cartagent.percentiles import percentile


def test_a_percentile_interpolates_between_the_closest_ranks() -> None:
    values = [4.0, 1.0, 3.0, 2.0]
    assert percentile(values, 0) == 1.0 and percentile(values, 100) == 4.0
    assert percentile(values, 50) == 2.5
    assert math.isclose(percentile(values, 95), 3.85)
    assert percentile([7.0], 99) == 7.0


def test_no_values_have_no_percentile() -> None:
    assert math.isnan(percentile([], 50))
