import gc

from cartagent.heap import frozen_heap


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector can free it


def test_what_lives_at_the_start_is_frozen_and_unfrozen_after() -> None:
    kept = [Node() for _ in range(100)]
    with frozen_heap() as count:
        assert count > len(kept)
        watched = {id(o) for generation in range(3) for o in gc.get_objects(generation)}
        assert not any(id(n) in watched for n in kept)
    assert gc.get_freeze_count() == 0


def test_garbage_made_inside_the_block_is_collected_as_usual() -> None:
    with frozen_heap():
        Node()
        assert gc.collect() >= 1
