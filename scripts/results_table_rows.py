"""The rows of README's results table, in table order: one extractor per row, registered with
@row(<files under bench/results/>) (see scripts/results-table)."""
import collections
import re
import statistics
from decimal import ROUND_FLOOR, Decimal

from results_table_lib import json_records, plain, pow2, rnd, row, span

GPU = "one H100 80GB HBM3 (CUDA 13.0), quiet (one process on the GPU)"
CPU4 = "2-core VM, 4 MPI ranks oversubscribed (Open MPI 4.1, shared memory)"


@row("gpu-h100-2026-11-25/kernels.log")
def gpu_reduce_kernel(log):
    size = log.find(r"^# reduce kernel: (\d+ MiB) per operand", "the reduce kernel's operand size")[1]
    copy = log.find(r"^# reduce kernel:.*copy \(cudaMemcpy D2D.*\) ([\d.]+) GB/s", "the copy bandwidth")[1]
    frac = {}  # dtype -> op -> [fraction of copy, one per place]
    for r in log.table(r"dtype\s+op\s+place\s", "reduce kernel table"):
        frac.setdefault(r["dtype"], {}).setdefault(r["op"], []).append(log.num(r["of_copy"], "of_copy"))
    half = frac.pop("half", None) or log.fail("'half' rows in the reduce kernel table")
    if set(half) != {"sum", "max"}:
        log.fail("float16 ('half') rows for the ops sum and max")
    rest = [v for ops in frac.values() for vs in ops.values() for v in vs]
    return (f"GPU: reduce kernel `out = a op b`, {size} operands, "
            f"fraction of a device-to-device copy ({rnd(log.num(copy, 'copy'))} GB/s)",
            f"{span(rest)} % for {len(frac)} of {len(frac) + 1} dtypes; "
            f"float16 {rnd(min(half['sum']))} % (sum) / {rnd(min(half['max']))} % (max)",
            f"{GPU}; the copy measured in the same run")


@row("gpu-h100-2026-11-25/dsop.log")
def gpu_outer_product(log):
    n, k = 8192, 1   # the first run's line for this size (the N sweep)
    pat = r"^device {}\s+n={n}\s+m={n}\s+K={k}\s.*\(\s*([\d.]+) % of memset's"
    custom = log.find(pat.format("custom", n=n, k=k), f"the custom kernel at n = m = {n}, K = {k}")[1]
    cublas = log.find(pat.format("cublas", n=n, k=k), f"cuBLAS at n = m = {n}, K = {k}")[1]
    return (f"GPU: outer product N = M = {n} float32, fraction of memset (write) bandwidth",
            f"custom kernel {custom} %; cuBLAS sgemm K = {k}: {cublas} %",
            f"{GPU}; the custom kernel is what DSOP runs; memset measured in the same run")


@row("gpu-h100-2026-11-25/topk.log", "gpu-h100-2026-11-25.md")
def gpu_topk(log, report):
    # Runs start with '+  <command>' lines. The first runs every method under the
    # default of that day (the block design), torch.topk beside it; the run after
    # the '--- SPARCOLL_TOPK_KERNEL=split' marker runs the split design (the
    # default since), with its own torch.topk measurement.
    runs = re.split(r"(?m)^\+ ", log.text)
    if len(runs) < 2:
        log.fail("'+  <command>' lines starting each run")
    first = runs[1]
    split = next((r for r, prev in zip(runs[1:], runs[:-1]) if prev.rstrip().endswith("--- SPARCOLL_TOPK_KERNEL=split")),
                 None) or log.fail("a run after the '--- SPARCOLL_TOPK_KERNEL=split' marker")
    rows = log.table(r"where\s+method\s", "first run's top-k table", first)
    srows = log.table(r"where\s+method\s", "split run's top-k table", split)
    bv, ex, th = (log.pick(rows, "first run's top-k table", method=m, output=o) for m, o in
                  (("approx", "variable"), ("exact", "-"), ("threshold", "-")))
    av, fx = (log.pick(srows, "split run's top-k table", method="approx", output=o) for o in ("variable", "fixed"))
    n, k = (int(log.num(av[c], c)) for c in ("N", "k"))
    torch = log.num(log.find(rf"^# torch\.topk\(\|x\|\) N={n} k={k}: ([\d.]+) us",
                             "torch.topk's time in the split run", split)[1], "torch.topk")
    time = lambda r: log.num(r["time_us"], "time_us")
    x = lambda r: str(log.num(r["x_torch"], "x_torch"))   # against the torch.topk of its own run
    bound = lambda r: str(log.num(r["%bound"], "%bound"))   # as printed
    tgt = report.find(r"^\| approx top-k.*≥ (\d+)x `torch\.topk`.*≥ (\d+) % of the HBM bound",
                      "the approx top-k row of the kernel targets")
    met = log.num(av["x_torch"], "x_torch") >= int(tgt[1]) and log.num(av["%bound"], "%bound") >= int(tgt[2])
    return (f"GPU: approx top-k N = {pow2(n)} float32, k = N/{rnd(Decimal(n) / k)}, "
            f"vs `torch.topk` of the magnitudes ({rnd(torch)} µs)",
            f"split design (default) {rnd(time(av))} µs = {x(av)}x torch, {bound(av)} % of the HBM bound "
            f"(fixed output: {x(fx)}x, {bound(fx)} %); block design {x(bv)}x; exact {x(ex)}x, "
            f"threshold {x(th)}x. Target ({tgt[1]}x, {tgt[2]} %) **{'met' if met else 'not met'}**",
            f"{GPU}; each method as chosen, torch.topk in the same run")


