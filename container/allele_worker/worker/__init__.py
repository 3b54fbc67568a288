"""The worker side: the long-lived HTTP service that the Worker talks to (docs/runner-protocol.md).

``app`` (the HTTP surface) → ``runs`` (the run manager: one supervisor thread per run) →
``completion`` (the relay's summary of the child's outcome and the process facts folded into the
completion report; the result, population and staged files stay parts of the run's store) and
``reporter`` (the reports, the uploads streamed from the store and the start-population fetch, with
the run's token).  It starts children through ``sandbox`` and never imports the child side: the two
meet in ``wire`` (the payloads), ``validation`` and ``errors``.
"""
