"""Communicator.shrink (scCommShrink) after a rank stops, and SPARCOLL_TRACE
with its merge tool (tools/trace/sparcoll-trace-merge)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sparcoll as sc
from helpers import run_ranks

MERGE = Path(__file__).resolve().parents[2] / "tools" / "trace" / "sparcoll-trace-merge"


def test_survivors_shrink_and_go_on():
    """Rank 2 of 4 stops; the others' allreduce fails within the deadline, naming
    it, and a shrunk communicator of ranks 0, 1, 3 (now 0, 1, 2) works."""
    def body(c):
        c.allreduce(np.ones(8, np.int32))
        if c.rank == 2:
            return None
        with pytest.raises((sc.CollectiveTimeoutError, sc.RemoteError), match="rank 2 has not reached call #2"):
            c.allreduce(np.ones(8, np.int32), algo="ring")
        small = c.shrink([2])
        try:
            assert small.size == 3 and small.rank == [0, 1, None, 2][c.rank]
            out = small.allreduce(np.full(5, small.rank + 1, np.int32))
            return out.tolist()
        finally:
            small.close()

    outs = run_ranks(4, body, timeout=1.0)
    assert [o for o in outs if o is not None] == [[6] * 5] * 3


def test_shrink_bad_arguments():
    def body(c):
        with pytest.raises(sc.InvalidArgumentError, match="calling rank"):
            c.shrink([c.rank])
        with pytest.raises(TypeError):
            c.shrink("1")
        with pytest.raises(sc.InvalidArgumentError, match="outside"):
            c.shrink([7])
        return True

    assert all(run_ranks(2, body))


def test_trace_files_merge(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARCOLL_TRACE", str(tmp_path))

    def body(c):
        for _ in range(3):
            c.allreduce(np.ones(100, np.float32), algo="ring")
        return True

    run_ranks(2, body)
    files = sorted(tmp_path.glob("sparcoll-*.json"))
    assert len(files) == 2
    # A rank killed mid-write leaves its file cut short: still merged.
    text = files[1].read_text()
    files[1].write_text(text[: text.rindex("]")].rstrip() + ',\n{"name": "scAllRed')
    out = tmp_path / "all.json"
    r = subprocess.run([sys.executable, str(MERGE), str(tmp_path), "-o", str(out)],
                       capture_output=True, text=True, check=True)
    assert "rank 0: 3 calls, 0 failed" in r.stdout, r.stdout
    merged = json.loads(out.read_text())
    calls = [e for e in merged["traceEvents"] if e.get("ph") == "X"]
    assert len(calls) == 6
    assert {e["pid"] for e in calls} == {0, 1}
    assert min(e["ts"] for e in calls) == 0
    assert all(e["args"]["algorithm"] == "ring" and e["args"]["rounds"] == 2 for e in calls)


def test_trace_merge_empty_dir(tmp_path):
    r = subprocess.run([sys.executable, str(MERGE), str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and "no sparcoll-*.json" in r.stderr
