"""The integrations are optional: importing cartagent never imports a framework."""

from __future__ import annotations

import subprocess
import sys

FRAMEWORKS = ("agents", "langchain_core", "openai")


def test_importing_cartagent_its_toolkit_and_the_openai_tools_imports_no_framework() -> None:
    code = (
        "import sys, cartagent, cartagent.tools, cartagent.llm, cartagent.assistant, "
        "cartagent.integrations, cartagent.integrations.openai_tools; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({FRAMEWORKS!r})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout

    assert out.strip() == "[]"
