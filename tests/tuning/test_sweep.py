"""Sweeps: every trial tracked in MLflow, the best chosen, resumable, pruned early, reported."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

from cartagent.errors import ConfigurationError
from cartagent.tuning.sft import train_sft
from cartagent.tuning.sweep import SweepSpace, _Pruner, run_sweep
from cartagent.tuning.sweep_report import write_report
from cartagent.tuning.training_data import load_split

from .test_sft import config_for
from .tiny_model import write_split

SPACE = SweepSpace(learning_rates=(1e-4, 1e-3), optimizers=("adamw",), ranks=(4,))


def quality(adapter: Path) -> dict[str, float]:
    """A stand-in evaluator: the trial with the higher learning rate is 'better'."""
    record = json.loads((adapter / "training.json").read_text())
    lr = record["config"]["sft"]["learning_rate"]
    return {"f1": 0.9 if lr > 5e-4 else 0.5, "p50_ms": 100.0 * record["config"]["lora"]["rank"]}


def quality_and_threads(adapter: Path) -> dict[str, float]:
    """:func:`quality`, the PyTorch threads of the process that scored the trial, and that
    process's parent."""
    import torch

    threads = float(torch.get_num_threads())
    return {**quality(adapter), "threads": threads, "parent": float(os.getppid())}


def test_a_grid_sweep_tracks_every_trial_and_picks_the_best(tiny_base: str, tmp_path: Path) -> None:
    mlflow = pytest.importorskip("mlflow")
    train = load_split(write_split(tmp_path / "train.jsonl", copies=1))
    dev = load_split(write_split(tmp_path / "dev.jsonl", copies=1))

    result = run_sweep(
        config_for(tiny_base), SPACE, train, dev, tmp_path / "sweep", evaluate=quality,
        prune=False, progress=False,
    )  # fmt: skip

    assert sorted(t.params["learning_rate"] for t in result.trials) == [1e-4, 1e-3]
    assert result.best is not None and result.best.params["learning_rate"] == 1e-3
    assert all(t.state == "complete" and "eval_loss" in t.metrics for t in result.trials)
    mlflow.set_tracking_uri(result.tracking_uri)
    runs = mlflow.search_runs(experiment_names=["cartagent-sweep"], output_format="list")
    assert len(runs) == 2
    client = mlflow.MlflowClient(result.tracking_uri)
    for run in runs:
        assert run.data.params["optimizer"] == "adamw"
        assert run.data.metrics["f1"] in (0.5, 0.9)
        history = client.get_metric_history(run.info.run_id, "train_loss")
        assert [m.step for m in history] == [1, 2, 3]
        assert "adapter" in {a.path for a in client.list_artifacts(run.info.run_id)}

    again = run_sweep(
        config_for(tiny_base), SPACE, train, dev, tmp_path / "sweep", evaluate=quality,
        prune=False, progress=False,
    )  # fmt: skip

    assert len(again.trials) == 2  # resumed: the finished grid runs nothing new
    assert again.best is not None and again.best.number == result.best.number
    assert len(mlflow.search_runs(experiment_names=["cartagent-sweep"], output_format="list")) == 2

    report = write_report(again)
    text = report.read_text()
    assert text.count("| adamw |") == 2 and "★" in text
    for plot in ("loss_curves.png", "quality.png", "latency.png"):
        assert (report.parent / plot).read_bytes().startswith(b"\x89PNG")


class FakeTrial:
    def __init__(self, prune_from: int) -> None:
        self.prune_from = prune_from
        self.reported: list[tuple[float, int]] = []

    def report(self, value: float, step: int) -> None:
        self.reported.append((value, step))

    def should_prune(self) -> bool:
        return self.reported[-1][1] >= self.prune_from


def test_the_pruner_waits_for_the_warm_up_then_follows_the_study() -> None:
    pruner = _Pruner(FakeTrial(prune_from=1), warmup_steps=3)

    decisions = [pruner(step, {"loss": 2.0}) for step in (1, 2, 3)]

    assert decisions == [False, False, True]
    assert pruner.trial.reported[-1] == (-2.0, 3)
    assert pruner(4, {"grad_norm": 1.0}) is False  # no loss in the log: no decision


def test_a_trial_told_to_stop_stops_and_still_writes_its_adapter(
    tiny_base: str, tmp_path: Path
) -> None:
    train = load_split(write_split(tmp_path / "train.jsonl", copies=1))
    config = config_for(tiny_base, **{"sft.max_steps": 6})

    def stop_at_two(step: int, logs: dict[str, Any]) -> bool:
        return step >= 2

    result = train_sft(config, train, tmp_path / "run", progress=False, on_log=stop_at_two)

    assert result.steps == 2
    assert (result.adapter / "adapter_config.json").is_file()


