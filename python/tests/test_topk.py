"""sparcoll.topk and sparcoll.TopkFeedback on numpy arrays and torch CPU tensors:
exact selection against a numpy reference, reproducible randomness, expected
counts of the approximate methods, bit-exact error-feedback conservation, errors."""

import numpy as np
import pytest

import sparcoll as sc
from helpers import requires_torch


def exact_reference(x, k):
    """Indices of the k largest |x| (ties to the smaller index), sorted."""
    order = np.lexsort((np.arange(x.size), -np.abs(x.astype(np.float64))))
    return np.sort(order[:k])


def _vec(n, seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * rng.choice([0.01, 1, 100], n)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("n,k", [(1, 1), (100, 7), (5000, 50), (5000, 5000)])
def test_exact_matches_reference(dtype, n, k):
    x = _vec(n, 1, dtype)
    idx, val = sc.topk(x, k, method="exact")
    assert idx.dtype == np.uint32 and val.dtype == dtype
    np.testing.assert_array_equal(idx, exact_reference(x, k))
    np.testing.assert_array_equal(val, x[idx])


def test_exact_ties_to_smaller_index():
    x = np.array([1, -3, 3, 2, -3, 0], np.float32)
    idx, val = sc.topk(x, 2, method="exact")
    np.testing.assert_array_equal(idx, [1, 2])
    np.testing.assert_array_equal(val, [-3, 3])


@pytest.mark.parametrize("method", ["approx", "approx_at_most"])
def test_approx_is_reproducible_and_valid(method):
    x = _vec(20_000, 2)
    a = sc.topk(x, 200, method=method, seed=7, step=3)
    b = sc.topk(x, 200, method=method, seed=7, step=3)
    c = sc.topk(x, 200, method=method, seed=7, step=4)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])
    idx, val = a
    assert np.all(np.diff(idx.astype(np.int64)) > 0)  # sorted, unique
    np.testing.assert_array_equal(val, x[idx])


def test_approx_selects_k_in_expectation():
    x = _vec(8192, 3)
    k = 256
    counts = [sc.topk(x, k, method="approx", bucket=512, seed=s)[0].size for s in range(40)]
    mean = np.mean(counts)
    assert abs(mean - k) < 4 * np.std(counts) / np.sqrt(len(counts)) + 3, (mean, k)
    at_most = [sc.topk(x, k, method="approx_at_most", bucket=512, seed=s)[0].size for s in range(40)]
    assert np.mean(at_most) <= k + 3 * np.std(at_most)


def test_approx_favours_large_magnitudes():
    x = np.ones(4096, np.float32) * 1e-3
    big = np.arange(0, 4096, 64)
    x[big] = 10.0
    idx, _ = sc.topk(x, big.size, method="approx", bucket=512, seed=1)
    assert set(big).issubset(set(idx.tolist()))


def test_fixed_output_has_exactly_k():
    x = _vec(10_000, 4)
    for seed in range(5):
        idx, val = sc.topk(x, 123, method="approx", output="fixed", seed=seed)
        assert idx.size == 123 and np.all(np.diff(idx.astype(np.int64)) > 0)


def test_threshold_at_most_k():
    x = _vec(50_000, 5)
    idx, val = sc.topk(x, 500, method="threshold", seed=2)
    assert 0 < idx.size <= 500
    np.testing.assert_array_equal(val, x[idx])


@pytest.mark.parametrize("method", ["exact", "approx"])
def test_residual_conservation_numpy(method):
    x = _vec(3000, 6)
    r = _vec(3000, 7) * 0.1
    acc = x + r
    r_old = r.copy()
    idx, val = sc.topk(x, 60, method=method, residual=r, seed=1)
    np.testing.assert_array_equal(val, acc[idx])  # sent = acc at the selection
    assert np.all(r[idx] == 0)
    rest = np.setdiff1d(np.arange(3000), idx)
    np.testing.assert_array_equal(r[rest], acc[rest])  # unsent carried exactly
    assert not np.array_equal(r, r_old)


