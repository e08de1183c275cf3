"""Hyper-parameter sweeps over LoRA SFT: learning rate, optimizer, schedule and rank.

Trials are proposed by optuna (its grid sampler for ``method="grid"``, TPE for ``"optuna"``)
from a SQLite study, so an interrupted sweep continues where it stopped. Every trial is an MLflow
run in a SQLite tracking store (``mlflow ui --backend-store-uri sqlite:///OUT/mlflow.db`` shows
them): its parameters, training loss per step, dev metrics, latency and the adapter. A trial
whose training loss is worse than the median of earlier trials at the same step is stopped early
(pruned). The objective is dev field F1 when an evaluator gives one, else minus the dev loss.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from .sft import SftResult, train_sft
from .training_config import TrainingConfig
from .training_data import Split

__all__ = ["SweepResult", "SweepSpace", "TrialResult", "run_sweep"]

Evaluator = Callable[[Path], dict[str, float]]
"""Given a trained adapter folder, its dev metrics (``f1``, ``exact``, ``p50_ms``, ...)."""


@dataclass(frozen=True)
class SweepSpace:
    learning_rates: Sequence[float] = (1e-4, 3e-4)
    optimizers: Sequence[str] = ("adam", "adamw")
    schedules: Sequence[str] = ("cosine",)
    ranks: Sequence[int] = (8, 16)

    def grid(self) -> dict[str, list[Any]]:
        space: dict[str, list[Any]] = {
            "learning_rate": list(self.learning_rates),
            "optimizer": list(self.optimizers),
            "schedule": list(self.schedules),
            "rank": list(self.ranks),
        }
        empty = [name for name, values in space.items() if not values]
        if empty:
            raise ConfigurationError(f"the sweep has no values for: {', '.join(empty)}")
        return space

    @property
    def size(self) -> int:
        return math.prod(len(v) for v in self.grid().values())


@dataclass
class TrialResult:
    number: int
    params: dict[str, Any]
    state: str  # "complete" or "pruned"
    losses: list[tuple[int, float]]
    metrics: dict[str, float] = field(default_factory=dict)
    objective: float | None = None
    adapter: Path | None = None
    seconds: float = 0.0


@dataclass
class SweepResult:
    trials: list[TrialResult]
    best: TrialResult | None
    folder: Path
    tracking_uri: str


def _overrides(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "sft.learning_rate": params["learning_rate"],
        "sft.optimizer": params["optimizer"],
        "sft.schedule": params["schedule"],
        "lora.rank": params["rank"],
        "lora.alpha": 2 * params["rank"],
    }


def _objective(metrics: dict[str, float]) -> float | None:
    if "f1" in metrics:
        return metrics["f1"]
    if "eval_loss" in metrics:
        return -metrics["eval_loss"]
    return None


class _Pruner:
    """Stop a trial whose mean loss over the last few logs is worse than the earlier trials'
    median at the same step, once past the warm-up steps."""

    def __init__(self, trial: Any, warmup_steps: int) -> None:
        self.trial = trial
        self.warmup = warmup_steps
        self.recent: list[float] = []
        self.stopped = False

    def __call__(self, step: int, logs: dict[str, float]) -> bool:
        if "loss" not in logs:
            return False
        self.recent = [*self.recent[-2:], logs["loss"]]
        # optuna maximizes the objective, so report a loss negated.
        self.trial.report(-sum(self.recent) / len(self.recent), step)
        self.stopped = step >= self.warmup and bool(self.trial.should_prune())
        return self.stopped


def run_sweep(
    config: TrainingConfig,
    space: SweepSpace,
    train: Split,
    dev: Split,
    out: str | Path,
    *,
    method: str = "grid",
    trials: int | None = None,
    evaluate: Evaluator | None = None,
    prune: bool = True,
    progress: bool = True,
    on_trial: Callable[[TrialResult], None] | None = None,
    workers: int = 1,
    base_cache: Path | None = None,
) -> SweepResult:
    """Run the sweep into ``out``: trials, the MLflow store, the optuna study, the report.

    ``workers`` > 1 trains that many trials at once, each in a process of its own (``evaluate``
    must then be a plain value that can be sent to one, such as
    :class:`~cartagent.tuning.dev_eval.DevEvaluator`); no trial is pruned then. ``base_cache``
    keeps a dequantized GGUF base for every trial (see :func:`~.sft.train_sft`)."""
    import mlflow
    import optuna

    if method not in ("grid", "optuna"):
        raise ConfigurationError(f"unknown sweep method {method!r}; use 'grid' or 'optuna'")
    folder = Path(out).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    grid = space.grid()
    count = trials or space.size
    sampler: Any = (
        optuna.samplers.GridSampler(grid, seed=config.seed)
        if method == "grid"
        else optuna.samplers.TPESampler(seed=config.seed)
    )
    pruner = (
        optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=0)
        if prune
        else optuna.pruners.NopPruner()
    )
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        study_name="sft",
        storage=f"sqlite:///{folder / 'optuna.db'}",
        load_if_exists=True,
        direction="maximize",
        sampler=sampler,
        pruner=pruner,
    )
    tracking_uri = f"sqlite:///{folder / 'mlflow.db'}"
    mlflow.set_tracking_uri(tracking_uri)
    experiment = mlflow.get_experiment_by_name("cartagent-sweep")
    experiment_id = (
        experiment.experiment_id
        if experiment is not None
        else mlflow.create_experiment(
            "cartagent-sweep", artifact_location=(folder / "mlartifacts").as_uri()
        )
    )
    steps = config.sft.max_steps or 0
    results = _earlier_trials(folder)
    record = _Recorder(folder, tracking_uri, experiment_id, config, results, on_trial)

    def objective(trial: Any) -> float:
        params = {name: trial.suggest_categorical(name, values) for name, values in grid.items()}
        listen = _Pruner(trial, warmup_steps=max(1, steps // 3)) if prune else None
        with mlflow.start_run(experiment_id=experiment_id, run_name=f"trial-{trial.number:03d}"):
            record.start(params)

            def on_log(step: int, logs: dict[str, float]) -> bool:
                record.log(step, logs)
                return listen(step, logs) if listen is not None else False

            started = time.perf_counter()
            sft = train_sft(
                config.with_overrides(_overrides(params)),
                train,
                folder / "trials" / f"{trial.number:03d}",
                dev=dev,
                progress=progress,
                on_log=on_log,
                base_cache=base_cache,
            )
            pruned = listen is not None and listen.stopped
            metrics = _metrics(sft, None if pruned else evaluate)
            result = record.finish(trial.number, params, sft, metrics, pruned, started)
        if pruned:
            raise optuna.TrialPruned()
        return result.objective if result.objective is not None else float("-inf")

    remaining = count - len(_done(study))
    if method == "grid":
        _retry_failed_points(study)
    if remaining > 0 and workers > 1:
        work = (config, train, dev, evaluate, base_cache)
        _run_pooled(study, grid, remaining, workers, record, work, progress=progress)
    elif remaining > 0:
        study.optimize(objective, n_trials=remaining, catch=())
    return _write(folder, tracking_uri, results)


def _done(study: Any) -> list[Any]:
    from optuna.trial import TrialState

    return [t for t in study.trials if t.state in (TrialState.COMPLETE, TrialState.PRUNED)]


def _retry_failed_points(study: Any) -> None:
    """Queue again each grid point whose trials all failed or were interrupted (Ctrl-C, a time
    limit), as optuna's own retry does: its grid sampler counts a failed point as visited, so
    running the sweep into its folder again would otherwise never finish the grid."""
    import optuna
    from optuna.trial import TrialState

    done = {_point(t.params) for t in _done(study)}
    waiting = {_point(t.params) for t in study.get_trials(states=(TrialState.WAITING,))}
    for trial in study.trials:
        point = _point(trial.params)
        if trial.state != TrialState.FAIL or point in done or point in waiting:
            continue
        waiting.add(point)
        study.add_trial(
            optuna.trial.create_trial(
                state=TrialState.WAITING,
                params=trial.params,
                distributions=trial.distributions,
                system_attrs={**trial.system_attrs, "failed_trial": trial.number},
            )
        )


def _point(params: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(params.items()))


def _metrics(sft: SftResult, evaluate: Evaluator | None) -> dict[str, float]:
    metrics: dict[str, float] = {"train_seconds": sft.seconds}
    if sft.eval_loss is not None:
        metrics["eval_loss"] = sft.eval_loss
    if evaluate is not None:
        metrics.update(evaluate(sft.adapter))
    return metrics


class _Recorder:
    """Each trial's MLflow run (parameters, loss per step, metrics, adapter) and its result."""

    def __init__(
        self,
        folder: Path,
        tracking_uri: str,
        experiment_id: str,
        config: TrainingConfig,
        results: list[TrialResult],
        on_trial: Callable[[TrialResult], None] | None,
    ) -> None:
        self.folder = folder
        self.tracking_uri = tracking_uri
        self.experiment_id = experiment_id
        self.config = config
        self.results = results
        self.on_trial = on_trial

    def start(self, params: dict[str, Any]) -> None:
        import mlflow

        mlflow.log_params(
            {
                **params,
                "max_steps": self.config.sft.max_steps or 0,
                "batch_size": self.config.sft.batch_size,
            }
        )

    def log(self, step: int, logs: dict[str, float]) -> None:
        import mlflow

        if "loss" in logs:
            mlflow.log_metric("train_loss", logs["loss"], step=step)
        if "learning_rate" in logs:
            mlflow.log_metric("learning_rate", logs["learning_rate"], step=step)

    def finish(
        self,
        number: int,
        params: dict[str, Any],
        sft: SftResult,
        metrics: dict[str, float],
        pruned: bool,
        started: float,
    ) -> TrialResult:
        import mlflow

        mlflow.log_metrics(metrics)
        mlflow.set_tag("state", "pruned" if pruned else "complete")
        mlflow.log_artifacts(str(sft.adapter), artifact_path="adapter")
        result = TrialResult(
            number,
            params,
            "pruned" if pruned else "complete",
            sft.losses,
            metrics,
            None if pruned else _objective(metrics),
            sft.adapter,
            time.perf_counter() - started,
        )
        self.results.append(result)
        _write(self.folder, self.tracking_uri, self.results)
        if self.on_trial is not None:
            self.on_trial(result)
        return result


Work = tuple[TrainingConfig, Split, Split, Evaluator | None, Path | None]


def _train_trial(
    work: Work, params: dict[str, Any], folder: Path
) -> tuple[SftResult, dict[str, float]]:
    """One trial, start to end, in a worker process: train, then score."""
    config, train, dev, evaluate, base_cache = work
    sft = train_sft(
        config.with_overrides(_overrides(params)),
        train,
        folder,
        dev=dev,
        progress=False,
        base_cache=base_cache,
    )
    return sft, _metrics(sft, evaluate)


def _share_cores(threads: int) -> None:
    """A worker's share of the CPU: each PyTorch process would otherwise start a thread per
    core, and ``workers`` of them would fight over the cores."""
    import torch

    torch.set_num_threads(threads)


_PRELOADED = ("torch", "transformers", "peft", "cartagent.tuning.sft")
"""What each trial's process needs, imported once by the fork server (about 6 s on 2 cores)."""


def _worker_context() -> BaseContext:
    """Where trials' processes come from: forked from a fork server that imported
    :data:`_PRELOADED` once, so that a process does not import them again; spawned where the
    platform has no fork server. Never a fork of this process: CUDA cannot be used in a
    forked child of a process that has used it."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(_PRELOADED))
    return context


def _run_pooled(
    study: Any,
    grid: dict[str, list[Any]],
    count: int,
    workers: int,
    record: _Recorder,
    work: Work,
    *,
    progress: bool,
) -> None:
    """``count`` trials, ``workers`` at a time, each trained in a process of its own.

    optuna runs ``workers`` objective threads (its grid sampler never hands out a point that is
    running), each waiting on its trial's process; the losses reach MLflow when the trial ends,
    so none is pruned."""
    import threading
    from concurrent.futures import ProcessPoolExecutor

    import mlflow
    from tqdm.auto import tqdm

    lock = threading.Lock()  # one MLflow run and one write of sweep.json at a time
    errors: list[BaseException] = []
    context = _worker_context()
    threads = max(1, (os.cpu_count() or 1) // workers)
    with (
        ProcessPoolExecutor(
            workers, mp_context=context, initializer=_share_cores, initargs=(threads,)
        ) as pool,
        tqdm(total=count, desc="trials", unit="trial", disable=not progress) as bar,
    ):

        def objective(trial: Any) -> float:
            params = {name: trial.suggest_categorical(name, v) for name, v in grid.items()}
            folder = record.folder / "trials" / f"{trial.number:03d}"
            started = time.perf_counter()
            try:
                sft, metrics = pool.submit(_train_trial, work, params, folder).result()
            except BaseException as error:
                errors.append(error)
                raise
            with (
                lock,
                mlflow.start_run(
                    experiment_id=record.experiment_id, run_name=f"trial-{trial.number:03d}"
                ),
            ):
                record.start(params)
                for step, loss in sft.losses:
                    record.log(step, {"loss": loss})
                result = record.finish(trial.number, params, sft, metrics, False, started)
                bar.update()
            return result.objective if result.objective is not None else float("-inf")

        study.optimize(objective, n_trials=count, n_jobs=workers, catch=())
    if errors:
        # optuna's threads drop the errors of the last trials to finish: raise the first here.
        raise errors[0]


def _write(folder: Path, tracking_uri: str, results: list[TrialResult]) -> SweepResult:
    complete = [t for t in results if t.state == "complete" and t.objective is not None]
    best = max(complete, key=lambda t: t.objective or float("-inf")) if complete else None
    sweep = SweepResult(list(results), best, folder, tracking_uri)
    (folder / "sweep.json").write_text(json.dumps(_summary(sweep), indent=2) + "\n", "utf-8")
    return sweep


def _earlier_trials(folder: Path) -> list[TrialResult]:
    """The trials a previous run of this sweep finished (it is being resumed)."""
    file = folder / "sweep.json"
    if not file.is_file():
        return []
    return [
        TrialResult(
            t["number"],
            t["params"],
            t["state"],
            [(int(step), float(loss)) for step, loss in t["losses"]],
            t["metrics"],
            t["objective"],
            Path(t["adapter"]) if t["adapter"] else None,
            t["seconds"],
        )
        for t in json.loads(file.read_text(encoding="utf-8"))["trials"]
    ]


def _summary(sweep: SweepResult) -> dict[str, Any]:
    return {
        "tracking_uri": sweep.tracking_uri,
        "best": None if sweep.best is None else sweep.best.number,
        "trials": [
            {
                "number": t.number,
                "params": t.params,
                "state": t.state,
                "metrics": t.metrics,
                "objective": t.objective,
                "adapter": str(t.adapter) if t.adapter else None,
                "seconds": round(t.seconds, 1),
                "losses": t.losses,
            }
            for t in sweep.trials
        ],
    }
