"""The garbage collector and a long-lived heap.

A server loads its catalog, indexes and models once and keeps them until it stops. CPython's
oldest-generation collections walk every tracked object, however old: at 300,000 products
one such pass took 174 ms in the middle of a search (`cartagent bench search`), the largest part
of its p99. :func:`frozen_heap` collects once and then moves everything alive into the
collector's permanent generation, where later passes do not look; what requests allocate is
collected as before.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["frozen_heap"]


@contextmanager
def frozen_heap() -> Iterator[int]:
    """Collect, then freeze what survives for the block (its value: how many objects);
    unfreeze after it, so that what the block let go of can be collected."""
    gc.collect()
    gc.freeze()
    try:
        yield gc.get_freeze_count()
    finally:
        gc.unfreeze()