def test_feedback_state_numpy():
    fb = sc.TopkFeedback(1000, "float32")
    res = fb.residual()
    assert res.shape == (1000,) and np.all(res == 0) and fb.step == 0
    g1 = _vec(1000, 8)
    idx, val = fb.select(g1, 10, method="exact")
    np.testing.assert_array_equal(idx, exact_reference(g1, 10))
    kept = np.setdiff1d(np.arange(1000), idx)
    np.testing.assert_array_equal(res[kept], g1[kept])  # the view follows the library's residual
    assert fb.step == 1
    g2 = _vec(1000, 9)
    acc = g2 + res
    idx2, val2 = fb.select(g2, 10, method="exact")
    np.testing.assert_array_equal(val2, acc[idx2])
    np.testing.assert_array_equal(val2 + res[idx2], acc[idx2])
    fb.step = 42
    assert fb.step == 42
    fb.reset()
    assert fb.step == 0 and np.all(fb.residual() == 0)
    fb.close()


def test_feedback_sum_over_steps_is_conserved():
    """Over T steps, sent + final residual == sum of gradients (up to float rounding)."""
    fb = sc.TopkFeedback(2048, "float64")
    total_sent = np.zeros(2048)
    total_grad = np.zeros(2048)
    for t in range(20):
        g = _vec(2048, 100 + t, np.float64)
        total_grad += g
        idx, val = fb.select(g, 40, method="approx", seed=3)
        np.add.at(total_sent, idx.astype(np.int64), val)
    np.testing.assert_allclose(total_sent + fb.residual(), total_grad, rtol=1e-12, atol=1e-9)


def test_select_into_is_select_without_a_wait():
    """select_into writes what select returns into the caller's slots and the counts
    (written, selected, deferred) into a 3-word array; the same residual and step."""
    a, b = sc.TopkFeedback(5000, "float32"), sc.TopkFeedback(5000, "float32")
    cap = 64
    idx = np.full(cap, 7, np.uint32)
    val = np.zeros(cap, np.float32)
    counts = np.zeros(3, np.uint64)
    for t in range(4):
        g = _vec(5000, 200 + t)
        for method in ("bracket", "exact", "threshold"):
            want_i, want_v = a.select(g, 50, method=method, seed=9)
            b.select_into(g, 50, idx, val, counts, method=method, seed=9)
            nnz = int(counts[0])
            assert nnz == want_i.size and counts[1] >= counts[0] and counts[2] == counts[1] - counts[0]
            np.testing.assert_array_equal(idx[:nnz], want_i)
            np.testing.assert_array_equal(val[:nnz], want_v)
            np.testing.assert_array_equal(a.residual(), b.residual())
            assert a.step == b.step
    g = _vec(5000, 300)
    with pytest.raises(sc.InvalidArgumentError, match="capacity = 10 is smaller than k = 50"):
        b.select_into(g, 50, np.zeros(10, np.uint32), np.zeros(10, np.float32), counts)
    with pytest.raises(sc.InvalidArgumentError, match="counts must be 3"):
        b.select_into(g, 50, idx, val, np.zeros(2, np.uint64))
    with pytest.raises(sc.InvalidArgumentError, match="indices has 64 slots, values 63"):
        b.select_into(g, 50, idx, val[:63], counts)
    with pytest.raises(sc.InvalidArgumentError, match="values is float64"):
        b.select_into(g, 50, idx, np.zeros(cap), counts)
    with pytest.raises(sc.InvalidArgumentError, match="state holds"):
        b.select_into(g[:100], 50, idx, val, counts)
    a.close()
    b.close()


