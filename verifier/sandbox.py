"""Run builds and kernels in sandboxed worker processes: a crash, a hang or a memory blow-up becomes a result.

A generated program can segfault (a gather with a wild index), loop for hours (huge extents) or ask for
tens of gigabytes (a huge intermediate). None of that may take down the caller — a Celery worker, the CLI,
a benchmark — so every job runs in a child process under two limits:

* **wall time**: the parent waits on the pipe for at most ``timeout`` seconds, then kills the child
  (SIGKILL) and reports ``timeout``;
* **memory**: before each job the child lowers its soft ``RLIMIT_AS`` to its current address-space size
  plus the job's budget, so an oversized allocation fails at once (``MemoryError`` in numpy, an
  allocation error in TVM) instead of dragging the machine into the OOM killer; that is reported as
  ``memory_limit``. The budget is *on top of* what the warmed worker already maps (TVM and LLVM map a
  lot of address space at import), so it means "what this job may allocate". The soft limit is raised
  back after the job.

A child that dies from a signal is reported as ``crash`` with the signal's name (``SIGSEGV`` …) and the
tail of its output (faulthandler prints the Python stack there). **Whatever** becomes of a worker — killed
by the kernel's OOM killer (``memory_limit`` when the memory cgroup's ``oom_kill`` counter moved during
the job, else ``crash`` with ``SIGKILL`` named), exited without replying, closed its pipe early, sent a
reply that cannot be read, or failed to start at all — ``run`` returns a ``JobResult`` and never raises;
the pool discards that worker and carries on.

**Warm pool.** Importing TVM costs seconds; a ``WorkerPool`` keeps long-lived workers that import the
``warm_modules`` once and then take jobs over a pipe. Workers are started with the ``spawn`` context —
never ``fork`` after TVM (and its thread pool) is loaded in the parent. A worker that crashed, timed out
or hit its memory limit is discarded and a fresh one is started in the background at once, so the next
job finds a warm worker again; the pool carries on.
Jobs are ``(function, args, kwargs)`` with a module-level (picklable) function.
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import multiprocessing
import multiprocessing.reduction
import os
import re
import resource
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext, SpawnContext
from typing import Any

from verifier.cpu_share import process_share

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MEMORY_LIMIT_MB = 4096
STARTUP_TIMEOUT_S = 180.0
LOG_EXCERPT_CHARS = 4000

#: Error texts that mean "an allocation failed" when raised by native code under the memory limit.
_MEMORY_PATTERNS = re.compile(
    r"MemoryError|out of memory|cannot allocate memory|failed to allocate|bad_alloc|Unable to allocate"
    r"|allocation of .* failed|AllocDataSpace|ENOMEM",
    re.IGNORECASE,
)


class JobStatus(StrEnum):
    OK = "ok"
    ERROR = "error"  # the job raised an exception (not a memory one)
    CRASH = "crash"  # the worker died (signal or exit)
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory_limit"


@dataclass
class JobResult:
    """What became of one job."""

    status: JobStatus
    value: Any = None
    #: ``ExceptionType: message`` for ERROR / MEMORY_LIMIT.
    error: str | None = None
    error_type: str | None = None
    traceback: str = ""
    #: Signal name for CRASH by signal (``SIGSEGV``), else ``None``.
    signal: str | None = None
    exitcode: int | None = None
    #: The tail of what the job printed (stdout + stderr of the worker during this job).
    log: str = ""
    seconds: float = 0.0
    worker_pid: int | None = None
    #: Jobs the worker had already run before this one (0: a freshly started, cold worker).
    worker_jobs_before: int = 0
    notes: list[str] = field(default_factory=list)
    #: False when no worker could be started: the outcome says nothing about the job itself (the
    #: machine, the environment or the caller's ``__main__`` guard failed), so it must not be cached.
    worker_started: bool = True

    @property
    def ok(self) -> bool:
        return self.status is JobStatus.OK


# ------------------------------------------------------------------------------------------ the child


def _address_space_bytes() -> int:
    """Current virtual size of this process (``VmSize``), the base the memory budget is added to."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def memory_left() -> int | None:
    """Bytes this process may still map under its address-space limit (``None``: no limit set).

    Inside a sandbox job that is what remains of the job's memory budget, so a computation that knows
    its size can refuse up front and say how much it needed.
    """
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    return soft - _address_space_bytes()


