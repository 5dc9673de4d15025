"""bench/plot_ring_vs_hd.py on synthetic all_reduce_perf rows: the crossover it
reports, the model's errors (the library's model over a tuning file of the
repository), and its refusal of files without ring/rabenseifner rows."""

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
