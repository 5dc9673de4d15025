"""bench/plot_ring_vs_hd.py on synthetic all_reduce_perf rows: the crossover it
reports, the model's errors (the library's model over a tuning file of the
repository), and its refusal of files without ring/rabenseifner rows."""

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "plot_ring_vs_hd.py"
TUNING = ROOT / "bench" / "results" / "model-2026-11-23" / "net1g-p4.json"


def _rows(P, times):
    for algo, by_size in times.items():
        for size, us in by_size.items():
            for in_place in (False, True):
                yield {"tool": "all_reduce_perf", "algorithm": algo, "nranks": P, "type": "float",
                       "size_bytes": size, "in_place": in_place, "time_us": us * (3 if in_place else 1)}


def _run(tmp_path, files):
    out = tmp_path / "rvh"
    proc = subprocess.run([sys.executable, str(SCRIPT), *map(str, files), "--tuning", str(TUNING), "-o", str(out)],
                          cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    return proc, out


def test_crossover_and_model_error(tmp_path):
    sizes = [1024 * 4**i for i in range(6)]  # 1 KiB .. 1 MiB
    # P = 2: ring slower up to 16 KiB, faster from 64 KiB on (one earlier win at 4 KiB does not count).
    ring2 = dict(zip(sizes, [10, 5, 30, 20, 40, 80]))
    hd2 = dict(zip(sizes, [8, 9, 20, 30, 50, 90]))
    # P = 4: ring never faster.
    ring4 = dict(zip(sizes, [20] * 6))
    hd4 = dict(zip(sizes, [10] * 6))
    files = []
    for P, times in ((2, {"ring": ring2, "rabenseifner": hd2}), (4, {"ring": ring4, "rabenseifner": hd4})):
        f = tmp_path / f"p{P}.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in _rows(P, times)))
        files.append(f)
    proc, out = _run(tmp_path, files)
    assert proc.returncode == 0, proc.stdout
    md = (out.with_suffix(".md")).read_text()
    assert re.search(r"^\| 2 \| 64 KiB \|", md, re.M), md
    assert re.search(r"^\| 4 \| none \|", md, re.M), md
    errors = re.findall(r"^\| (\d) \| (ring|rabenseifner) \| 6 \| ([\d.]+) % \| ([\d.]+) % \|$", md, re.M)
    assert len(errors) == 4 and all(float(med) <= float(mx) for *_, med, mx in errors), md
    assert out.with_suffix(".png").stat().st_size > 10000


def test_no_rows(tmp_path):
    f = tmp_path / "other.jsonl"
    f.write_text(json.dumps({"algorithm": "native", "nranks": 2, "type": "float", "size_bytes": 8,
                             "in_place": False, "time_us": 1}) + "\n")
    proc, _ = _run(tmp_path, [f])
    assert proc.returncode != 0 and "no ring or rabenseifner float rows" in proc.stdout


MODEL_SCRIPT = ROOT / "bench" / "plot_model.py"


def _validate_rows(P, sites):
    """sites: {(collective, bytes, density): {algorithm: (measured, predicted)}}, auto picks 'ring'."""
    for (coll, size, density), algos in sites.items():
        best = min(algos, key=lambda a: algos[a][0])
        regret = algos["ring"][0] / algos[best][0] - 1
        for algo, (measured, predicted) in algos.items():
            yield {"collective": coll, "algorithm": algo, "count": size // 4, "bytes": size, "density": density,
                   "seconds": measured, "predicted": predicted, "auto": "ring", "best": best, "regret": regret}


def test_model_campaign_report(tmp_path):
    camp = tmp_path / "camp"
    camp.mkdir()
    fit = {"format": "sparcoll-tuning", "version": 1, "source": {"sizes": [1024, 67108864, 4]}, "models": [
        {"transport": "mpi", "memory": "host", "level": "intra", "alpha": 1e-5, "beta": 2e-9, "gamma": 1e-10,
         "fit": {"r2": 0.97, "points": 40, "dropped": 1}}], "rules": []}
    # shm P = 2: errors 10, 30, 10 and 20 % on allreduce (median 15 %), auto best everywhere.
    shm = {("allreduce", 2048, 0): {"ring": (1.0, 1.1), "recdbl": (2.0, 1.4), "native": (1.5, 9.0)},
           ("allreduce", 8192, 0): {"ring": (1.0, 0.9), "recdbl": (3.0, 3.6)}}
    # 1gbit P = 4: allreduce 8 KiB auto 50 % over the best; sparse d=0.01 at 5 %.
    slow = {("allreduce", 8192, 0): {"ring": (3.0, 3.0), "recdbl": (2.0, 2.0)},
            ("sparse_allreduce", 65536, 0.01): {"ring": (1.05, 1.0), "dense": (1.0, 1.0)}}
    for net, P, sites in (("shm", 2, shm), ("1gbit", 4, slow)):
        (camp / f"{net}-p{P}.json").write_text(json.dumps(fit))
        (camp / f"{net}-p{P}-check.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in _validate_rows(P, sites)))
    out = tmp_path / "report"
    proc = subprocess.run([sys.executable, str(MODEL_SCRIPT), str(camp), "-o", str(out)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout
    md = out.with_suffix(".md").read_text()
    rows = [l for l in md.splitlines() if l.startswith("| ")]
    shm_row = next(l for l in rows if l.startswith("| shared memory | 2 | 1 KiB .. 64 MiB x4 | 15.0 % (4) | "
                                                    "allreduce recdbl 25.0 % |"))
    assert "| 2/2 ≤ 10 % |" in shm_row, md
    slow_row = next(l for l in rows if l.startswith("| TCP shaped to 1 Gbit/s (shared medium) | 4 | 1 KiB .. 64 MiB x4 | "
                                                     "0.0 % (2) |"))
    assert "0/1 ≤ 10 %; max 50 % (8 KiB)" in slow_row and "1/1 ≤ 10 %" in slow_row, md
    assert "| TCP shaped to 1 Gbit/s (shared medium) | 4 | allreduce 8 KiB | ring | recdbl | 50.0 % |" in md, md
    assert ("Dense median abs. error ≤ 20 %: 2 of 2 runs; every dense algorithm's median ≤ 20 %: 1 of 2 runs. "
            "Auto within 10 % of the best: 3 of 4 points.") in md, md
    assert re.search(r"^\| shared memory \| 2 \| intra \| 10\.0 µs \| 2\.000 ns/B \| 0\.100 ns/B \| 0\.970 \| 40 \(1\) \|$",
                     md, re.M), md
    assert (out / "shm.png").stat().st_size > 10000 and (out / "1gbit.png").stat().st_size > 10000


def test_model_campaign_empty(tmp_path):
    proc = subprocess.run([sys.executable, str(MODEL_SCRIPT), str(tmp_path), "-o", str(tmp_path / "r")],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert proc.returncode != 0 and "no NET-pP-check.jsonl files" in proc.stdout


def _raw(path, times):
    """A --raw file: the source line, then one point per (collective, algorithm, bytes): seconds."""
    rows = [{"source": {"tool": "sparcoll-tune"}}]
    rows += [{"collective": c, "algorithm": a, "bytes": b, "seconds": t} for (c, a, b), t in times.items()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_model_launches(tmp_path):
    # Two campaigns: shm P = 2 measured 10 %, 20 % and 40 % apart on three points both have (native,
    # broadcast and a point only one has are left out); tcp P = 4 only in one campaign.
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    _raw(a / "shm-p2-raw.jsonl", {("allreduce", "ring", 1024): 1.0, ("allgather", "recdbl", 4096): 2.0,
                                  ("allreduce", "native", 1024): 1.0, ("broadcast", "binomial", 1024): 1.0,
                                  ("reduce_scatter", "ring", 64): 5.0})
    _raw(b / "shm-p2-raw.jsonl", {("allreduce", "ring", 1024): 1.1, ("allgather", "recdbl", 4096): 2.4,
                                  ("allreduce", "native", 1024): 9.0, ("broadcast", "binomial", 1024): 9.0})
    _raw(a / "shm-p2-validate.jsonl", {("allreduce", "rabenseifner", 2048): 1.4})
    _raw(b / "shm-p2-validate.jsonl", {("allreduce", "rabenseifner", 2048): 1.0})
    _raw(a / "tcp-p4-raw.jsonl", {("allreduce", "ring", 1024): 1.0})
    out = tmp_path / "launches"
    proc = subprocess.run([sys.executable, str(MODEL_SCRIPT), "--launches", str(a), str(b), "-o", str(out)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout
    md = out.with_suffix(".md").read_text()
    assert "| shared memory | 2 | 3 | 20.0 % | 40.0 % | 40.0 % |" in md, md
    assert "TCP" not in md, md
    # One directory, or none in common, is refused.
    proc = subprocess.run([sys.executable, str(MODEL_SCRIPT), "--launches", str(a)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120)
    assert proc.returncode == 2 and "two or more campaign directories" in proc.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = subprocess.run([sys.executable, str(MODEL_SCRIPT), "--launches", str(a), str(empty)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert proc.returncode != 0 and "no point measured in two of" in proc.stdout


def _gzip(path):
    """path as path.gz (gzip-compressed, as bench/results keeps its campaigns' files), the plain file gone."""
    with gzip.open(f"{path}.gz", "wt") as f:
        f.write(path.read_text())
    path.unlink()


def _model_report(camp, out):
    proc = subprocess.run([sys.executable, str(MODEL_SCRIPT), str(camp), "-o", str(out)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout
    return out.with_suffix(".md").read_text().replace(str(camp), "CAMP")


def test_model_campaign_gz(tmp_path):
    # A campaign whose .jsonl are gzip-compressed gives the report of the plain files; where both are
    # there, the plain file is read (a refit writes one beside the compressed record).
    fit = {"format": "sparcoll-tuning", "version": 1, "source": {"sizes": [1024, 67108864, 4]}, "models": [],
           "rules": []}
    sites = {("allreduce", 2048, 0): {"ring": (1.0, 1.1), "recdbl": (2.0, 1.4)}}
    refit = {("allreduce", 2048, 0): {"ring": (1.0, 1.5), "recdbl": (2.0, 1.4)}}
    reports = {}
    for name, rows in (("plain", sites), ("refit", refit), ("packed", sites)):
        camp = tmp_path / name / "camp"   # one name: the report names its campaign
        camp.mkdir(parents=True)
        (camp / "shm-p2.json").write_text(json.dumps(fit))
        (camp / "shm-p2-check.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _validate_rows(2, rows)))
        if name == "packed":
            _gzip(camp / "shm-p2-check.jsonl")
        reports[name] = _model_report(camp, tmp_path / name / "report")
    assert reports["packed"] == reports["plain"] != reports["refit"]
    camp = tmp_path / "packed" / "camp"
    (camp / "shm-p2-check.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _validate_rows(2, refit)))
    assert _model_report(camp, tmp_path / "packed" / "both") == reports["refit"]
    # --launches reads compressed tuning and validation runs too.
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    _raw(a / "shm-p2-raw.jsonl", {("allreduce", "ring", 1024): 1.0})
    _raw(b / "shm-p2-raw.jsonl", {("allreduce", "ring", 1024): 1.1})
    _gzip(b / "shm-p2-raw.jsonl")
    proc = subprocess.run([sys.executable, str(MODEL_SCRIPT), "--launches", str(a), str(b)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120)
    assert proc.returncode == 0 and "| shared memory | 2 | 1 | 10.0 % | 10.0 % | 10.0 % |" in proc.stdout, proc.stdout