def _is_memory_error(exc: BaseException, text: str) -> bool:
    return isinstance(exc, MemoryError) or bool(_MEMORY_PATTERNS.search(text))


def raise_if_memory_error(exc: BaseException) -> None:
    """Re-raise ``exc`` as ``MemoryError`` when it reports a failed allocation (``std::bad_alloc`` …).

    Jobs that turn exceptions into results of their own call this first, so that an allocation failure
    under the sandbox's memory limit still reaches the pool and is reported as ``memory_limit``.
    """
    if _is_memory_error(exc, f"{type(exc).__name__}: {exc}"):
        raise MemoryError(str(exc)) from exc


def _no_process_shared_locks() -> None:
    """Keep tqdm (which torch.fx's interpreter instantiates) from creating a multiprocessing lock.

    A worker leaves through ``os._exit`` without finalisers, so such a semaphore is never unlinked and
    the parent's resource tracker warns about a leak at exit. A worker is single-threaded: a thread
    lock serves tqdm as well.
    """
    with contextlib.suppress(ImportError):
        from tqdm.std import TqdmDefaultWriteLock

        TqdmDefaultWriteLock.mp_lock = None


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity, which a cgroup cpuset narrows)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def kernel_threads() -> int:
    """The threads a worker's parallel kernels run on: ``TVM_NUM_THREADS`` if the operator set it, else
    every usable core (``_use_every_core_for_kernels``)."""
    return int(os.environ.get("TVM_NUM_THREADS") or usable_cores())


def _use_every_core_for_kernels() -> None:
    """Size TVM's thread pool to ``kernel_threads()`` before TVM first starts it.

    TVM sizes its pool once, on first use, and by default takes half the logical CPUs on x86-64 (it
    assumes two hyperthreads per core). On a machine without SMT that halves every parallel kernel: on a
    2-core VM a ``P`` loop ran on one thread while PyTorch eager, timed beside it, used both.
    """
    os.environ["TVM_NUM_THREADS"] = str(kernel_threads())


def probe_tvm_threads() -> int:
    """Job: the size of this worker's TVM thread pool (``runtime.NumThreads``)."""
    import tvm

    return int(tvm.get_global_func("runtime.NumThreads")())


def _worker_main(conn: Connection, log_path: str, warm_modules: tuple[str, ...]) -> None:
    """Child process entry: redirect output to the log file, warm up, then serve jobs until ``None``."""
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    faulthandler.enable(file=sys.stderr, all_threads=True)
    # Ctrl-C is the parent's business: it stops waiting and its exit handlers stop the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _no_process_shared_locks()
    _use_every_core_for_kernels()
    warm_errors: list[str] = []
    for module in warm_modules:
        try:
            __import__(module)
        except Exception as exc:
            warm_errors.append(f"{module}: {type(exc).__name__}: {exc}")
    conn.send(("ready", os.getpid(), warm_errors))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    global _CONNECTION
    _CONNECTION = conn
    share = process_share()  # every job holds the host's CPUs shared; timing holds them alone
    while True:
        try:
            raw = conn.recv_bytes()
        except (EOFError, OSError):
            return
        try:
            job = multiprocessing.reduction.ForkingPickler.loads(raw)
        except Exception as exc:
            conn.send(("error", type(exc).__name__, f"could not read the job: {type(exc).__name__}: {exc}",
                       traceback.format_exc()))
            continue
        if job is None:
            return
        func, args, kwargs, memory_limit = job
        sys.stdout.flush()
        sys.stderr.flush()
        os.ftruncate(log_fd, 0)
        limited = False
        if memory_limit:
            budget = _address_space_bytes() + int(memory_limit)
            if hard == resource.RLIM_INFINITY or budget < hard:
                resource.setrlimit(resource.RLIMIT_AS, (budget, hard))
                limited = True
        share.begin_job()
        try:
            value = func(*args, **kwargs)
            reply: tuple[Any, ...] = ("ok", value)
        except BaseException as exc:
            text = f"{type(exc).__name__}: {exc}"
            tb = traceback.format_exc()
            kind = "memory" if limited and _is_memory_error(exc, text + tb) else "error"
            reply = (kind, type(exc).__name__, text, tb)
        finally:
            share.end_job()
            if limited:
                resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
            sys.stdout.flush()
            sys.stderr.flush()
        try:
            conn.send(reply)
        except Exception as exc:
            conn.send(("error", type(exc).__name__, f"could not send the job's result: {exc}",
                       traceback.format_exc()))


