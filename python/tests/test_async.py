"""async_op=True as people coming from mpi4py or torch expect it: Requests
with wait/is_completed/get_future, calls kept in issue order with blocking ones,
errors at wait(), timeouts, every collective, close() and interpreter exit with
requests pending, and done-callbacks that call back into the communicator."""

import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import sparcoll as sc
from helpers import rank_data, reference, run_ranks


def test_async_requests_waited_in_reverse_order():
    def body(c):
        xs = [rank_data(c.rank, 1000 + i, "float32") for i in range(6)]
        reqs = [c.allreduce(x, async_op=True) for x in xs]
        assert all(isinstance(q, sc.Request) for q in reqs)
        return [q.wait() for q in reversed(reqs)][::-1]

    outs = run_ranks(3, body)
    for i in range(6):
        want = reference([rank_data(r, 1000 + i, "float32") for r in range(3)], "sum")
        for o in outs:
            np.testing.assert_array_equal(o[i], want)


def test_async_and_sync_calls_keep_their_order():
    def body(c):
        x = np.full(50_000, c.rank + 1.0)
        a = c.allreduce(x, out=x, async_op=True)  # in place: the calls below read the result
        b = c.allreduce(x)  # blocking, behind a
        assert a.is_completed()
        d = c.reduce_scatter(x, op="max", async_op=True)
        e = c.allgather(np.array([c.rank], np.int64), async_op=True)
        f = c.barrier(async_op=True)
        g = c.sparse_allreduce_sparse(np.array([c.rank], np.uint32), np.ones(1, np.float32), 8, async_op=True)
        assert f.wait() is None
        return a.wait() is x, b, d.get_future().result(), e.result(), g.wait()

    for same, b, d, e, g in run_ranks(2, body):
        assert same
        np.testing.assert_array_equal(b, np.full(50_000, 6.0))  # (1 + 2) summed twice
        np.testing.assert_array_equal(d, np.full(25_000, 3.0))
        np.testing.assert_array_equal(e, [0, 1])
        assert isinstance(g, sc.SparseReduction) and list(g.indices) == [0, 1] and g.algo != "auto"


def test_async_error_surfaces_at_wait():
    """Rank 1 never takes part: rank 0's request fails with the timeout, at wait()."""
    def body(c):
        if c.rank == 1:
            return None
        t0 = time.monotonic()
        req = c.allreduce(np.zeros(64, np.float32), async_op=True)
        issued = time.monotonic() - t0
        with pytest.raises(sc.CollectiveTimeoutError):
            req.wait()
        assert req.is_completed() and "failed" in repr(req)
        assert isinstance(req.get_future().exception(), sc.CollectiveTimeoutError)
        return issued

    assert run_ranks(2, body, timeout=1.0)[0] < 0.5


def test_async_bad_arguments_raise_at_the_call():
    c = sc.local_group(1)[0]
    with pytest.raises(sc.InvalidArgumentError, match="unknown reduction op"):
        c.allreduce(np.zeros(4, np.float32), op="mean", async_op=True)
    with pytest.raises(sc.InvalidArgumentError, match="has 5 elements, expected 4"):
        c.allreduce(np.zeros(4, np.float32), out=np.zeros(5, np.float32), async_op=True)
    c.close()


def test_async_wait_timeout_and_is_completed():
    def body(c):
        if c.rank == 1:
            time.sleep(1.0)
            return c.allreduce(np.ones(4, np.float32))
        req = c.allreduce(np.ones(4, np.float32), async_op=True)
        with pytest.raises(TimeoutError, match=r"allreduce is still running after wait\(timeout=0.05\)") as ei:
            req.wait(timeout=0.05)
        assert not isinstance(ei.value, sc.SparcollError) and not req.is_completed() and "pending" in repr(req)
        return req.get_future().result(timeout=60)

    for out in run_ranks(2, body):
        np.testing.assert_array_equal(out, [2, 2, 2, 2])


