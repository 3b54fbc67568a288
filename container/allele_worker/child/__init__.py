"""The child side: what runs in a run's sandboxed child process, and the warm fork server it is
forked from.

``entry`` (read the job, confine the process, run it, send the outcome; ``python -I -m
allele_worker.child`` for a fresh interpreter) → ``jobs`` (the job's parameters and code → one GA run
→ the outcome) → ``ga_result`` (the finished GA → the outcome's result), ``objectives`` (the Pareto
front) and ``warning_tally`` (the run's warnings); ``collector`` is the run's relay at work (what the
job writes, bounded; the outcome validated into the run's store, its bulky parts as ``staged_files``).
``forkserver`` imports all of it once and forks one child per run.  It holds no secret and never
imports the worker side: the two meet in ``wire`` (the payloads), ``validation`` and ``errors``.
"""