@row("gpu-h100-2026-11-25/kernels.log")
def gpu_sparse_ops(log):
    n = int(log.find(r"^# sparse ops: (\d+) entries", "the sparse ops' entry count")[1])
    rows = log.table(r"op\s+time_us\s", "sparse ops table")
    t = {}
    for name in ("cub radix sort", "sort+coalesce", "merge-sum", "densify"):
        r = next((r for r in rows if r["op"].startswith(name)), None) or log.fail(f"a sparse ops row '{name}...'")
        t[name] = log.num(r["time_us"], f"{name} time_us")
    vs = lambda name: rnd(t[name] / t["cub radix sort"], 2)
    return (f"GPU: sparse sort + coalesce of {pow2(n)} pairs vs a CUB radix sort of the same pairs",
            f"{vs('sort+coalesce')}x the sort's time (merge-sum {vs('merge-sum')}x, densify {vs('densify')}x)",
            f"{GPU}; the sort measured in the same run")


@row("allreduce-cpu-mpi4-quiet-2026-11-24.txt", "allreduce-cpu-mpi4-quiet-2026-11-24.jsonl")
def cpu_allreduce(log, jsonl):
    size = 64 << 20
    t = {m[1]: (log.num(m[2], "oop(us)"), log.num(m[3], "ip(us)")) for m in log.findall(
        rf"^#\s+{size}\s+float\s+sum\s+(\S+)\s+([\d.]+)\s+([\d.]+)\s", f"summary lines for {size} B")}
    for alg in ("auto", "ring", "rabenseifner", "native"):
        if alg not in t:
            log.fail(f"a summary line for {alg} at {size} B")
    ranks = log.find(r"^# sparcoll AllReduce: transport mpi, (\d+) ranks, host buffers", "the run's header line")[1]
    # Which algorithm auto ran: the forced one with the same traffic (bytes and messages per rank).
    traffic = {}
    for rec in json_records(jsonl):
        if rec.get("size_bytes") == size and rec.get("in_place") is False:
            traffic[rec["algorithm"]] = (rec.get("bytes_sent_per_rank_max"), rec.get("msgs_sent_per_rank_max"))
    picked = [a for a in ("ring", "rabenseifner", "recdbl") if a in traffic and traffic[a] == traffic.get("auto")]
    if len(picked) != 1:
        jsonl.fail(f"one forced algorithm with auto's traffic at {size} B (found {picked or 'none'})")
    ratio = lambda alg, i: rnd(t[alg][i] / t["native"][i], 2)
    best = min(("ring", "rabenseifner"), key=lambda a: t[a][0])
    return (f"allreduce {size >> 20} MiB float, time / native, Open MPI's `MPI_Iallreduce` as sparcoll calls it "
            f"(out-of-place / in-place)",
            f"ring {ratio('ring', 0)} / {ratio('ring', 1)}; Rabenseifner {ratio('rabenseifner', 0)} / "
            f"{ratio('rabenseifner', 1)}; auto (ran {picked[0]}) {ratio('auto', 0)} / {ratio('auto', 1)}",
            f"2-core VM, {ranks} MPI ranks oversubscribed (Open MPI 4.1, shared memory), quiet; each algorithm "
            f"forced (best out-of-place: {best}), and auto; native in the same run, without the mismatch check")


