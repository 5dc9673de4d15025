"""The cost model from Python: sparcoll.model (no communicator) against the
README's formulas, tuning files (load, the library's messages), comm.estimate
and Topology.estimate agreeing with it, and a rule steering a local group's
auto."""

import json
import math

import numpy as np
import pytest

import sparcoll as sc
import sparcoll.model as m
from helpers import run_ranks

INTRA = (2e-6, 1e-10, 5e-11)
INTER = (3e-5, 8e-10, 5e-11)


def _entry(transport, level, p):
    return {"transport": transport, "level": level, "alpha": p[0], "beta": p[1], "gamma": p[2]}


def _write(tmp_path, doc, name="tuning.json"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(path)


@pytest.fixture
def two_levels(tmp_path):
    return _write(tmp_path, {"format": "sparcoll-tuning", "version": 1,
                             "models": [_entry(t, lv, p) for t in ("local", "mpi")
                                        for lv, p in (("intra", INTRA), ("inter", INTER))]})


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for v in ("SPARCOLL_ALPHA", "SPARCOLL_BETA", "SPARCOLL_GAMMA", "SPARCOLL_BETA_SHARED", "SPARCOLL_ALGO",
              "SPARCOLL_TUNING_FILE", "SPARCOLL_MACHINES"):
        monkeypatch.delenv(v, raising=False)


def _ring_allreduce(P, n, p):
    a, b, g = p
    return 2 * (P - 1) * a + 2 * (P - 1) / P * n * b + (P - 1) / P * n * g


def _rabenseifner_allreduce(P, n, p):
    a, b, g = p
    p2 = 1 << (P.bit_length() - 1)
    f = 1.0 if P != p2 else 0.0
    lg = math.log2(p2)
    return 2 * (lg + f) * a + (2 * (p2 - 1) / p2 + 2 * f) * n * b + ((p2 - 1) / p2 + f) * n * g


@pytest.mark.parametrize("P", [2, 3, 8, 4096])
@pytest.mark.parametrize("machines", [1, 2])
def test_estimate_is_the_readme_formula(two_levels, P, machines):
    p = INTER if machines > 1 else INTRA
    count = 1 << 20
    for algo, formula in (("ring", _ring_allreduce), ("rabenseifner", _rabenseifner_allreduce),
                          ("native", _ring_allreduce)):
        s, pick = m.estimate(two_levels, transport="local", nranks=P, machines=machines, collective="allreduce",
                             count=count, algo=algo)
        assert s == pytest.approx(formula(P, count * 4, p), rel=1e-12)
        assert pick in ("ring", "rabenseifner", "recdbl")
    t_auto, pick = m.estimate(two_levels, transport="local", nranks=P, machines=machines, collective="allreduce",
                              count=count)
    assert t_auto == pytest.approx(m.estimate(two_levels, transport="local", nranks=P, machines=machines,
                                              collective="allreduce", count=count, algo=pick)[0])


def test_cost_model_every_collective(two_levels):
    cm = m.CostModel(two_levels, transport="mpi", nranks=64, machines=8)
    assert "64 ranks on 8 machines" in repr(cm)
    for coll, count, kw in (("allreduce", 1000, {}), ("reduce_scatter", 1000, {}), ("allgather", 10, {}),
                            ("sparse_allreduce", 1 << 20, {"density": 0.01}), ("dsop", 512, {})):
        s, pick = cm.estimate(coll, count, **kw)
        assert s > 0 and isinstance(pick, str) and pick != "auto"
    # The old spelling ssar_rec_dbl of ssar_recdbl still works, with a DeprecationWarning.
    with pytest.warns(DeprecationWarning, match="'ssar_rec_dbl' is deprecated: it is spelled 'ssar_recdbl'"):
        old = cm.estimate("sparse_allreduce", 1 << 20, density=0.01, algo="ssar_rec_dbl")[0]
    assert cm.estimate("sparse_allreduce", 1 << 20, density=0.01, algo="ssar_recdbl")[0] == old
    with pytest.raises(sc.InvalidArgumentError, match="needs density"):
        cm.estimate("sparse_allreduce", 1 << 20)
    with pytest.raises(sc.InvalidArgumentError, match="density must be in"):
        cm.estimate("sparse_allreduce", 1 << 20, density=2.0)
    with pytest.raises(sc.InvalidArgumentError, match="not available for reduce-scatter"):
        cm.estimate("reduce_scatter", 10, algo="recdbl")
    with pytest.raises(sc.InvalidArgumentError, match="unknown collective"):
        cm.estimate("alltoall", 10)
    with pytest.raises(sc.InvalidArgumentError, match="nccl transport works on device memory"):
        m.CostModel(None, transport="nccl", memory="host", nranks=4)
    cm.close()


def test_parameters_env_over_file_over_defaults(tmp_path, monkeypatch):
    n = 4000
    builtin_mpi = (5e-6, 1 / 4e9, 1 / 4e9)
    s, _ = m.estimate(None, transport="mpi", nranks=4, collective="allreduce", count=1000, algo="ring")
    assert s == pytest.approx(_ring_allreduce(4, n, builtin_mpi))
    f = _write(tmp_path, {"format": "sparcoll-tuning", "version": 1, "models": [_entry("mpi", "intra", INTRA)]})
    s, _ = m.estimate(f, transport="mpi", nranks=4, machines=2, collective="allreduce", count=1000, algo="ring")
    assert s == pytest.approx(_ring_allreduce(4, n, INTRA)), "a missing level takes the other one"
    monkeypatch.setenv("SPARCOLL_BETA", "1e-8")
    s, _ = m.estimate(f, transport="mpi", nranks=4, collective="allreduce", count=1000, algo="ring")
    assert s == pytest.approx(_ring_allreduce(4, n, (INTRA[0], 1e-8, INTRA[2])))
    monkeypatch.delenv("SPARCOLL_BETA")
    monkeypatch.setenv("SPARCOLL_TUNING_FILE", f)  # tuning=None: the environment's file
    s, _ = m.estimate(None, transport="mpi", nranks=4, collective="allreduce", count=1000, algo="ring")
    assert s == pytest.approx(_ring_allreduce(4, n, INTRA))


def test_load_returns_the_file_and_rejects_bad_ones(tmp_path, two_levels):
    doc = m.load(two_levels)
    assert doc["format"] == "sparcoll-tuning" and doc["rules"] == [] and len(doc["models"]) == 4
    bad = _write(tmp_path, {"format": "sparcoll-tuning", "version": 1,
                            "rules": [{"collective": "allreduce", "bytes": [5, 3], "algorithm": "ring"}]}, "bad.json")
    with pytest.raises(sc.InvalidArgumentError, match=r"tuning file '.*bad\.json': rules\[0\]\.bytes: lo 5 > hi 3"):
        m.load(bad)
    with pytest.raises(sc.InvalidArgumentError, match=r"rules\[0\]\.bytes: lo 5 > hi 3"):
        sc.local_group(2, tuning_file=bad)
    with pytest.raises(sc.InvalidArgumentError, match="cannot be read"):
        m.load(tmp_path / "missing.json")
    typo = _write(tmp_path, '{"format": "sparcoll-tuning", "version": 1, "modles": []}', "typo.json")
    with pytest.raises(sc.InvalidArgumentError, match="modles: unknown key"):
        m.load(typo)


@pytest.mark.parametrize("P", [2, 4])
def test_comm_estimate_matches_the_cost_model(two_levels, P):
    def body(c):
        out = {}
        for coll, count, d in (("allreduce", 5000, None), ("allgather", 100, None),
                               ("sparse_allreduce", 1 << 16, 0.01), ("dsop", 100, None)):
            out[coll] = c.estimate(coll, count, density=d)
        return out

    for got in run_ranks(P, body, tuning_file=two_levels):
        cm = m.CostModel(two_levels, transport="local", nranks=P)
        for coll, (s, pick) in got.items():
            count = {"allreduce": 5000, "allgather": 100, "sparse_allreduce": 1 << 16, "dsop": 100}[coll]
            want = cm.estimate(coll, count, density=0.01 if coll == "sparse_allreduce" else None)
            assert (s, pick) == want, coll


def test_a_rule_steers_auto(tmp_path):
    # 8-byte allreduces go to recursive doubling by the model; the rule says ring.
    f = _write(tmp_path, {"format": "sparcoll-tuning", "version": 1,
                          "rules": [{"collective": "allreduce", "bytes": [0, 64], "algorithm": "ring"}]})

    def body(c):
        x = np.ones(2, np.float32)
        c.reset_stats()
        c.allreduce(x)
        auto = c.stats()
        c.reset_stats()
        c.allreduce(x, algo="ring")
        # What ran, by its traffic and rounds (the first call alone grows scratch).
        ran = [{k: v for k, v in s.items() if k != "scratch_allocs"} for s in (auto, c.stats())]
        return c.algo_for(8), c.estimate("allreduce", 2)[1], ran[0] == ran[1]

    assert run_ranks(4, lambda c: c.algo_for(8)) == ["recdbl"] * 4
    assert run_ranks(4, body, tuning_file=f) == [("ring", "ring", True)] * 4


def test_topology_estimate():
    def body(c):
        peers = [(c.rank + 1) % c.size, (c.rank - 1) % c.size]
        with sc.Topology(c, peers, peers) as t:
            s, pick = t.estimate(4096)
            assert pick == t.algo_for(4096)
            assert s == pytest.approx(t.estimate(4096, pick)[0])
            assert t.estimate(4096, "native")[0] == pytest.approx(t.estimate(4096, "naive")[0])
            return s

    assert all(s > 0 for s in run_ranks(3, body))


def test_cost_model_prices_topology_terms(two_levels, monkeypatch):
    """CostModel.neighbor_time on a topology's cost_terms is its estimate, exactly,
    on 2 machines (both levels' terms); bad terms raise the library's message."""
    P = 4
    monkeypatch.setenv("SPARCOLL_MACHINES", "2")
    sizes = (8, 1000, 1 << 20)

    def body(c):
        peers = [q for q in range(P) if q != c.rank]
        with sc.Topology(c, peers, peers) as t:
            return {a: (t.cost_terms(a), [t.estimate(n, a)[0] for n in sizes])
                    for a in ("naive", "combining", "hierarchical")}

    cm = m.CostModel(two_levels, transport="local", nranks=P, machines=2)
    try:
        for out in run_ranks(P, body, tuning_file=two_levels):
            for algo, (terms, seconds) in out.items():
                assert terms["blocks"][1] > 0 or algo != "naive"
                assert [cm.neighbor_time(terms, n) for n in sizes] == seconds, algo
        bad = dict(out["naive"][0], blocks=(1.0, -1.0))
        with pytest.raises(sc.InvalidArgumentError, match=r"terms->blocks\[1\] must be a finite number >= 0"):
            cm.neighbor_time(bad, 8)
        with pytest.raises(sc.InvalidArgumentError, match="terms lacks shared_blocks"):
            cm.neighbor_time({"rounds": (1, 0), "extra_messages": (0, 0), "blocks": (1, 0)}, 8)
    finally:
        cm.close()