def test_async_area_collectives():
    def body(c):
        P = c.size
        with sc.Topology(c, [(c.rank - 1) % P], [(c.rank + 1) % P]) as topo:
            nb = c.neighbor_allgather(np.array([c.rank], np.int32), topo, async_op=True)
            nv = c.neighbor_allgatherv(np.array([c.rank], np.int32), topo, [1], async_op=True)
            g = c.dsop(np.ones(2, np.float32), np.ones(3, np.float32), async_op=True)
            gs = c.dsop_sparse(np.array([0], np.int64), np.ones(1, np.float32), 2, np.array([1], np.int64),
                               np.ones(1, np.float32), 3, async_op=True)
            sp = c.sparse_allreduce(np.array([c.rank], np.uint32), np.ones(1, np.float32), 4, async_op=True)
            return nb.wait(), nv.wait(), g.wait(), gs.wait(), sp.wait()

    for r, (nb, nv, g, gs, sp) in enumerate(run_ranks(3, body)):
        assert list(nb.ravel()) == [(r - 1) % 3] and list(nv) == [(r - 1) % 3]
        np.testing.assert_array_equal(g, np.full((2, 3), 3.0))
        np.testing.assert_array_equal(gs, [[0, 3, 0], [0, 0, 0]])
        np.testing.assert_array_equal(sp, [1, 1, 1, 0])


def test_every_collective_takes_async_op():
    import inspect

    for name in ("allreduce", "reduce_scatter", "allgather", "barrier", "sparse_allreduce", "sparse_allreduce_sparse",
                 "dsop", "dsop_sparse", "neighbor_allgather", "neighbor_allgatherv"):
        p = inspect.signature(getattr(sc.Communicator, name)).parameters["async_op"]
        assert p.kind is p.KEYWORD_ONLY and p.default is False, name


_CALLBACK_CODE = """
import threading, numpy as np, sparcoll as sc
from concurrent.futures import ThreadPoolExecutor

def body(c):
    gate = threading.Event()
    c._start_worker().submit("gate", gate.wait)  # holds the requests until the callback is registered
    a = c.allreduce(np.full(10, c.rank + 1.0), async_op=True)
    b = c.allreduce(np.full(10, 10.0 * (c.rank + 1)), async_op=True)
    seen = {}

    def callback(fut):
        seen["c"] = c.allreduce(fut.result() * 2)  # blocking, with b still pending
        try:
            b.wait()
        except sc.InvalidUsageError as e:
            seen["wait"] = str(e)

    a.get_future().add_done_callback(callback)
    gate.set()
    return float(a.wait()[0]), float(b.wait()[0]), float(seen["c"][0]), "deadlock" in seen.get("wait", "")

comms = sc.local_group(2, timeout=30)
with ThreadPoolExecutor(2) as ex:
    print(list(ex.map(body, comms)))
"""


def test_blocking_call_in_a_request_callback_does_not_deadlock(tmp_path):
    """A done-callback runs on the communicator's worker thread: a blocking call
    made there runs at once (in that place of the order, on every rank: A, then
    the callback's C, then B), and a wait there for a request that has not run
    yet raises instead of deadlocking. In a subprocess with a time limit, so a
    deadlock fails the test instead of hanging the suite."""
    out = subprocess.run([sys.executable, "-c", _CALLBACK_CODE], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    # a = 1 + 2, c = (3 * 2) summed over 2 ranks, b = 10 + 20
    assert out.stdout.strip() == "[(3.0, 30.0, 12.0, True), (3.0, 30.0, 12.0, True)]", out.stdout + out.stderr


def test_close_waits_for_pending_requests_and_stops_the_worker():
    def body(c):
        req = c.allreduce(np.full(100_000, 1.0), async_op=True)
        c.close()
        return req.is_completed(), req.wait()[:3]

    for done, head in run_ranks(2, body):
        assert done
        np.testing.assert_array_equal(head, [2, 2, 2])
    assert not [t for t in threading.enumerate() if t.name.startswith("sparcoll-comm-")]


def test_pending_requests_do_not_block_exit(tmp_path):
    code = ("import numpy as np, sparcoll as sc\n"
            "c = sc.local_group(1)[0]\n"
            "reqs = [c.allreduce(np.ones(1000), async_op=True) for _ in range(50)]\n"
            "print('issued')\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "issued", out.stderr
