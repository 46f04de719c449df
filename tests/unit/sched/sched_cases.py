"""Small hand-made traces: one tuple per job."""

from __future__ import annotations

from clusterplan.sched import Cluster, make_trace, simulate


def jobs(*rows, name="hand"):
    """rows of (submit_s, gpus, run_s[, estimate_s[, user]]); job ids 0, 1, 2 ... in row order."""
    rows = [tuple(row) + (None,) * (5 - len(row)) for row in rows]
    return make_trace(name=name, format="test", job_id=list(range(len(rows))), submit_s=[r[0] for r in rows],
                      gpus=[r[1] for r in rows], run_s=[r[2] for r in rows],
                      estimate_s=[r[2] if r[3] is None else r[3] for r in rows],
                      user=[0 if r[4] is None else r[4] for r in rows])


def starts(trace, policy, num_gpus=4, **cluster):
    """Start times under ``policy`` on a pool of ``num_gpus`` (or the nodes in ``cluster``)."""
    shape = cluster or {"num_nodes": num_gpus, "gpus_per_node": 1}
    return simulate(trace, Cluster(**shape), policy).start_s.tolist()
