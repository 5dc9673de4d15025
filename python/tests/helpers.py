"""Shared test helpers: run a body on every rank of a local group (one thread per
rank), deterministic integer-valued test data, and feature gates."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import sparcoll as sc

# Deadline of the test communicators: a broken schedule fails instead of hanging.
TEST_TIMEOUT = float(os.environ.get("SPARCOLL_TEST_TIMEOUT", "30"))


def run_ranks(P, body, timeout=TEST_TIMEOUT, **kwargs):
    """Runs body(comm) on the P communicators of a local group, one thread each;
    returns the P results in rank order (re-raises the first rank's exception)."""
    comms = sc.local_group(P, timeout=timeout, **kwargs)
    try:
        with ThreadPoolExecutor(P) as ex:
            futs = [ex.submit(body, c) for c in comms]
            return [f.result(timeout=timeout + 60) for f in futs]
    finally:
        for c in comms:
            c.close()


def rank_data(rank, n, dtype, kind="mixed"):
    """Integer-valued data (exact in every dtype, including float16) that differs per rank."""
    i = np.arange(n, dtype=np.int64)
    if kind == "prod":  # small factors: products stay exact
        v = 1 + (i + rank) % 2
    elif kind == "positive":
        v = (i * 3 + rank * 5) % 11 + 1
    else:
        v = (i * 7 + rank * 3) % 13 - 6
    if np.dtype(dtype).kind == "u":
        v = np.abs(v)
    return v.astype(dtype)


def reference(arrays, op):
    """numpy reference of a reduction over ranks (avg truncates toward zero for integers)."""
    stack = np.stack([a.astype(np.float64) for a in arrays])
    P = len(arrays)
    if op == "sum":
        r = stack.sum(0)
    elif op == "prod":
        r = stack.prod(0)
    elif op == "max":
        r = stack.max(0)
    elif op == "min":
        r = stack.min(0)
    elif op == "avg":
        s = stack.sum(0)
        r = np.trunc(s / P) if arrays[0].dtype.kind in "iu" else s / P
    else:
        raise ValueError(op)
    return r.astype(arrays[0].dtype)


def has_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def gpu_count():
    if not sc.features["cuda"]:
        return 0
    try:
        import torch

        return torch.cuda.device_count()
    except ImportError:
        try:
            import cupy

            return cupy.cuda.runtime.getDeviceCount()
        except Exception:  # noqa: BLE001
            return 0


requires_torch = pytest.mark.skipif(not has_torch(), reason="PyTorch is not installed")
requires_gpu = pytest.mark.skipif(gpu_count() == 0,
                                  reason="no CUDA device (or a CPU-only sparcoll build): GPU test skipped")


def requires_feature(name):
    return pytest.mark.skipif(not sc.features.get(name, False),
                              reason=f"this sparcoll build has no {name} (features: {sc.features})")



def under_mpirun() -> bool:
    return int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("PMI_SIZE", "0"))) >= 2
