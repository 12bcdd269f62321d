"""One host's CPUs: shared by the sandbox jobs that build and run, held alone by the one that times.

Why: a parallel kernel runs one thread per usable core and meets its threads at a barrier after every
parallel loop. When another process keeps a core busy, the thread the barrier waits for is descheduled:
on the 2-core CI machine a pooling kernel with 16 parallel loops per call took 0.38 ms idle and up to
11 ms beside one busy process (a one-thread build of it slowed only 1.6x), and a tuning run's final check
once read 32.9 ms for a 0.38 ms kernel while a ``pip install`` ran. Two Celery tasks, a tuner run beside
dataset generation, or a test run beside a benchmark do exactly that.

So every sandbox job holds a **shared** lock on one file per host while it works, and a job converts it to
an **exclusive** one while it times (``alone``): a timing waits until the other jobs on the host have
finished what they were doing, and they wait while it times. A turnstile file gives a waiting timer
priority over jobs that start after it (no starvation behind a stream of builds). ``flock`` locks die with
their process, so a killed or crashed worker never leaves one held.

Waiting is bounded (``STEPTP_CPU_LOCK_WAIT``, default 60 s, well inside a job's wall-time limit): a timer
that did not get the CPUs alone in time times anyway and says so in the result's notes, instead of turning
a correct kernel into a timeout. Work outside the sandbox (the tuner's own process, a web server) takes no
lock; run benchmarks on an otherwise quiet machine.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass

LOCK_ENV = "STEPTP_CPU_LOCK"
WAIT_ENV = "STEPTP_CPU_LOCK_WAIT"
DEFAULT_WAIT_S = 60.0
#: How often a waiter retries (``flock`` has no timeout of its own).
POLL_S = 0.005


def lock_path() -> str:
    """The host-wide lock file: ``STEPTP_CPU_LOCK``, else ``steptp-cpu.lock`` in the system temp folder
    (one per host whatever checkout or ``STEPTP_VAR_DIR`` a process uses)."""
    return os.environ.get(LOCK_ENV) or os.path.join(tempfile.gettempdir(), "steptp-cpu.lock")


def wait_seconds() -> float:
    return float(os.environ.get(WAIT_ENV) or DEFAULT_WAIT_S)


@dataclass(frozen=True)
class Alone:
    """What ``alone`` obtained: whether the CPUs were this job's alone, and how long it waited for them."""

    alone: bool
    waited_s: float
    #: Why there was no lock to take at all (the lock file could not be opened).
    unusable: str | None = None

    def note(self) -> str | None:
        """A result note when the timing shared the CPUs (``None`` when it did not)."""
        if self.alone:
            return None
        if self.unusable is not None:
            return (f"timed without the host CPU lock ({LOCK_ENV}: {self.unusable}): other sandbox jobs "
                    "may have run beside it")
        return (f"timed while other sandbox jobs on this host were still running (waited "
                f"{self.waited_s:.0f} s for them, the {WAIT_ENV} limit): parallel kernels may read slower "
                "than they are")


def _open(path: str) -> int:
    """Open (creating) a lock file; read-only is enough for ``flock`` when another user created it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError:
        return os.open(path, os.O_RDONLY)
    with contextlib.suppress(OSError):  # let workers of other users on the host share it
        os.fchmod(fd, 0o666)
    return fd


def _take(fd: int, mode: int, deadline: float) -> bool:
    """``flock(fd, mode)``, retried until ``deadline`` (``time.monotonic``); whether it was taken."""
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_S)


class HostShare:
    """This process's hold on the host's CPUs: nothing, shared (working) or exclusive (timing).

    One open file per process and lock kind: ``flock`` locks belong to the open file, so a second open of
    the same file in this process would conflict with the first.
    """

    def __init__(self, path: str | None = None) -> None:
        self.path = path or lock_path()
        self._main: int | None = None
        self._gate: int | None = None
        self.shared = False
        #: Why the lock files could not be opened (``None`` while they can).
        self.unusable: str | None = None

    def _fds(self) -> tuple[int, int] | None:
        """The two lock files, or ``None`` when they cannot be opened (``unusable`` says why): jobs then
        run and time without the lock rather than fail."""
        if self.unusable is None and (self._main is None or self._gate is None):
            try:
                self._main, self._gate = _open(self.path), _open(self.path + ".gate")
            except OSError as exc:
                self.unusable = f"{type(exc).__name__}: {exc}"
        if self.unusable is not None or self._main is None or self._gate is None:
            return None  # (both are open whenever nothing made them unusable)
        return self._main, self._gate

    def _through_gate(self, mode: int, deadline: float) -> bool:
        """Pass the turnstile (held by a waiting timer), then take the main lock in ``mode``."""
        fds = self._fds()
        if fds is None:
            return False
        main, gate = fds
        if not _take(gate, fcntl.LOCK_EX, deadline):
            return False
        try:
            return _take(main, mode, deadline)
        finally:
            fcntl.flock(gate, fcntl.LOCK_UN)

    def begin_job(self) -> None:
        """Hold the CPUs shared for a job (waits while a timer holds them, at most ``wait_seconds``)."""
        self.shared = self._through_gate(fcntl.LOCK_SH, time.monotonic() + wait_seconds())

    def end_job(self) -> None:
        if self._main is not None:
            fcntl.flock(self._main, fcntl.LOCK_UN)
        self.shared = False

    @contextlib.contextmanager
    def alone(self) -> Iterator[Alone]:
        """Hold the CPUs exclusively for the ``with`` body; a job's shared hold is given back afterwards."""
        was_shared = self.shared
        start = time.monotonic()
        if was_shared:
            self.end_job()  # a conversion would drop it anyway; others may run meanwhile
        got = self._through_gate(fcntl.LOCK_EX, start + wait_seconds())
        try:
            yield Alone(got, time.monotonic() - start, self.unusable)
        finally:
            self.end_job()
            if was_shared:
                self.begin_job()


_PROCESS_SHARE: HostShare | None = None


def process_share() -> HostShare:
    """This process's ``HostShare`` (a sandbox worker's holds its job's shared lock); the lock path is read
    once, when a process first asks."""
    global _PROCESS_SHARE
    if _PROCESS_SHARE is None:
        _PROCESS_SHARE = HostShare()
    return _PROCESS_SHARE


def alone() -> contextlib.AbstractContextManager[Alone]:
    """``with alone() as held:`` — time with the host's CPUs to this process (``held.note()`` if not)."""
    return process_share().alone()
