"""Running a method over a benchmark: what ``viddiff run``, ``baseline``, ``audit`` and ``ablate`` share.

- :mod:`~viddiff.runs.pipeline`: one run, from the dataset to the scored output directory (``run_benchmark``);
- :mod:`~viddiff.runs.sample_runner`: the concurrent loop over samples, each isolated from the others;
- :mod:`~viddiff.runs.failures`: what a failed sample leaves behind, and which failures stop the run;
- :mod:`~viddiff.runs.resume`: which config changes ``--resume`` accepts;
- :mod:`~viddiff.runs.output_lock`: one writer per output directory;
- :mod:`~viddiff.runs.cost_guard`: ``run.max_cost_usd``;
- :mod:`~viddiff.runs.shared_models` and :mod:`~viddiff.runs.ablate`: several runs on one cache and one embedder.

Runs sit above methods and benchmarks and below the commands: nothing here imports ``viddiff.commands``,
``viddiff.cli`` or ``viddiff.api``.
"""