@row("sparse-allreduce-cpu-mpi4-quiet-2026-11-24.txt")
def cpu_sparse_allreduce(log):
    n, density = 1 << 24, Decimal("0.001")
    section = {}
    for part in re.split(r"(?m)^## ", log.text)[1:]:
        section[part.split()[0]] = part   # "dense" (dense output) / "sparse" (sparse output)

    def times(kind):  # density -> algorithm -> time (us), at N
        out = {}
        text = section.get(kind) or log.fail(f"a '## {kind} output' section")
        for m in log.findall(rf"^\s+{n}\s+([\d.]+)\s+(\w+)\s+([\d.]+)\s", f"{kind}-output rows at N = {n}", text):
            out.setdefault(Decimal(m[1]), {})[m[2]] = log.num(m[3], "time(us)")
        for d, algs in out.items():
            if not {"native", "dense", "auto"} <= set(algs) or len(algs) < 4:
                log.fail(f"native, dense, auto and sparse algorithms at density {d} ({kind} output)")
        return out if density in out else log.fail(f"{kind}-output rows at density {density}")

    def best(kind):  # (speedup, algorithm) of the fastest sparse algorithm
        algs = times(kind)[density]
        return max((algs["native"] / t, a) for a, t in algs.items() if a not in ("native", "dense", "auto"))

    def pick(kind):
        algs = times(kind)[density]
        return algs["native"] / algs["auto"]

    auto = min(a["dense"] / a["auto"] for a in times("dense").values())
    return (f"sparse allreduce N = {pow2(n)}, density {plain(density * 100)} %, "
            "speedup over the dense allreduce, native (`MPI_Iallreduce`)",
            f"{rnd(best('dense')[0], 1)}x with a dense output vector, {rnd(best('sparse')[0])}x with a sparse "
            f"result; auto {rnd(pick('dense'), 1)}x / {rnd(pick('sparse'))}x; auto ≥ {rnd(auto, 2, ROUND_FLOOR)}x "
            "of the dense path at every density (dense-output run)",
            f"{CPU4}, quiet; the best sparse algorithm ({' / '.join(dict.fromkeys((best('dense')[1], best('sparse')[1]))) }), "
            "and auto; "
            "native in the same run")


@row("dsop-cpu-mpi4-quiet-2026-11-24.md")
def cpu_dsop(md):
    n = "4000"
    rows = md.table(r"^\| N \| M \| algorithm \|", "DSOP results table", md=True)
    col = "speedup median [95% CI]"
    s = {a: rnd(md.num(md.pick(rows, "DSOP results table", N=n, M=n, algorithm=a)[col].split()[0], col), 1)
         for a in ("g_rabenseifner", "all_scatter", "allgather")}
    auto = next((r for r in rows if r["N"] == n and r["M"] == n and r["algorithm"].startswith("auto (")), None) \
        or md.fail(f"an 'auto (<algorithm>)' row at N = M = {n}")
    ran = auto["algorithm"][len("auto ("):-1]
    return (f"DSOP N = M = {n}, speedup over outer product + native allreduce (`MPI_Iallreduce`)",
            f"g_rabenseifner {s['g_rabenseifner']}x, all_scatter {s['all_scatter']}x, allgather {s['allgather']}x; "
            f"auto (ran {ran}) {rnd(md.num(auto[col].split()[0], col), 1)}x",
            f"{CPU4}, quiet; each algorithm forced, and auto with the built-in constants (no tuning file); "
            "the baseline in the same run")


