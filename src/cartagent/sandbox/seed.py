"""(Being built.)"""

from __future__ import annotations


def seed_store(
    db_url: str,
    client_id: str,
    client_secret: str,
    *,
    data_dir: str | None = None,
    progress: bool = False,
) -> str:
    raise NotImplementedError("seeding is being built")