def test_a_sweep_needs_values_on_every_axis() -> None:
    with pytest.raises(ConfigurationError, match="no values for: rank"):
        SweepSpace(ranks=()).grid()
    assert SweepSpace().size == 8


def test_trials_trained_in_worker_processes_are_tracked_like_the_others(
    tiny_base: str, tmp_path: Path
) -> None:
    mlflow = pytest.importorskip("mlflow")
    train = load_split(write_split(tmp_path / "train.jsonl", copies=1))
    dev = load_split(write_split(tmp_path / "dev.jsonl", copies=1))
    space = SweepSpace(learning_rates=(1e-4, 1e-3), optimizers=("adam", "adamw"), ranks=(4,))
    finished: list[int] = []

    result = run_sweep(
        config_for(tiny_base), space, train, dev, tmp_path / "sweep",
        evaluate=quality_and_threads, progress=False, workers=2,
        on_trial=lambda t: finished.append(t.number),
    )  # fmt: skip

    points = {(t.params["learning_rate"], t.params["optimizer"]) for t in result.trials}
    assert len(result.trials) == 4 and len(points) == 4  # each grid point once
    assert sorted(finished) == [0, 1, 2, 3]
    assert all(t.state == "complete" and len(t.losses) == 3 for t in result.trials)
    assert result.best is not None and result.best.params["learning_rate"] == 1e-3
    # Two workers share the cores instead of each starting a thread per core.
    share = max(1, (os.cpu_count() or 1) // 2)
    assert all(t.metrics["threads"] == share for t in result.trials)
    if "forkserver" in multiprocessing.get_all_start_methods():
        # Forked by the fork server, which imported PyTorch once, not spawned by this process.
        assert all(t.metrics["parent"] != os.getpid() for t in result.trials)
    client = mlflow.MlflowClient(result.tracking_uri)
    runs = client.search_runs([client.get_experiment_by_name("cartagent-sweep").experiment_id])
    assert len(runs) == 4
    for run in runs:
        history = client.get_metric_history(run.info.run_id, "train_loss")
        assert [m.step for m in history] == [1, 2, 3]
        assert run.data.metrics["f1"] in (0.5, 0.9) and "eval_loss" in run.data.metrics


def test_running_an_interrupted_sweep_again_retrains_the_points_that_failed(
    tiny_base: str, tmp_path: Path
) -> None:
    train = load_split(write_split(tmp_path / "train.jsonl", copies=1))
    trained: list[float] = []

    def interrupted(adapter: Path) -> dict[str, float]:
        record = json.loads((adapter / "training.json").read_text())
        trained.append(record["config"]["sft"]["learning_rate"])
        if record["config"]["sft"]["learning_rate"] > 5e-4:
            raise KeyboardInterrupt  # as a time limit's SIGINT lands mid-trial
        return quality(adapter)

    def scored(adapter: Path) -> dict[str, float]:
        trained.append(
            json.loads((adapter / "training.json").read_text())["config"]["sft"]["learning_rate"]
        )
        return quality(adapter)

    sweep = tmp_path / "sweep"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(config_for(tiny_base), SPACE, train, train, sweep, evaluate=interrupted,
                  prune=False, progress=False)  # fmt: skip
    first = list(trained)
    result = run_sweep(config_for(tiny_base), SPACE, train, train, sweep, evaluate=scored,
                       prune=False, progress=False)  # fmt: skip

    assert first[-1] == 1e-3  # the sweep stopped there
    unstarted = [lr for lr in (1e-4,) if lr not in first]
    # The interrupted point once more, and whatever the first run never reached.
    assert sorted(trained[len(first) :]) == sorted([1e-3, *unstarted])
    assert sorted(t.params["learning_rate"] for t in result.trials) == [1e-4, 1e-3]
    assert all(t.state == "complete" for t in result.trials)
    assert result.best is not None and result.best.params["learning_rate"] == 1e-3
    again = run_sweep(config_for(tiny_base), SPACE, train, train, sweep, evaluate=scored,
                      prune=False, progress=False)  # fmt: skip
    assert len(again.trials) == 2 and len(trained) == len(first) + 1 + len(unstarted)


def test_a_failed_trial_in_a_worker_stops_the_sweep_with_its_error(
    tiny_base: str, tmp_path: Path
) -> None:
    train = load_split(write_split(tmp_path / "train.jsonl", copies=1))
    config = config_for(tiny_base, **{"model.base": str(tmp_path / "missing")})

    with pytest.raises(ConfigurationError, match="no such folder"):
        run_sweep(config, SPACE, train, train, tmp_path / "sweep", progress=False, workers=2)
