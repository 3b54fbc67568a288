"""The worker side: the long-lived HTTP service that the Worker talks to (docs/runner-protocol.md).

``app`` (the HTTP surface) → ``runs`` (the run manager: one supervisor thread per run) →
``completion`` (the child's outcome and the process facts folded into the completion report),
``staged_files`` (the report's bulky parts as files) and ``reporter`` (the reports, uploads and the
start-population fetch, with the run's token).  It starts children through ``sandbox`` and never
imports the child side: the two meet in ``wire`` (the payloads) and ``errors``.
"""