#: The worker's end of its pipe (set in the worker only; the probes below misuse it on purpose).
_CONNECTION: Connection | None = None


# ----------------------------------------------------------------------------------------- the parent

#: Where the kernel counts OOM kills of this machine's (or container's) memory cgroup, v2 then v1.
_OOM_COUNTERS = ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")


def oom_kill_count() -> int | None:
    """How many processes the kernel's OOM killer has killed in our memory cgroup (``None``: unknown).

    A worker killed by SIGKILL that nobody here sent is either the OOM killer or someone outside; the
    counter moving during the job tells the two apart.
    """
    for path in _OOM_COUNTERS:
        try:
            with open(path) as handle:
                for line in handle:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def _read_tail(path: str, limit: int = LOG_EXCERPT_CHARS) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _signal_name(exitcode: int | None) -> str | None:
    if exitcode is None or exitcode >= 0:
        return None
    try:
        return signal.Signals(-exitcode).name
    except ValueError:
        return f"signal {-exitcode}"


class _Worker:
    """One child process and the parent's end of its pipe."""

    def __init__(self, context: SpawnContext | ForkServerContext, warm_modules: tuple[str, ...], log_dir: str,
                 startup_timeout: float):
        fd, self.log_path = tempfile.mkstemp(prefix="steptp-worker-", suffix=".log", dir=log_dir)
        os.close(fd)
        self.conn, child_conn = context.Pipe(duplex=True)
        self.process = context.Process(target=_worker_main, args=(child_conn, self.log_path, warm_modules),
                                       daemon=True, name="steptp-sandbox-worker")
        try:
            self.process.start()
        except Exception as exc:
            for conn in (self.conn, child_conn):
                conn.close()
            with contextlib.suppress(OSError):
                os.unlink(self.log_path)
            raise RuntimeError(f"could not start a sandbox worker: {type(exc).__name__}: {exc}") from None
        child_conn.close()
        self.jobs = 0
        self.warm_errors: list[str] = []
        try:
            if not self.conn.poll(startup_timeout):
                raise RuntimeError(f"sandbox worker did not start within {startup_timeout:.0f}s: "
                                   f"{_read_tail(self.log_path)}")
            _tag, self.pid, self.warm_errors = self.conn.recv()
        except RuntimeError:
            self.kill()
            raise
        except Exception as exc:
            self.process.join(5)
            log = _read_tail(self.log_path)
            self.kill()
            raise RuntimeError(f"sandbox worker died while starting (exit {self.process.exitcode}, "
                               f"{type(exc).__name__}): {log}") from None

    def kill(self) -> None:
        pid = self.process.pid  # set once started, as a live process is
        if pid is not None and self.process.is_alive():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.process.join(10)
        self.conn.close()
        with contextlib.suppress(OSError):
            os.unlink(self.log_path)

    def stop(self) -> None:
        with contextlib.suppress(OSError, BrokenPipeError):
            self.conn.send(None)
        self.process.join(5)
        self.kill()


