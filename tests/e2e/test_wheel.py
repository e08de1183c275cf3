"""cartagent as a user installs it: the wheel, in a fresh virtual environment, run from a folder
outside the repository, finds its demo store and its sandbox migrations in the package."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow

# What the wheel must hold beyond the code, and what it must not (PayPal's full OpenAPI set).
SHIPPED = (
    "cartagent/data/tau-bench-retail/products.json",
    "cartagent/data/tau-bench-retail/users.json",
    "cartagent/data/tau-bench-retail/orders.json",
    "cartagent/data/tau-bench-retail/LICENSE",
    "cartagent/data/webshop/goal_query_map.dev.json",
    "cartagent/data/webshop/LICENSE.md",
    "cartagent/sandbox/migrations/versions/0001_initial.py",
    "cartagent/sandbox/migrations/env.py",
    "cartagent/evals/data/retrieval_tau.jsonl",
    "cartagent/llm/adapters/search-smollm2.gguf",
)
MAX_WHEEL_BYTES = 30 * 1024 * 1024


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` folder of a fresh venv holding only the wheel built from this tree.

    The wheel is built offline from a copy of the tree (no build outputs land in the checkout),
    and its dependencies come from this interpreter's site-packages through a ``.pth`` line
    (nothing is downloaded); the checkout itself is on no path the venv searches.
    """
    work = tmp_path_factory.mktemp("wheel")
    tree = work / "tree"
    shutil.copytree(
        ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    dist = work / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", dist, tree],
        check=True,
        cwd=work,
    )
    [wheel] = dist.glob("cartagent-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert [name for name in SHIPPED if name not in names] == []
    assert not any("paypal-openapi" in name for name in names)
    assert wheel.stat().st_size < MAX_WHEEL_BYTES

    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    [site] = (venv / "lib").glob("python3.*/site-packages")
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [*pip, "--python", venv / "bin" / "python", "install", "--no-deps", "--no-index", wheel],
        check=True,
        cwd=work,
    )
    return venv / "bin"


def _run(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [bin_dir / "cartagent", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_installed_package_is_the_wheel_not_the_checkout(
    installed: Path, tmp_path: Path
) -> None:
    code = "import cartagent, cartagent.data as d; print(cartagent.__file__); print(d.tau_retail())"
    found = subprocess.run(
        [installed / "python", "-c", code],
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        capture_output=True,
        text=True,
        check=True,
    )
    module, store = found.stdout.splitlines()
    assert Path(module).is_relative_to(installed.parent)
    assert Path(store).is_relative_to(installed.parent)


def test_search_finds_products_in_the_packaged_store(installed: Path, tmp_path: Path) -> None:
    result = _run(
        installed, "search", "red t-shirt under 50", "--json", "--mode", "lexical", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["query"]["category"] == "t-shirt"
    assert [hit["title"] for hit in data["hits"]] == ["T-Shirt"]
    assert data["hits"][0]["variant"]["options"]["color"] == "red"


def test_sandbox_seed_loads_the_packaged_store(installed: Path, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'sandbox.db'}"
    result = _run(installed, "sandbox", "seed", "--db", db, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "seeded 50 products, 1000 orders (577 captures, 102 refunds)" in result.stdout
    assert str(installed.parent) in result.stdout  # "... from <the venv's package folder>"
