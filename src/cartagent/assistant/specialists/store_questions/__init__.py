"""Questions about the store itself (shipping, returns, warranty, payment policies), answered
from its policy documents (:mod:`.knowledge`) by :class:`StoreQuestionsSpecialist`."""

from __future__ import annotations

from .specialist import StoreQuestionsSpecialist

__all__ = ["StoreQuestionsSpecialist"]