def mpi_sgd(log, network, where):
    pat = r"^\[{}\] P=(\d+): epoch time sparse ([\d.]+) s, dense ([\d.]+) s"
    lr, svm = (log.find(pat.format(m), f"the {m} summary line") for m in ("logreg", "svm"))
    x = lambda m: rnd(log.num(m[3], "dense") / log.num(m[2], "sparse"), 1)
    if lr[1] != svm[1]:
        log.fail("the same P for logreg and svm")
    return (f"MPI-SGD (P = {lr[1]}){network}, epoch time dense / sparse",
            f"logistic regression {x(lr)}x, linear SVM {x(svm)}x faster sparse",
            f"2-core VM, {lr[1]} MPI ranks oversubscribed{where}; sparse: `sparse_allreduce_sparse` with auto; dense: "
            "allreduce with auto; both in every epoch of the same run")


@row("mpi_sgd_p4.txt")
def cpu_mpi_sgd(log):
    return mpi_sgd(log, "", "")


@row("net1g-2026-11-24/mpi_sgd_p4.txt")
def net1g_mpi_sgd(log):
    return mpi_sgd(log, " on a 1 Gbit/s network", " over TCP shaped to 1 Gbit/s (one shared medium, not a switched "
                   "fabric, no added delay)")


@row("ddp_topk_digits_p4.txt")
def ddp_topk(log):
    acc = lambda name: log.find(rf"^{re.escape(name)}\s+test accuracy ([\d.]+) %", f"the '{name}' line")[1]
    density = log.num(log.find(r"^P=\d+,.* density ([\d.]+):", "the summary line's density")[1], "density")
    return (f"DDP + top-k hook (density {plain(density * 100)} %) vs dense, test accuracy",
            f"{acc('sparcoll top-k')} % vs {acc('sparcoll dense')} %",
            "2-core VM, 4 MPI ranks; digits MLP, the same initial weights and data order for both")


def ddp_runs(log):
    """A ddp_backend_bench log's runs (blocks opened by '# run N: ...'): per run,
    {config: (ms per step, final test accuracy in % or None)}, and the parameter count."""
    runs = []
    for block in re.split(r"^# run \d+:.*$", log.text, flags=re.M)[1:]:
        lines = log.findall(r"^((?:gloo|sparcoll) (?:dense|top-k))\s+([\d.]+) ms/step(?:.*test accuracy ([\d.]+) %)?",
                            "the per-configuration lines", block)
        runs.append({m[1]: (log.num(m[2], "ms/step"), m[3] and log.num(m[3], "accuracy")) for m in lines})
    if not runs:
        log.fail("'# run N: ...' blocks")
    params = log.find(r"^\d+ ranks, ([\d.]+) M parameters", "the summary line")[1]
    return runs, params


def ddp_speedups(log, runs, base="gloo dense"):
    """'<config> Ax / Bx' over runs: base's step time over the config's."""
    def cell(config):
        return " / ".join(f"{rnd(r[base][0] / r[config][0], 2)}x" for r in runs)
    for r in runs:
        if base not in r:
            log.fail(f"a '{base}' line in every run")
    return {c: cell(c) for c in runs[0] if c != base}


@row("ddp-backend-cpu-mpi4-shm-2026-12-02.txt")
def ddp_backend_shm(log):
    runs, params = ddp_runs(log)
    x = ddp_speedups(log, runs)
    ms = lambda c: " / ".join(rnd(r[c][0]) for r in runs)
    return (f"DDP step, {params} M-parameter MLP, speedup over backend gloo (dense) on shared memory",
            f"backend sparcoll dense {x['sparcoll dense']} ({ms('sparcoll dense')} vs {ms('gloo dense')} ms); "
            f"top-k hook (1 %) on sparcoll {x['sparcoll top-k']}, on gloo {x['gloo top-k']}",
            f"{CPU4}, quiet; {len(runs)} runs, the configurations in opposite orders; median step of the slowest rank")


@row("ddp-backend-cpu-mpi4-1gbit-2026-11-24.txt")
def ddp_backend_1gbit(log):
    runs, params = ddp_runs(log)
    x = ddp_speedups(log, runs)
    s = lambda c: " / ".join(rnd(r[c][0] / 1000, 2) for r in runs)
    return (f"DDP step on a 1 Gbit/s network, {params} M-parameter MLP, speedup over backend gloo (dense)",
            f"top-k hook (1 %) on backend sparcoll **{x['sparcoll top-k']}** ({s('sparcoll top-k')} vs "
            f"{s('gloo dense')} s), on gloo {x['gloo top-k']}; backend sparcoll dense {x['sparcoll dense']}",
            "2-core VM, 4 MPI ranks; Open MPI and gloo over TCP on a loopback shaped to 1 Gbit/s (tc tbf): one "
            "shared medium, not a switched fabric, no added delay; median step of the slowest rank")


