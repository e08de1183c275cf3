"""(Being built.)"""

from __future__ import annotations

from fastapi import APIRouter

from .state import Sandbox

router = APIRouter()


class DeliveryWorker:
    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass
