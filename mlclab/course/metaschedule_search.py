"""The child process of ``course.metaschedule``: MetaSchedule's search, run in this process on
the request the kernel wrote, its result written as JSON for the kernel to read.

    python -m mlclab.course.metaschedule_search REQUEST.json RESULT.json MEMORY_MB

What runs is stock MetaSchedule (``ms.tune.tune_tasks``); the settings changed for a notebook's
budget are each named where they are set (see ``course.metaschedule`` for why).
"""
from __future__ import annotations

import errno
import importlib
import importlib.util
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

OUT_OF_MEMORY = 3          # the exit code when the search hit its memory limit


def _import_x86_intrinsics_only() -> None:
    """``TuneContext`` imports ``tvm.s_tir.tensor_intrin``, which parses every tensor intrinsic
    TVM has from TVMScript: CUDA's, ROCm's, Hexagon's, Arm's... -- 34 s of a cold tuning here.
    An x86 CPU's rules can only use the x86 ones (AVX-512 and VNNI dot products), so on x86 the
    package is put in place without running its ``__init__`` and only ``x86`` is imported;
    elsewhere everything is, as TVM does."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return
    name = "tvm.s_tir.tensor_intrin"
    if name not in sys.modules:
        spec = importlib.util.find_spec(name)
        sys.modules[name] = importlib.util.module_from_spec(spec)
    importlib.import_module(name + ".x86")


def _search(request: dict) -> dict:
    """Tune in this process: the child's body."""
    import itertools
    import logging

    # (``python -m mlclab.course.metaschedule`` ran mlclab's __init__ first: TVM's thread pool
    # is sized for this process, and TVM comes without PyTorch)
    _import_x86_intrinsics_only()
    import numpy as np
    import tvm
    from tvm.ir.utils import derived_object
    from tvm.s_tir import meta_schedule as ms
    from tvm.s_tir.meta_schedule.builder import BuilderResult, PyBuilder
    from tvm.s_tir.meta_schedule.builder.local_builder import default_build
    from tvm.s_tir.meta_schedule.measure_callback import PyMeasureCallback
    from tvm.s_tir.meta_schedule.runner import (EvaluatorConfig, PyRunner, PyRunnerFuture,
                                                RunnerResult)
    from tvm.s_tir.meta_schedule.runner.local_runner import (default_alloc_argument,
                                                             default_run_evaluator)

    from .traces import trace_json

    settings = request["settings"]
    started = time.perf_counter()
    logging.getLogger("tvm.s_tir.meta_schedule").setLevel(logging.WARNING)
    mod = tvm.script.from_source(request["module"])
    built: dict = {}
    names = itertools.count()

    @derived_object
    class InProcessBuilder(PyBuilder):
        """LocalBuilder's build function, called here instead of in a pool of workers."""

        def build(self, build_inputs):
            results = []
            for item in build_inputs:
                try:
                    name = f"candidate-{next(names)}"
                    built[name] = default_build(item.mod, item.target, None)
                    results.append(BuilderResult(name, None))
                except Exception as err:  # noqa: BLE001 -- a candidate that fails to build
                    results.append(BuilderResult(None, f"{type(err).__name__}: {err}"))
            return results

    @derived_object
    class Finished(PyRunnerFuture):
        def __init__(self, result):
            super().__init__()
            self.outcome = result

        def done(self):
            return True

        def result(self):
            return self.outcome

    @derived_object
    class InProcessRunner(PyRunner):
        """LocalRunner's argument filling and timing (its default EvaluatorConfig: 3 runs,
        repeated until 100 ms pass), called here instead of in a worker process."""

        def run(self, runner_inputs):
            futures = []
            device = tvm.cpu()
            for item in runner_inputs:
                try:
                    lib = built.pop(item.artifact_path)
                    args = default_alloc_argument(device, [a.as_json() for a in item.args_info],
                                                  1)
                    secs = default_run_evaluator(lib, device, EvaluatorConfig(), args)
                    futures.append(Finished(RunnerResult([float(s) for s in secs], None)))
                except Exception as err:  # noqa: BLE001 -- a candidate that fails to run
                    futures.append(Finished(RunnerResult(None, f"{type(err).__name__}: {err}")))
            return futures

    trials: list = []

    @derived_object
    class Record(PyMeasureCallback):
        """Each round's candidates, in the order measured, with their round number."""

        def apply(self, task_scheduler, task_id, candidates, builder_results, runner_results):
            number = 1 + max((t["round"] for t in trials), default=0)
            for cand, build, run in zip(candidates, builder_results, runner_results):
                error = build.error_msg or run.error_msg
                secs = None if error or not run.run_secs else \
                    float(np.mean([float(s) for s in run.run_secs]))
                trials.append({"round": number, "ms": None if secs is None else 1e3 * secs,
                               "trace": trace_json(cand.sch.trace),
                               "error": None if not error else str(error)[:500]})

    target = tvm.target.Target(settings["target"])
    strategy = ms.search_strategy.EvolutionarySearch(
        population_size=settings["population"],
        init_min_unmeasured=min(50, settings["population"]))
    task = ms.TuneContext(mod=mod, target=target, space_generator="post-order-apply",
                          search_strategy=strategy, task_name="main",
                          rand_state=settings["seed"], num_threads=settings["threads"])
    space = task.space_generator
    defaults = {"population": _default(ms.search_strategy.EvolutionarySearch, "population_size"),
                "warmup": _default(ms.cost_model.XGBModel, "num_warmup_samples")}
    if settings["cost_model"] == "xgb":
        import xgboost
        # Learn from the first round on (the default waits for 100 trials, more than a lesson
        # measures), on one thread: XGBoost's OpenMP threads spin while they wait, and on a
        # loaded 2-core machine two of them made training 200x slower (10 s against 0.05 s).
        cost = ms.cost_model.XGBModel(num_warmup_samples=settings["per_round"],
                                      num_tuning_cores=1)
        described = (f"xgb: MetaSchedule's XGBModel (XGBoost {xgboost.__version__}), trained "
                     f"from the first {settings['per_round']} trials on (by default it ranks at "
                     f"random until {defaults['warmup']} trials are measured)")
    else:
        cost = ms.cost_model.RandomModel(seed=settings["seed"])
        described = "random: MetaSchedule's RandomModel, a random score for every candidate"
    with tempfile.TemporaryDirectory(prefix="mlclab-ms-") as work_dir:
        ms.tune.tune_tasks(
            tasks=[task], task_weights=[1.0], work_dir=work_dir,
            max_trials_global=settings["trials"], num_trials_per_iter=settings["per_round"],
            builder=InProcessBuilder(), runner=InProcessRunner(),
            database=ms.database.MemoryDatabase(), cost_model=cost,
            measure_callbacks=[ms.measure_callback.AddToDatabase(),
                               ms.measure_callback.UpdateCostModel(), Record()],
            task_scheduler="round-robin")
    return {"trials": trials,
            "rules": [type(r).__name__ for r in space.sch_rules],
            "acted": _what_each_rule_did(space.sch_rules, mod),
            "postprocs": [type(p).__name__ for p in space.postprocs],
            "mutators": {type(m).__name__: float(p) for m, p in space.mutator_probs.items()},
            "design_spaces": [str(s.trace) for s in task.generate_design_space()],
            "cost_model": described, "settings": settings, "defaults": defaults,
            "seconds": round(time.perf_counter() - started, 2),
            "load": [round(x, 2) for x in os.getloadavg()],
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def _default(cls, parameter: str):
    """MetaSchedule's default for one of ``cls``'s settings, read from its signature."""
    import inspect
    return inspect.signature(cls.__init__).parameters[parameter].default


def _what_each_rule_did(rules, mod) -> list:
    """Each rule that changed a block of the unscheduled function, with how many schedules it
    made of it: which rules the design space came from (the others left it as it was)."""
    from tvm.s_tir import Schedule
    acted = []
    for rule in rules:
        for name in _block_names(mod):
            sch = Schedule(mod)
            block = sch.get_sblock(name)
            before = len(sch.trace.insts)
            made = rule.apply(sch, block)
            if any(len(each.trace.insts) > before for each in made):
                acted.append({"rule": type(rule).__name__, "block": name,
                              "schedules": len(made)})
    return acted


def _block_names(mod) -> list:
    from tvm.s_tir import Schedule
    sch = Schedule(mod)
    names, todo = [], [sch.get_sblock("root")]
    while todo:
        block = todo.pop(0)
        names.append(sch.get(block).name_hint)
        todo.extend(sch.get_child_blocks(block))
    return names


def _limit_memory(memory_mb: int) -> None:
    """Address space capped (a runaway allocation fails instead of swapping the machine), and
    no core file from a crash. Not the sandbox's ``set_limits``: its per-user process cap would
    count every thread the student's other programs run. Never above a limit the process was
    started under (a graded run's sandbox sets its own): only lowered."""
    import resource
    limit = memory_mb << 20
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main(argv=None) -> int:
    request_path, result_path, memory_mb = sys.argv[1:] if argv is None else argv
    _limit_memory(int(memory_mb))
    try:
        result = _search(json.loads(Path(request_path).read_text(encoding="utf-8")))
    except (MemoryError, OSError) as err:
        if isinstance(err, OSError) and err.errno != errno.ENOMEM:
            raise
        print(f"out of memory: {type(err).__name__}: {err}", file=sys.stderr)
        return OUT_OF_MEMORY
    Path(result_path).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