@row("ddp-backend-digits-cpu-mpi4-2026-12-02.txt")
def ddp_backend_digits(log):
    runs, params = ddp_runs(log)
    if len(runs) != 3:
        log.fail("3 runs (no momentum; momentum in SGD; momentum in the hook)")

    def acc(r, c):
        return r[c][1] if c in r and r[c][1] is not None else log.fail(f"a test accuracy on the '{c}' line")

    def gap(r):
        g = acc(r, "sparcoll top-k") - acc(r, "gloo dense")
        return f"{'+' if g >= 0 else '−'}{abs(g)} points"
    epochs = log.find(r"^# run 1:.*?(\d+) epochs", "the epoch count of run 1")[1]
    return (f"DDP on digits, {params} M-parameter MLP, {epochs} epochs: test accuracy, top-k hook (1 %) vs gloo dense",
            f"{acc(runs[0], 'sparcoll top-k')} % vs {acc(runs[0], 'gloo dense')} % ({gap(runs[0])}); with "
            f"momentum 0.9: {gap(runs[1])}, moved into the hook {gap(runs[2])}",
            "2-core VM, 4 MPI ranks; the same initial weights and data order; SGD lr 0.1 without momentum, "
            "or lr 0.02 with momentum (runs 2, 3 in the file)")


@row("topk-cpu-2026-12-02-speed.txt")
def cpu_topk(log):
    # Four launches, torch.topk on 2 and 1 threads alternately: ranges over them.
    launches = re.split(r"^# .*launch with torch\.topk on \d+ thread", log.text, flags=re.M)[1:]
    if len(launches) < 2:
        log.fail("at least two launches ('# ... launch with torch.topk on T thread(s)')")
    threads = sorted({m[1] for m in log.findall(r"^# torch [^,]+, (\d+) CPU threads", "torch's thread counts")})
    got = collections.defaultdict(list)  # (input, method, k/N) -> [(ms, x_torch)]
    for text in launches:
        for r in log.table(r"where\s+input\s+method\s", "top-k table", text):
            frac = Decimal(r["k"]) / Decimal(r["N"])
            if r["method"] in ("bracket", "exact", "threshold") and r["x_torch"] != "-":
                got[(r["input"], r["method"], "1000" if frac < Decimal("0.005") else "100")].append(
                    (log.num(r["time_us"], "time_us") / 1000, log.num(r["x_torch"], "x_torch")))
    n = int(log.num(log.table(r"where\s+input\s+method\s", "top-k table")[0]["N"], "N"))

    def cell(inp, m, k):
        v = got.get((inp, m, k)) or log.fail(f"{m} rows on {inp} at k = N/{k}")
        return f"{span([x for _, x in v], 1)}x ({span([t for t, _ in v], 1)} ms)"
    return (f"top-k on the CPU, N = {pow2(n)} float32, normal input, speedup over `torch.topk` of the magnitudes "
            f"(torch on {' and '.join(threads)} threads; sparcoll 1 thread; target: the default method ≥ 5x at k = N/1000)",
            f"k = N/1000: bracket (default) **{cell('normal', 'bracket', '1000')}**, exact {cell('normal', 'exact', '1000')}, "
            f"threshold {cell('normal', 'threshold', '1000')}: met; k = N/100: bracket {cell('normal', 'bracket', '100')}; "
            f"99 % zeros at N/100: bracket {cell('sparse99', 'bracket', '100')}, exact {cell('sparse99', 'exact', '100')}",
            f"2-core VM, quiet; {len(launches)} launches (the range over them); torch.topk in the same run on the same data")


