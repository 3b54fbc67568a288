"""Allele's GA worker: an HTTP service (``python -m allele_worker``) that runs each genetic-algorithm
job in a sandboxed child process.  Protocol: docs/runner-protocol.md; layout: container/README.md."""
