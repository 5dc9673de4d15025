"""How fast a signal ends a blocked collective, and how fast the peers learn.

Run under mpirun with 2 or more ranks (mpi transport):

    OMPI_MCA_mpi_yield_when_idle=1 mpirun --oversubscribe -np 2 python interrupt_latency.py [--repeats 5] [--async-op]

Each repeat makes a communicator; rank 0 enters an allreduce that the other
ranks join only `--join` seconds later, and sends itself SIGINT `--signal`
seconds in (its handler: Python's default, KeyboardInterrupt). Printed per
repeat: the time from the signal to rank 0's KeyboardInterrupt, and the time
each other rank's call took to raise RemoteError after it entered, or, for
rank 1 with 3 or more ranks (it calls at once and waits with rank 0 for the
late ranks), after the signal. With
--async-op rank 0 waits on a Request (wait()) instead of a blocking call.
"""

import argparse
import os
import signal
import threading
import time

import numpy as np
from mpi4py import MPI

import sparcoll as sc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--signal", type=float, default=1.0, help="seconds before rank 0 signals itself")
    ap.add_argument("--join", type=float, default=2.5, help="seconds before the other ranks call")
    ap.add_argument("--async-op", action="store_true")
    a = ap.parse_args()
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    x = np.ones(1 << 16, np.float32)
    rows = []
    for rep in range(a.repeats):
        world.Barrier()
        comm = sc.Communicator.from_mpi(world, timeout=60)
        t0 = time.monotonic()
        if rank == 0:
            sent = []
            threading.Timer(a.signal, lambda: (sent.append(time.monotonic()), os.kill(os.getpid(),
                                                                                       signal.SIGINT))).start()
            try:
                if a.async_op:
                    comm.allreduce(x, async_op=True).wait()
                else:
                    comm.allreduce(x)
                outcome, took = "completed", time.monotonic() - t0
            except KeyboardInterrupt:
                outcome, took = "KeyboardInterrupt", time.monotonic() - sent[0]
        else:
            waiting = rank == 1 and size > 2  # already blocked in the call when rank 0 is signalled
            if not waiting:
                time.sleep(a.join)
            t1 = time.monotonic()
            try:
                comm.allreduce(x)
                outcome = "completed"
            except sc.RemoteError:
                outcome = "RemoteError"
            took = time.monotonic() - t1 - (a.signal if waiting else 0)
        comm.close()
        rows.append((rep, outcome, took))
        world.Barrier()
    everything = world.gather(rows, root=0)
    if rank == 0:
        print(f"# interrupt latency: {size} ranks, mpi transport, {'wait() on a Request' if a.async_op else 'blocking'}"
              f" allreduce of {x.nbytes} B; rank 0 signals itself (SIGINT) {a.signal} s in, the others call "
              f"{a.join} s in")
        print("# rank 0: time from the signal to KeyboardInterrupt; " + ("rank 1 (waiting in the call): from the "
              "signal to RemoteError; other ranks: " if size > 2 else "other ranks: ") +
              "from entering their call to RemoteError")
        for r, rr in enumerate(everything):
            for rep, outcome, took in rr:
                print(f"rank {r} repeat {rep} {outcome} {took * 1e3:.1f} ms")
        for r, rr in enumerate(everything):
            t = sorted(took for _, _, took in rr)
            print(f"rank {r}: median {t[len(t) // 2] * 1e3:.1f} ms, max {t[-1] * 1e3:.1f} ms, outcomes "
                  f"{sorted({o for _, o, _ in rr})}")


if __name__ == "__main__":
    main()
