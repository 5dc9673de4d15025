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
