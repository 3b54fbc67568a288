"""Allele's GA worker: an HTTP service (``python -m allele_worker``) that runs each genetic-algorithm
job in a sandboxed child process.  Protocol: docs/runner-protocol.md; layout: container/README.md.

Two sides, which never import each other: ``worker/`` (the service: HTTP, runs, reports) and
``child/`` (what runs in a run's child, and the fork server it is forked from).  Below them the
``sandbox/`` (both of its ends), the ``engine/`` (the child's GA), and at the ground ``wire.py`` (every
payload between processes, typed once) and ``errors.py``.  container/check_imports.py holds the
direction.
"""