class WorkerPool:
    """Long-lived sandbox workers that import ``warm_modules`` once and run jobs under limits.

    Thread-safe: several threads may call ``run`` at once; each job takes one idle worker (starting one
    when fewer than ``size`` exist). ``size=0`` is not allowed; use ``run_isolated`` for a one-off.
    """

    def __init__(self, size: int = 1, *, warm_modules: tuple[str, ...] = (),
                 timeout: float = DEFAULT_TIMEOUT_S, memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB,
                 start_method: str = "spawn", startup_timeout: float = STARTUP_TIMEOUT_S,
                 recycle_after: int | None = 500, replace_dead: bool = True):
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        if start_method == "fork":
            raise ValueError("fork is unsafe once TVM is loaded; use spawn or forkserver")
        self.size = size
        self.warm_modules = tuple(warm_modules)
        self.timeout = timeout
        self.memory_limit_mb = memory_limit_mb
        self.startup_timeout = startup_timeout
        self.recycle_after = recycle_after
        #: Start a replacement as soon as a worker is discarded (crash, timeout, memory limit, recycling).
        self.replace_dead = replace_dead
        context = multiprocessing.get_context(start_method)
        assert isinstance(context, SpawnContext | ForkServerContext), "fork was refused above"
        self._context = context
        self._log_dir = tempfile.mkdtemp(prefix="steptp-sandbox-")
        self._idle: list[_Worker] = []
        self._count = 0
        self._lock = threading.Condition()
        self._closed = False
        #: How many workers this pool has started (a test can see a crashed worker was replaced).
        self.started = 0
        atexit.register(self.close)

    # -- worker management
    def start(self, count: int | None = None) -> WorkerPool:
        """Start workers now (instead of on first use) so the first job finds a warm one."""
        want = self.size if count is None else min(count, self.size)
        while True:
            with self._lock:
                if self._closed or self._count >= want:
                    break
                self._count += 1
            worker = self._spawn()
            with self._lock:
                if not self._closed:
                    self._idle.append(worker)
                    self._lock.notify_all()
                    continue
                self._count -= 1
            worker.stop()  # the pool was closed while this one started
        return self

    def _replace_in_background(self) -> None:
        """Start a replacement for a discarded worker now, so the next job does not pay for TVM's import."""
        def replace() -> None:
            with contextlib.suppress(Exception):
                self.start()

        threading.Thread(target=replace, name="steptp-sandbox-respawn", daemon=True).start()

    def _spawn(self) -> _Worker:
        try:
            worker = _Worker(self._context, self.warm_modules, self._log_dir, self.startup_timeout)
        except BaseException:
            with self._lock:
                self._count -= 1
                self._lock.notify_all()
            raise
        with self._lock:
            self.started += 1
        return worker

    def _acquire(self) -> _Worker:
        with self._lock:
            while True:
                if self._closed:
                    raise RuntimeError("the worker pool is closed")
                if self._idle:
                    return self._idle.pop()
                if self._count < self.size:
                    self._count += 1
                    break
                self._lock.wait()
        return self._spawn()

    def _release(self, worker: _Worker, healthy: bool) -> None:
        if healthy and self.recycle_after is not None and worker.jobs >= self.recycle_after:
            healthy = False
            worker.stop()
        elif not healthy:
            worker.kill()
        with self._lock:
            if healthy and not self._closed:
                self._idle.append(worker)
            else:
                self._count -= 1
            self._lock.notify_all()
        if healthy and self._closed:
            worker.stop()
        elif not healthy and self.replace_dead and not self._closed:
            self._replace_in_background()

    # -- running jobs
    def run(self, func: Callable[..., Any], *args: Any, timeout: float | None = None,
            memory_limit_mb: int | None | bool = True, **kwargs: Any) -> JobResult:
        """Run ``func(*args, **kwargs)`` in a worker; never raises for what the job does.

        ``memory_limit_mb=True`` uses the pool default, ``None``/``False`` runs without a limit.
        """
        timeout = self.timeout if timeout is None else timeout
        limit_mb = self.memory_limit_mb if memory_limit_mb is True else (memory_limit_mb or None)
        oom_before = oom_kill_count()
        try:
            worker = self._acquire()
        except Exception as exc:
            if self._closed:
                raise
            return self._start_failure(exc, oom_before)
        jobs_before = worker.jobs
        started = time.perf_counter()
        try:
            message = multiprocessing.reduction.ForkingPickler.dumps(
                (func, args, kwargs, int(limit_mb) * 2**20 if limit_mb else None))
        except Exception as exc:
            self._release(worker, healthy=True)
            return JobResult(JobStatus.ERROR, error=f"the job could not be sent: {type(exc).__name__}: {exc}",
                             error_type=type(exc).__name__, worker_pid=worker.pid)
        try:
            worker.conn.send_bytes(message)
        except (BrokenPipeError, OSError) as exc:
            self._release(worker, healthy=False)
            return JobResult(JobStatus.CRASH, error=f"could not send the job: {exc}", worker_pid=worker.pid)
        worker.jobs += 1
        reply = None
        unreadable: str | None = None
        timed_out = False
        try:
            ready = worker.conn.poll(timeout)
        except (EOFError, OSError):
            ready = True  # the pipe is broken: the worker is gone, found out below
        if ready:
            raw = None
            with contextlib.suppress(EOFError, OSError):  # end of file: it died (or closed its end) first
                raw = worker.conn.recv_bytes()
            if raw is not None:
                # unpickled apart from the read: pickle's own EOFError ("Ran out of input", a reply cut
                # short) must not pass for the end of the pipe
                try:
                    reply = multiprocessing.reduction.ForkingPickler.loads(raw)
                except Exception as exc:
                    unreadable = f"{type(exc).__name__}: {exc}"
        else:
            timed_out = True
        seconds = time.perf_counter() - started
        base = {"seconds": seconds, "worker_pid": worker.pid, "worker_jobs_before": jobs_before}
        if timed_out:
            log = _read_tail(worker.log_path)
            self._release(worker, healthy=False)
            return JobResult(JobStatus.TIMEOUT, error=f"wall-time limit of {timeout:g}s exceeded (killed)",
                             log=log, **base)
        if not isinstance(reply, tuple) or not reply or reply[0] not in ("ok", "error", "memory"):
            return self._lost(worker, reply, unreadable, oom_before, base)
        log = _read_tail(worker.log_path)
        kind = reply[0]
        if kind == "ok":
            self._release(worker, healthy=True)
            return JobResult(JobStatus.OK, value=reply[1], log=log, **base)
        _kind, error_type, text, tb = reply
        if kind == "memory":
            # The worker survived, but native code that failed an allocation may have left it in a bad state.
            self._release(worker, healthy=False)
            return JobResult(JobStatus.MEMORY_LIMIT, error=f"memory limit of {limit_mb} MiB exceeded: {text}",
                             error_type=error_type, traceback=tb, log=log, **base)
        self._release(worker, healthy=True)
        return JobResult(JobStatus.ERROR, error=text, error_type=error_type, traceback=tb, log=log, **base)

    def _lost(self, worker: _Worker, reply: Any, unreadable: str | None, oom_before: int | None,
              base: dict[str, Any]) -> JobResult:
        """The job ended without a proper reply: the worker died, closed its pipe, or sent garbage."""
        worker.process.join(2 if unreadable is None and reply is None else 0)
        alive = worker.process.is_alive()
        log = _read_tail(worker.log_path)
        self._release(worker, healthy=False)  # kills it if still alive: its pipe can no longer be trusted
        exitcode = worker.process.exitcode
        if alive:
            why = (f"its reply could not be read ({unreadable})" if unreadable
                   else "it closed its pipe without replying" if reply is None
                   else f"it sent something that is not a reply ({type(reply).__name__})")
            return JobResult(JobStatus.CRASH, error=f"worker lost: {why}; killed and replaced", log=log,
                             **base)
        name = _signal_name(exitcode)
        if name == "SIGKILL":
            oom_after = oom_kill_count()
            if oom_before is not None and oom_after is not None and oom_after > oom_before:
                return JobResult(JobStatus.MEMORY_LIMIT, signal=name, exitcode=exitcode, log=log,
                                 error="worker killed by the kernel's OOM killer (SIGKILL): the machine "
                                       "ran out of memory", **base)
            return JobResult(JobStatus.CRASH, signal=name, exitcode=exitcode, log=log,
                             error="worker killed by SIGKILL (from outside the sandbox: the kernel's OOM "
                                   "killer sends it when the machine runs out of memory)", **base)
        what = f"killed by {name}" if name else f"exited with status {exitcode} without replying"
        return JobResult(JobStatus.CRASH, error=f"worker {what}", signal=name, exitcode=exitcode, log=log,
                         **base)

    def _start_failure(self, exc: BaseException, oom_before: int | None) -> JobResult:
        """No worker could be started (it died while importing, or did not answer): an outcome too."""
        oom_after = oom_kill_count()
        oom = oom_before is not None and oom_after is not None and oom_after > oom_before
        status = JobStatus.MEMORY_LIMIT if oom or _is_memory_error(exc, str(exc)) else JobStatus.CRASH
        match = re.search(r"exit (-?\d+)", str(exc))
        exitcode = int(match.group(1)) if match else None
        return JobResult(status, error=f"no sandbox worker: {exc}", signal=_signal_name(exitcode),
                         exitcode=exitcode, worker_started=False)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            idle, self._idle = self._idle, []
            self._lock.notify_all()
        for worker in idle:
            worker.stop()
        with contextlib.suppress(OSError):
            os.rmdir(self._log_dir)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def run_isolated(func: Callable[..., Any], *args: Any, warm_modules: tuple[str, ...] = (),
                 timeout: float = DEFAULT_TIMEOUT_S, memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB,
                 **kwargs: Any) -> JobResult:
    """One job in a fresh, throw-away worker (the cold path; the benchmark's baseline)."""
    with WorkerPool(1, warm_modules=warm_modules, timeout=timeout, memory_limit_mb=memory_limit_mb) as pool:
        return pool.run(func, *args, **kwargs)