@requires_torch
def test_torch_tensors():
    import torch

    x = torch.from_numpy(_vec(4000, 10))
    idx, val = sc.topk(x, 40, method="exact")
    assert isinstance(idx, torch.Tensor) and idx.dtype == torch.int64 and val.dtype == torch.float32
    np.testing.assert_array_equal(idx.numpy(), exact_reference(x.numpy(), 40))
    r = torch.zeros_like(x)
    idx, val = sc.topk(x, 40, method="exact", residual=r)
    assert torch.all(r[idx] == 0) and torch.equal(val, x[idx])
    i32, _ = sc.topk(x, 40, method="exact", index_dtype="int32")
    assert i32.dtype == torch.int32
    fb = sc.TopkFeedback(4000, "bfloat16")
    xb = x.to(torch.bfloat16)
    idx, val = fb.select(xb, 40, method="exact")
    res = fb.residual(like=xb)
    assert res.dtype == torch.bfloat16 and torch.all(res[idx] == 0)
    assert torch.equal(val, xb[idx])


def test_errors():
    x = _vec(100, 11)
    with pytest.raises(sc.InvalidArgumentError, match="k"):
        sc.topk(x, 101, method="exact")  # k > n: the library's message
    with pytest.raises(sc.InvalidArgumentError):
        sc.topk(x, 0)
    with pytest.raises(sc.InvalidArgumentError, match="float"):
        sc.topk(np.arange(10, dtype=np.int32), 2)
    with pytest.raises(sc.InvalidArgumentError, match="unknown top-k method"):
        sc.topk(x, 2, method="best")
    with pytest.raises(sc.InvalidArgumentError, match="bucket"):
        sc.topk(x, 2, method="approx", bucket=0)  # None derives it; 0 is not a length
    with pytest.raises(sc.InvalidArgumentError, match="residual must match"):
        sc.topk(x, 2, residual=np.zeros(99, np.float32))
    with pytest.raises(sc.InvalidArgumentError, match="residual must match"):
        sc.topk(x, 2, residual=np.zeros(100, np.float64))
    with pytest.raises(sc.InvalidArgumentError, match="overlaps"):
        sc.topk(x, 2, residual=x)
    with pytest.raises(sc.InvalidArgumentError):
        sc.topk(x, 2, output="fixed", method="exact")  # fixed output needs a bucketed method
    with pytest.raises(sc.InvalidArgumentError, match="not C-contiguous"):
        sc.topk(_vec(200, 1)[::2], 2)
    fb = sc.TopkFeedback(100)
    with pytest.raises(sc.InvalidArgumentError, match="state holds"):
        fb.select(np.zeros(50, np.float32), 2)
    fb.close()
    with pytest.raises(sc.InvalidUsageError, match="closed"):
        fb.select(x, 2)


def test_default_is_bracket_the_k_largest_nonzeros():
    x = _vec(300_000, 5)
    x[::3] = 0  # a third exact zeros
    k = 3000
    idx, val = sc.topk(x, k)
    np.testing.assert_array_equal(idx, exact_reference(x, k))
    np.testing.assert_array_equal(val, x[idx])
    few = np.zeros(300_000, np.float32)
    few[[5, 77, 123_456]] = [1, -2, 3]
    idx, _ = sc.topk(few, 10)  # bracket never sends a zero; exact pads with them
    np.testing.assert_array_equal(idx, [5, 77, 123_456])
    assert sc.topk(few, 10, method="exact")[0].size == 10


def test_derived_bucket_owns_32_slots():
    x = _vec(1 << 18, 6)
    k = (1 << 18) // 1000
    idx, val = sc.topk(x, k, method="approx", output="fixed", seed=1)
    assert idx.size == k
    pads = np.count_nonzero(val == 0)
    assert pads < 0.15 * k  # 512-element buckets (k_b = 0 or 1 here) pad about a third
    i512, v512 = sc.topk(x, k, method="approx", output="fixed", bucket=512, seed=1)
    assert np.count_nonzero(v512 == 0) > 0.25 * k
