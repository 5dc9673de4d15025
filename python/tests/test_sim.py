"""sparcoll-sim: tables from the library's model, the seed report, bad input."""

import json

import pytest

from sparcoll import model, sim


def test_tables_match_the_model(capsys, tmp_path):
    assert sim.main(["--defaults", "--ranks", "2,8", "--sizes", "1K,4M", "--collectives",
                     "allreduce,dsop", "--no-plots", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "## allreduce" in out and "## dsop" in out
    rows = [json.loads(l) for l in open(tmp_path / "sim.jsonl")]
    assert len(rows) == 2 * 2 * 2
    for r in rows:
        count = r["bytes"] // 4 if r["collective"] == "allreduce" else int((r["bytes"] // 4) ** 0.5)
        t, pick = model.estimate(None, transport="mpi", nranks=r["P"], collective=r["collective"], count=count)
        assert pick == r["auto"] and t == pytest.approx(r["auto_s"])
        assert r["best_s"] == min(r["times"].values())


def test_seed_report(capsys):
    assert sim.main(["--defaults", "--seed-report"]) == 0
    out = capsys.readouterr().out
    assert "Experiment 1" in out and "Experiment 2" in out
    assert out.count("\n") >= 14


@pytest.mark.parametrize("args,msg", [
    ([], "give a tuning file or --defaults"),
    (["--defaults", "--density", "2"], "must be in (0, 1]"),
    (["--defaults", "--collectives", "bogus"], "unknown collective"),
    (["--defaults", "--ranks", "1"], "every P must be >= 2"),
    (["--defaults", "--sizes", "12Q"], "is not a byte count"),
    (["--defaults", "--neighbor", "torus:d=2"], "unknown topology 'torus:d=2'"),
    (["--defaults", "--neighbor", "moore:d=9"], "d must be an integer in [1, 6]"),
    (["--defaults", "--neighbor", "random:p=1.5"], "p must be a probability in (0, 1]"),
    (["--defaults", "--neighbor", "file:/nonexistent/edges"], "cannot read the edge list"),
    (["--defaults", "--nbr-ranks", "0"], "every P must be >= 1"),
])
def test_bad_arguments(args, msg, capsys):
    with pytest.raises(SystemExit) as e:
        sim.main(args)
    assert e.value.code == 2 and msg in capsys.readouterr().err


def test_bad_tuning_file(tmp_path, capsys):
    f = tmp_path / "t.json"
    f.write_text('{"format": "sparcoll-tuning", "version": 2}')
    assert sim.main([str(f), "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and "version" in err


# --neighbor: the graphs, checked against the benchmark's generator (edges, mean and
# largest out-degree, largest in-degree, as neighbor_allgather_perf prints them).
@pytest.mark.parametrize("spec,P,want", [
    ("moore:d=1,r=1", 8, (14, 2, 2)), ("moore:d=2,r=2", 16, (180, 15, 15)),
    ("moore:d=3,r=1,periodic=1", 27, (702, 26, 26)), ("random:p=0.1", 8, (9, 3, 4)),
    ("random:p=0.1", 27, (64, 5, 6)), ("random:p=0.3,seed=7", 16, (62, 9, 7)),
])
def test_neighbor_graphs_are_the_benchmarks(spec, P, want):
    from sparcoll import _sim_neighbor as sn
    dst = sn.build(sn.parse_spec(spec), P)
    src = sn.sources(dst)
    assert (sum(map(len, dst)), max(map(len, dst)), max(map(len, src))) == want


def test_neighbor_predictions_price_the_simulated_transport(tmp_path, capsys):
    """A ring (Moore d = 1 on 6 ranks: 10 edges, at most 2 per rank) with a file whose
    only entry is mpi's: naive is one round, alpha + o + b (2 beta + 10 beta_s),
    priced with the mpi entry although the simulated ranks are local threads; two
    machines put the middle edges' blocks between machines."""
    a, b, bs, o = 7e-6, 2e-9, 3e-10, 1e-6
    f = tmp_path / "t.json"
    f.write_text('{"format": "sparcoll-tuning", "version": 1, "models": [{"transport": "mpi", '
                 f'"alpha": {a}, "beta": {b}, "gamma": 0, "beta_shared": {bs}, "message_overhead": {o}}}]}}')
    assert sim.main([str(f), "--collectives", "none", "--neighbor", "moore:d=1,r=1", "--nbr-ranks", "6",
                     "--nbr-sizes", "8,1K", "--no-plots", "-o", str(tmp_path)]) == 0
    assert "## neighbor_allgather on moore:d=1,r=1" in capsys.readouterr().out
    rows = [json.loads(l) for l in open(tmp_path / "sim.jsonl")]
    assert [r["bytes"] for r in rows] == [8, 1024] and all(r["edges"] == 10 for r in rows)
    for r in rows:
        assert r["times"]["naive"] == pytest.approx(a + o + r["bytes"] * (2 * b + 10 * bs), rel=1e-12)
        assert r["auto"] in ("naive", "combining", "hierarchical")
    # Two machines of 3 ranks: the file has one level, so inter-node bytes cost 4 x beta.
    assert sim.main([str(f), "--collectives", "none", "--neighbor", "moore:d=1,r=1", "--nbr-ranks", "6",
                     "--nbr-sizes", "1K", "--ranks-per-node", "3", "--no-plots", "-o", str(tmp_path)]) == 0
    r = [json.loads(l) for l in open(tmp_path / "sim.jsonl")][0]
    assert r["times"]["naive"] > a + o + 1024 * (2 * b + 10 * bs)


def test_neighbor_refusals(tmp_path, capsys):
    edges = tmp_path / "e.txt"
    edges.write_text("0 1\n1 0\n0 7\n7 0\n")
    assert sim.main(["--defaults", "--collectives", "none", "--neighbor", f"file:{edges}", "--nbr-ranks", "4",
                     "--no-plots"]) == 2
    assert "names rank 7, but the simulation has 4 ranks" in capsys.readouterr().err
    assert sim.main(["--defaults", "--transport", "local", "--memory", "device", "--neighbor", "moore:d=1,r=1",
                     "--no-plots"]) == 2
    assert "host-memory local ranks" in capsys.readouterr().err
