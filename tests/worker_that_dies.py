"""A per-source function whose worker process dies on a source under a folder named ``kill_me``: what an out-of-memory kill looks
like to the audit. A module of its own so the audit's worker processes can import it."""

import os

from curvedoc.audit.engine import audit_source


def audit_or_die(task):
    if "kill_me" in task.source.path.parts:
        os._exit(137)
    return audit_source(task)
