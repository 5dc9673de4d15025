"""Non-blocking collectives: :class:`Request` and the per-communicator worker
thread behind ``async_op=True`` (the mixin AsyncMixin, a base class of
Communicator in sparcoll/comm.py).

A call with ``async_op=True`` checks its arguments, allocates its output and
resolves its stream in the caller's thread (torch's current stream is per
thread), then hands only the C call to the communicator's worker thread, which
runs the calls in the order they were issued, one at a time. A blocking call
issued while requests are pending goes through the worker too (and waits), so
every rank sees the calls in the order its caller made them.

A request's done-callbacks (``get_future().add_done_callback``, torch's
``Future.then``) run on the worker thread, right after its call. A blocking
call made there runs at once, in that place of the order (queueing it behind
the pending requests and waiting would wait for the worker itself: a
deadlock); waiting there for a request that has not run yet raises
InvalidUsageError for the same reason.
"""

from __future__ import annotations

import queue
import threading
import weakref
from concurrent.futures import Future
from concurrent.futures import TimeoutError as _WaitTimeout  # builtins.TimeoutError from Python 3.11

from .errors import InvalidUsageError

__all__ = ["Request"]


class Request:
    """The handle of a collective started with ``async_op=True`` (like mpi4py's
    Request and torch.distributed's Work).

    :meth:`wait` returns what the blocking call would have returned (the output
    array; None for barrier) or raises its exception. The call's arrays are kept
    alive until it finishes; do not read the output (or modify the inputs)
    before :meth:`wait`. On a device communicator, "completed" means what it
    means for the blocking call: the work is enqueued on the call's stream.
    """

    __slots__ = ("_future", "_what", "_worker_thread", "_interrupt", "__weakref__")

    def __init__(self, what: str, worker_thread: threading.Thread | None = None, interrupt=None):
        self._future: Future = Future()
        self._what = what
        self._worker_thread = worker_thread
        self._interrupt = interrupt  # the communicator's interrupt(), for a wait that a signal ends

    def wait(self, timeout: float | None = None):
        """Blocks until the call has finished; returns its result or raises its
        exception. ``timeout`` (seconds, None: no limit): raises TimeoutError if
        the call is still running then (the call goes on; wait again)."""
        if not self._future.done() and threading.current_thread() is self._worker_thread:
            raise InvalidUsageError(
                f"{self._what}: wait() in a callback of another request of the same communicator: the callback "
                "runs on the communicator's worker thread, which runs this request only after the callback "
                "returns (a deadlock); chain it with get_future().add_done_callback instead")
        try:
            return self._future.result(timeout)
        except _WaitTimeout as e:
            if self._future.done():  # the call's own error (e.g. CollectiveTimeoutError)
                raise
            raise TimeoutError(f"{self._what} is still running after wait(timeout={timeout}); "
                               "the request stays pending: wait again") from e
        except BaseException:
            # A signal handler's exception (Ctrl-C) while the call runs on the worker: the call is
            # interrupted too, so that it ends (and the process can exit) and the peers learn of it.
            if not self._future.done() and self._interrupt is not None:
                self._interrupt()
            raise

    def result(self, timeout: float | None = None):
        """Same as :meth:`wait`."""
        return self.wait(timeout)

    def is_completed(self) -> bool:
        """True once the call has finished (successfully or not): wait() will not block."""
        return self._future.done()

    def get_future(self) -> Future:
        """A concurrent.futures.Future of the call's result (the same object each time)."""
        return self._future

    def __repr__(self) -> str:
        if not self._future.done():
            state = "pending"
        else:
            state = "failed" if self._future.exception() is not None else "completed"
        return f"<sparcoll.Request {self._what} {state}>"


class _Worker:
    """One thread that runs a communicator's calls in submission order.

    A daemon thread: it never keeps the interpreter alive; the exit hook of
    sparcoll/comm.py closes every communicator (which waits for its requests)
    before the interpreter tears down."""

    def __init__(self, name: str, interrupt=None):
        self._interrupt = interrupt
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._pending = 0
        self._stopped = False
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def idle(self) -> bool:
        with self._lock:
            return self._pending == 0

    def on_thread(self) -> bool:
        """Whether the caller is this worker (a request's done-callback)."""
        return threading.current_thread() is self._thread

    def submit(self, what: str, task) -> Request:
        req = Request(what, self._thread, self._interrupt)
        with self._lock:
            if self._stopped:
                raise InvalidUsageError(f"{what}: the communicator was closed")
            self._pending += 1
        self._queue.put((req, task))
        return req

    def stop(self, wait: bool = True) -> None:
        """Runs what was submitted, then ends the thread (waits for it unless called on it)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        self._queue.put(None)
        if wait and threading.current_thread() is not self._thread:
            self._thread.join()

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            req, task = item
            try:
                value = task()
            except BaseException as e:  # noqa: BLE001 - handed to the caller through the request
                self._done()
                req._future.set_exception(e)
            else:
                self._done()
                req._future.set_result(value)
            del item, req, task  # the call's arrays are released here, not at the next call

    def _done(self) -> None:
        # Before the request completes: once wait() returns, a blocking call may run directly.
        with self._lock:
            self._pending -= 1


_CALLS_VALUE = object()


class AsyncMixin:
    """``async_op`` for the collectives of Communicator: ``self._run(...)`` runs a
    prepared C call now, or on the worker thread."""

    _worker: _Worker | None = None

    def _run(self, what: str, call, result=_CALLS_VALUE, async_op: bool = False):
        """Runs call() (the C call, and copies that must stay in order with it; its
        closure holds the arrays) and returns ``result`` (default: call()'s value).
        With async_op: returns a Request of that instead, at once. A blocking call
        waits for the pending requests by running behind them on the worker, or
        runs at once when it is made on the worker (in a request's callback)."""
        def task():
            value = call()
            return value if result is _CALLS_VALUE else result

        worker = self._worker
        if not async_op and (worker is None or worker.idle() or worker.on_thread()):
            return task()
        if worker is None:
            worker = self._start_worker()
        req = worker.submit(what, task)
        return req if async_op else req.wait()

    def _start_worker(self) -> _Worker:
        me = weakref.ref(self)  # not a bound method: the worker must not keep the communicator alive

        def interrupt():
            comm = me()
            if comm is not None:
                comm._interrupt_quietly()

        worker = self._worker = _Worker(f"sparcoll-comm-{id(self):x}", interrupt)
        # A communicator dropped with its worker running: the thread ends after the pending calls.
        weakref.finalize(self, worker.stop, False).atexit = False
        return worker

    def _interrupt_quietly(self) -> None:
        try:
            self.interrupt()
        except Exception:  # noqa: BLE001 - closed meanwhile: nothing left to interrupt
            pass

    def _sync_pending(self) -> None:
        """Waits until every pending request has finished (their errors stay with their requests)."""
        worker = self._worker
        if worker is not None and not worker.idle() and not worker.on_thread():  # on it: all before ran
            req = worker.submit("synchronization", lambda: None)
            req._future.exception()  # blocks until done; the no-op cannot fail

    def _stop_worker(self) -> None:
        """Runs the pending requests to completion, then ends the worker thread."""
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()