# ------------------------------------------------------------------- probes (health checks and tests)


def probe_pid() -> int:
    """Return the worker's pid: shows which worker ran a job and that the pool answers."""
    return os.getpid()


def probe_sleep(seconds: float) -> float:
    """Busy-wait for ``seconds`` (a hang, for checking the wall-time limit)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    return seconds


def probe_allocate(nbytes: int) -> int:
    """Allocate and touch ``nbytes`` (a memory blow-up, for checking the memory limit)."""
    import numpy as np

    block = np.ones(int(nbytes), dtype=np.uint8)
    return int(block[-1])


def probe_segfault() -> None:
    """Dereference a null pointer (a crash, for checking crash handling)."""
    import ctypes

    ctypes.string_at(0)


def probe_exit(status: int = 0) -> None:
    """Leave the worker without replying (``os._exit``: no finalisers, no reply on the pipe)."""
    os._exit(status)


def probe_close_pipe(seconds: float = 30.0) -> None:
    """Close the worker's end of its pipe, then stay alive: the parent sees end-of-file from a live worker."""
    if _CONNECTION is not None:
        _CONNECTION.close()
    time.sleep(seconds)


def probe_send_garbage(data: bytes = b"") -> int:
    """Write ``data`` as a message ahead of the reply (``b""`` fails to unpickle: "Ran out of input")."""
    if _CONNECTION is not None:
        _CONNECTION.send_bytes(data)
    return 1