@row("topk-cpu-2026-12-02-quality.jsonl")
def topk_quality(log):
    recs = json_records(log)
    inputs = sorted({r["input"] for r in recs})
    by = collections.defaultdict(list)
    for r in recs:
        kf = "1000" if r["k"] / r["n"] < 0.005 else "100"
        if r["output"] in ("-", "variable"):
            by[(r["method"], kf)].append(r)
    pct = lambda v: Decimal(str(v)) * 100

    def rng(m, kf):
        rs = by.get((m, kf)) or log.fail(f"{m} records at k = N/{kf}")
        normal = next((r for r in rs if r["input"] == "normal"), None) or log.fail(f"{m} on normal at N/{kf}")
        return span([pct(r["energy"]) for r in rs], 1), rnd(pct(normal["energy"]), 1)
    exact_like = all(r["energy"] >= 1 - 1e-9 and r["recall"] == 1 for m in ("bracket", "exact")
                     for kf in ("1000", "100") for r in by[(m, kf)])
    if not exact_like:
        log.fail("bracket and exact at 100 % energy and recall on every input")
    th3, th2 = rng("threshold", "1000"), rng("threshold", "100")
    ap3, ap2 = rng("approx", "1000"), rng("approx", "100")
    return ("top-k quality: share of exact top-k's sum of squares sent, on normal, Laplace, Student-t3, 99 % zeros "
            "(N = 2^22) and 8 real gradients (an MLP and a CNN in TopK SGD); target: the default ≥ 95 % on every input",
            f"bracket (default) and exact **100 %** on all {len(inputs)} inputs at k = N/1000 and N/100 (recall 100 %): "
            f"met; threshold {th3[0]} % / {th2[0]} %; approx (derived bucket) {ap3[0]} % / {ap2[0]} % "
            f"(normal {ap3[1]} % / {ap2[1]} %)",
            "the CPU (its selection is the GPU's bit for bit); 5 calls per point (steps 1–5), averaged")


# auto from the sweeps of auto and mpi alone, five launches per point (the
# median over launches of each launch's ratio: one launch's spread at small
# blocks is about 5 %): 100 repetitions at 8 B..1 KiB, 1 s repetitions above
# (a 4 MiB block gets 15 calls, not 3); combining from the sweep of every
# algorithm.
@row("neighbor-cpu-mpi-2026-11-29-launches.jsonl.gz", "neighbor-cpu-mpi-2026-11-29-launches-large.jsonl.gz",
     "neighbor-cpu-mpi-2026-11-29-recorder.jsonl.gz", "neighbor-tcp-combining-2026-11-25.jsonl.gz",
     "neighbor-overhead-2026-11-29/tcp-p8-auto.jsonl.gz", "neighbor-overhead-2026-11-29/tcp-p16-auto.jsonl.gz",
     "neighbor-overhead-2026-11-29/tcp-launches.jsonl.gz")
