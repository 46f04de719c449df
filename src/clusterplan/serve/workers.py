"""A bounded pool of worker processes, each request under a deadline (docs/serve.md, "Limits"): the server
runs two, one for heavy work and one for light, and no model runs in the server's own process.

A request waits at most ``wait_s`` for a free worker (else ``Busy``: 503 with Retry-After), and no more than
``max_waiting`` wait at once (the rest are ``Busy`` at once); a worker that has not answered within
``deadline_s`` is killed and replaced (``OverBudget``: 422), so a slow or stuck computation costs one
worker for ``deadline_s`` and never the server. Heavy workers run at a lower CPU priority (``NICENESS``) than
the server and the light workers, so that light requests stay fast while every heavy worker is busy.
Each worker is a fresh Python process (never a ``fork`` of the running server), started on first use.
"""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection

from clusterplan.serve.answers import Answer, Job, answer

NICENESS = 10   # the heavy workers' CPU priority below the server's and the light workers' (niceness 0)


class Busy(Exception):
    """Every worker busy and the queue full (or the wait past its limit): answer 503, retry after ``retry_s``."""

    def __init__(self, retry_s: int):
        super().__init__(f"the server is busy with other heavy requests; retry in {retry_s} s")
        self.retry_s = retry_s


class OverBudget(Exception):
    """A request that ran past the deadline: its worker was killed."""


class Crashed(Exception):
    """A worker that raised (the traceback) or died: answer 500 and log it."""


def _serve(connection, niceness: int) -> None:
    """A worker process: answer each ``Job`` received with ``("ok", Answer)`` or ``("error", traceback)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C stops the server, which kills its workers
    try:
        os.nice(niceness)
    except OSError:
        pass
    while True:
        try:
            job = connection.recv()
        except (EOFError, OSError):
            return
        try:
            reply = ("ok", answer(job))
        except BaseException:   # noqa: BLE001 - reported to the server, which logs it and answers 500
            reply = ("error", traceback.format_exc())
        connection.send(reply)


@dataclass(kw_only=True, slots=True)
class _Worker:
    niceness: int = NICENESS
    process: subprocess.Popen | None = None
    connection: Connection | None = None

    def start(self) -> None:
        """A fresh ``python -m clusterplan.serve.workers FD`` talking over a socket pair (a plain subprocess,
        not multiprocessing, whose ``spawn`` re-imports the parent's ``__main__``)."""
        ours, theirs = socket.socketpair()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}
        with theirs:
            self.process = subprocess.Popen([sys.executable, "-m", "clusterplan.serve.workers", str(theirs.fileno()),
                                             str(self.niceness)],
                                            pass_fds=[theirs.fileno()], env=env, stdin=subprocess.DEVNULL)
        self.connection = Connection(ours.detach())

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=5)
            self.connection.close()
        self.process = self.connection = None


class Workers:
    """``size`` worker processes at ``niceness``, ``max_waiting`` requests queued for them at most."""

    def __init__(self, *, size: int, deadline_s: float, wait_s: float, max_waiting: int, niceness: int = NICENESS):
        self.size, self.deadline_s, self.wait_s, self.max_waiting = size, deadline_s, wait_s, max_waiting
        self._workers = [_Worker(niceness=niceness) for _ in range(size)]
        self._idle: queue.Queue[_Worker] = queue.Queue()
        for worker in self._workers:
            self._idle.put(worker)
        self._lock = threading.Lock()
        self._admitted = 0

    def run(self, job: Job) -> Answer:
        """``job``'s answer from a worker (blocking: call it from a thread)."""
        with self._lock:
            if self._admitted >= self.size + self.max_waiting:
                raise Busy(self._retry_s())
            self._admitted += 1
        try:
            try:
                worker = self._idle.get(timeout=self.wait_s)
            except queue.Empty:
                raise Busy(self._retry_s()) from None
            return self._on(worker, job)
        finally:
            with self._lock:
                self._admitted -= 1

    def _on(self, worker: _Worker, job: Job) -> Answer:
        replace = True
        try:
            if not worker.alive():
                worker.stop()
                worker.start()
            worker.connection.send(job)
            if not worker.connection.poll(self.deadline_s):
                raise OverBudget(f"the request ran past the live server's budget of {self.deadline_s:g} s "
                                 f"per request (clusterplan plan has no such limit)")
            status, value = worker.connection.recv()
            replace = False
        except (EOFError, OSError) as died:
            raise Crashed(f"a worker process died ({type(died).__name__})") from None
        finally:
            if replace:
                worker.stop()   # killed now; the next request started on it starts a fresh process
            self._idle.put(worker)
        if status == "error":
            raise Crashed(value)
        return value

    def warm(self) -> None:
        """Start every worker now (each takes about a second to import the models) rather than on first use."""
        for worker in self._workers:
            if not worker.alive():
                worker.start()

    def _retry_s(self) -> int:
        return max(1, round(self.deadline_s / 2))

    def close(self) -> None:
        """Kill every worker process."""
        for worker in self._workers:
            worker.stop()


class Pools:
    """The light and the heavy pool, started and stopped together."""

    def __init__(self, light: Workers, heavy: Workers):
        self.light, self.heavy = light, heavy

    def warm(self) -> None:
        self.light.warm()
        self.heavy.warm()

    def close(self) -> None:
        self.light.close()
        self.heavy.close()


def default_size() -> int:
    """One worker per core but one (for the server itself), between 1 and 4."""
    return max(1, min(4, (os.cpu_count() or 2) - 1))


if __name__ == "__main__":
    _serve(Connection(int(sys.argv[1])), int(sys.argv[2]))
