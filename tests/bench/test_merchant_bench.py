"""``cartagent bench merchant``: the figures, and a short real run of `cartagent merchant`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cartagent.bench.merchant import (
    ROLES,
    STEPS,
    Result,
    Target,
    ceiling_lines,
    error_lines,
    render,
    target_line,
)
from cartagent.cli.main import cli
from tests.web.test_serve import PRODUCTS


def _result(clients: int = 8, flows: int = 300, errors: int = 0, p99: float = 0.05) -> Result:
    latencies = [0.01] * 98 + [p99] * 2
    steps = {step: [0.002, 0.004, 0.006] for step in STEPS}
    kinds = {"complete 503": errors} if errors else {}
    return Result("sqlite", clients, flows, errors, 2.0, latencies, steps, kinds)


def test_the_table_shows_rates_latencies_and_each_step() -> None:
    table = render([_result()])
    assert "complete p50 ms" in table
    assert "| sqlite  | 8       | 300   | 0      | 150     | 10.0   | 50.0   | 4.0 " in table
    out = _result().to_json()
    assert (out["flows"], out["errors"], out["flows_per_s"], out["p50_ms"]) == (300, 0, 150, 10)
    assert out["steps"]["update"] == {"count": 3, "p50_ms": 4.0, "p99_ms": pytest.approx(5.96)}


def test_the_target_is_printed_beside_what_was_measured() -> None:
    assert "150 checkouts/s, p99 50.0 ms, 0 errors: met" in target_line([_result()])
    slow = target_line([_result(p99=0.2)])
    assert "p99 200.0 ms" in slow and "NOT met" in slow
    assert "NOT met" in target_line([_result(errors=1)])
    assert "not measured" in target_line([_result(clients=2)])
    assert "not measured" in target_line([_result()], Target(backend="postgresql"))


def test_errors_are_listed_by_kind() -> None:
    assert error_lines([_result(), _result(clients=2, errors=3)]) == [
        "sqlite, 2 client(s): 3 error(s): complete 503 x3"
    ]


def test_cpu_per_checkout_and_the_ceiling_it_sets() -> None:
    run = _result(flows=300)
    run.cpu = {"merchant": 4.5, "sandbox": 1.5, "client": 1.5}
    assert run.cpu_ms_per_flow("merchant") == 15.0
    assert "| 15.0 / 5.0 / 5.0 " in render([run])
    assert run.to_json()["cpu_ms_per_flow"] == {"merchant": 15.0, "sandbox": 5.0, "client": 5.0}
    # 25 CPU ms per checkout: two busy cores give 80 checkouts/s at most
    assert ceiling_lines([run], cores=2) == [
        "sqlite, 8 client(s): 25.00 CPU ms per checkout in all; "
        "2 cores fully busy would give at most 80 checkouts/s"
    ]
    unmeasured = _result()
    assert "| - / - / - " in render([unmeasured])
    assert ceiling_lines([unmeasured], cores=2) == []


@pytest.mark.timeout(120)
@pytest.mark.slow
def test_a_real_merchant_is_measured_over_http(tmp_path: Path) -> None:
    catalog = tmp_path / "products.json"
    catalog.write_text(json.dumps(PRODUCTS))
    figures = tmp_path / "figures.json"
    args = ["--clients", "1,2", "--duration", "1", "--warmup", "0.5", "--catalog", str(catalog)]
    result = CliRunner().invoke(cli, ["bench", "merchant", *args, "--json", str(figures)])
    assert result.exit_code == 0, result.output
    assert "| sqlite  | 2 " in result.output
    assert "target: >= 150 complete checkouts/s at 8 clients" in result.output
    assert "PayPal flow" in result.output
    out = json.loads(figures.read_text())
    assert out["target"] == {"backend": "sqlite", "clients": 8, "flows_per_s": 150, "p99_ms": 100}
    assert [(r["backend"], r["clients"]) for r in out["runs"]] == [("sqlite", 1), ("sqlite", 2)]
    for run in out["runs"]:
        assert run["flows"] > 0 and run["errors"] == 0 and run["error_kinds"] == {}
        assert run["flows_per_s"] > 0 and 0 < run["p50_ms"] <= run["p99_ms"]
        assert all(run["steps"][step]["count"] >= run["flows"] for step in STEPS)
        # the merchant, the sandbox it started (a process of its own) and this process all ran
        assert all(run["cpu_ms_per_flow"][role] > 0 for role in ROLES), run["cpu_ms_per_flow"]
    assert "CPU ms per checkout in all" in result.output
    assert [r["clients"] for r in out["sandbox_paypal_flow"]] == [1, 2]
    assert all(r["flows"] > 0 and r["errors"] == 0 for r in out["sandbox_paypal_flow"])


def test_bad_options_are_refused() -> None:
    runner = CliRunner()
    assert "--clients" in runner.invoke(cli, ["bench", "merchant", "--clients", "x"]).output
    refused = runner.invoke(cli, ["bench", "merchant", "--backend", "mysql"])
    assert refused.exit_code == 2 and "mysql" in refused.output