def cpu_neighbor(launched, automp, shm, tcp, tcp8, tcp16, relaunch):
    auto_recs, shm_recs, tcp_recs = json_records(automp), json_records(shm), json_records(tcp)
    launched_recs = json_records(launched)

    def ratios(src, recs, algo, lo, hi, per_point=False):
        """Every run's ratio at lo..hi B (one node); per_point: one per (P, graph, size), the
        median over the launches that measured it."""
        per = collections.defaultdict(list)
        for r in recs:
            if (r.get("algorithm") == algo and r.get("ranks_per_node") == 0 and lo <= r.get("size_bytes", -1) <= hi
                    and "time_ratio_to_mpi" in r):
                key = (r.get("nranks"), r.get("topo"), r["size_bytes"]) if per_point else len(per)
                per[key].append(src.num(r["time_ratio_to_mpi"], "time_ratio_to_mpi"))
        return [statistics.median(v) for v in per.values()] or \
            src.fail(f"{algo} points with a time ratio to mpi at {lo}..{hi} B (one node)")

    KiB, MiB = 1 << 10, 1 << 20
    bands = [("8 B–1 KiB", 0, KiB), ("2–64 KiB", 2 * KiB, 64 * KiB), ("128–512 KiB", 128 * KiB, 512 * KiB),
             ("1–4 MiB", MiB, 4 * MiB)]
    autos = [(name, ratios(launched, launched_recs, "auto", lo, hi, True) if hi <= KiB else
              ratios(automp, auto_recs, "auto", lo, hi, True)) for name, lo, hi in bands]
    auto = "; ".join(f"{rnd(statistics.median(v), 2)} at {name}" for name, v in autos)
    within = sum(x <= 1.05 for _, v in autos for x in v)
    total = sum(len(v) for _, v in autos)
    comb = ratios(shm, shm_recs, "combining", 0, KiB)
    comb_tcp = ratios(tcp, tcp_recs, "combining", 0, KiB)

    def launch_counts(src, recs, topos=None):
        """Per (P, graph): (launches whose combining is <= 1/1.3 of MPI's time at every size of
        8 B..1 KiB, launches, naive's messages over combining's). A file may hold several launches
        of a graph: a size seen again starts the next launch."""
        runs, seen = [], None
        for r in recs:
            if r.get("algorithm") != "combining" or r.get("size_bytes", KiB + 1) > KiB:
                continue
            key = (r.get("nranks"), r.get("topo"))
            if topos is not None and key[1] not in topos:
                continue
            if not runs or runs[-1][0] != key or r["size_bytes"] in seen:
                runs.append((key, [], []))
                seen = set()
            seen.add(r["size_bytes"])
            runs[-1][1].append(src.num(r["time_ratio_to_mpi"], "time_ratio_to_mpi"))
            runs[-1][2].append(src.num(r["msgs_naive_over_this"], "msgs_naive_over_this"))
        best = {}
        for key, v, msgs in runs:
            n, m, _ = best.get(key, (0, 0, 0))
            best[key] = (n + (max(v) <= 1 / 1.3), m + 1, min(msgs))
        return best

    def met_text(best):
        return "; ".join(f"{t} at P = {P} ({rnd(msgs, 2)}× fewer messages than naive) in {n} of {m} launches"
                         for (P, t), (n, m, msgs) in sorted(best.items()) if n)

    met25 = met_text(launch_counts(tcp, tcp_recs))
    # 11-29, the message overhead measured: the sweeps' densest graphs (those relaunched) and the
    # relaunches. The target holds on a dense graph (>= 1.5x fewer messages) met in every launch.
    relaunched = json_records(relaunch)
    dense = {r.get("topo") for r in relaunched}
    best29 = {}
    for src, recs in ((tcp8, json_records(tcp8)), (tcp16, json_records(tcp16)), (relaunch, relaunched)):
        for key, (n, m, msgs) in launch_counts(src, recs, dense).items():
            a, b, _ = best29.get(key, (0, 0, 0))
            best29[key] = (a + n, b + m, msgs)
    met29 = met_text(best29) or relaunch.fail("a dense graph's combining at <= 1/1.3 of MPI's time in some launch")
    comb_met = any(n == m and msgs >= Decimal("1.5") for n, m, msgs in best29.values())
    ranks = sorted({r.get("nranks") for r in shm_recs})
    graphs = len({r.get("topo") for r in shm_recs})
    nlaunch = len({r.get("launch") for r in launched_recs})
    return (f"neighbour allgather on {graphs} graphs (Moore, Erdős–Rényi), time / `MPI_Neighbor_allgather` "
            f"called directly (targets: auto ≤ 1.05 at 8 B–4 MiB; on a graph with dense common "
            f"neighbourhoods, combining ≥ 1.5× fewer messages than naive and ≤ 1/1.3 at every block of 8 B–1 KiB)",
            f"auto (median over graphs and P; each point the median of {nlaunch} launches) {auto}; "
            f"{within} of {total} points ≤ 1.05: "
            f"{'met' if within == total else '**not met**'}; "
            f"combining over TCP, with the message overhead measured (11-29), ≤ 1/1.3 at every block: {met29}: "
            f"{'met' if comb_met else '**not met**'} (11-25, before: {met25 or 'none'}); "
            f"combining at ≤ 1 KiB on shared memory {rnd(min(comb), 2)}–{rnd(max(comb), 2)} over all graphs, "
            f"over TCP {rnd(min(comb_tcp), 2)}–{rnd(max(comb_tcp), 2)} on the dense graphs (11-25)",
            f"2-core VM, {' and '.join(map(str, ranks))} MPI ranks oversubscribed (Open MPI 4.1, shared memory; "
            f"combining also over TCP on the loopback with sparcoll's queues off, so both libraries' messages "
            f"go over TCP: one host, not a network), quiet; `MPI_Neighbor_allgather` in the same run, ratios "
            f"paired by repetition")
