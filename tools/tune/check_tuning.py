#!/usr/bin/env python3
"""Checks a tuning file written by sparcoll-tune against schema v1 (README,
"Cost model"), independently of the C++ that wrote it: the keys, the version,
the types, finite numbers where numbers belong, and the run's facts.

    check_tuning.py FILE --ranks P --transport local [--raw POINTS.jsonl]
                    [--step-bands] [--min-bands N] [--overhead]

Exit status 0 when the file is well formed, 1 with one line per problem.
"""
import argparse
import json
import math
import re
import sys

COLLECTIVES = {
    "allreduce": {"auto", "ring", "rabenseifner", "recdbl", "native"},
    "reduce_scatter": {"auto", "ring", "rabenseifner", "native"},
    "allgather": {"auto", "ring", "recdbl", "native"},
    "sparse_allreduce": {"auto", "ssar_recdbl", "ssar_split_allgather", "dsar_split_allgather",
                         "dsar_early_switch", "dense"},
    "dsop": {"auto", "allgather", "allreduce", "allreduce_ring", "g_rabenseifner", "all_scatter"},
    "broadcast": {"auto", "binomial", "scatter_allgather", "native"},
}


def finite(x, lo=0.0, strict=False):
    return (isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
            and (x > lo if strict else x >= lo))


def check(doc, args):
    bad = []

    def need(cond, what):
        if not cond:
            bad.append(what)

    need(list(doc)[:2] == ["format", "version"], "format and version must come first")
    need(set(doc) == {"format", "version", "created", "source", "models", "rules"}, f"top-level keys {sorted(doc)}")
    need(doc.get("format") == "sparcoll-tuning", "format")
    need(doc.get("version") == 1 and isinstance(doc.get("version"), int), "version must be the integer 1")
    need(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", str(doc.get("created"))), "created: ISO UTC")
    src = doc.get("source", {})
    need(src.get("tool") == "sparcoll-tune", "source.tool")
    need(src.get("ranks") == args.ranks, f"source.ranks {src.get('ranks')} != {args.ranks}")
    need(isinstance(src.get("machines"), int) and src["machines"] >= 1, "source.machines")
    need(src.get("transport") == args.transport, "source.transport")
    need(src.get("memory") in ("host", "device"), "source.memory")
    need(isinstance(src.get("quick"), bool), "source.quick")
    models = doc.get("models", [])
    need(isinstance(models, list) and len(models) >= 1, "models: at least one")
    levels = {}  # level -> the bytes ranges of its entries, in order
    overheads = {}  # level -> each entry's message_overhead (None: not given)
    for i, m in enumerate(models):
        w = f"models[{i}]"
        keys = {"transport", "memory", "level", "alpha", "beta", "gamma", "beta_shared", "fit"}
        given = set(m) - {"message_overhead"}
        need(given in (keys, keys | {"bytes"}, keys | {"bytes", "measured"}), f"{w}: keys {sorted(m)}")
        # The neighbourhood probe's message overhead: seconds, on every band of
        # the level it was fitted for, with its fit's facts.
        if "message_overhead" in m:
            o = m["message_overhead"]
            need(finite(o) and o < 1, f"{w}.message_overhead: {o} (seconds >= 0, below 1)")
            mo = m.get("fit", {}).get("message_overhead", {})
            need(isinstance(mo.get("block_sizes"), int) and mo["block_sizes"] >= 1
                 and finite(mo.get("messages_saved"), strict=True), f"{w}.fit.message_overhead: {mo}")
        overheads.setdefault(m.get("level"), []).append(m.get("message_overhead"))
        need(m.get("transport") == args.transport and m.get("memory") == src.get("memory"), f"{w}: transport/memory")
        need(m.get("level") in ("intra", "inter"), f"{w}: level")
        b = m.get("bytes")
        need(b is None or (isinstance(b, list) and len(b) == 2 and all(isinstance(x, int) and x >= 0 for x in b)
                           and b[0] <= b[1]), f"{w}.bytes")
        # A band names the sizes its fit measured, within its bytes.
        ms = m.get("measured")
        need(b is not None or ms is None, f"{w}: measured without bytes")
        need(ms is None if args.step_bands or b is None else ms is not None,
             f"{w}: measured {'with --step-bands' if args.step_bands else 'missing from a band'}")
        need(ms is None or (isinstance(ms, list) and len(ms) == 2 and all(isinstance(x, int) for x in ms)
                            and b[0] <= ms[0] <= ms[1] <= b[1]), f"{w}.measured")
        levels.setdefault(m.get("level"), []).append(b)
        # Every parameter >= 0, as the library reads them: the non-negative fit
        # holds one at 0 where the points cannot tell it from noise (beta or
        # gamma on a sweep of small sizes; alpha on a loaded machine, or in a
        # band of large sizes).
        need(all(finite(m.get(k)) for k in ("alpha", "beta", "gamma", "beta_shared")),
             f"{w}: alpha, beta, gamma, beta_shared >= 0")
        # Seconds and seconds per byte: a unit slip (microseconds or
        # nanoseconds written as seconds) lands orders of magnitude above these
        # bounds, a fit on a loaded machine (1 ms, 30 ns/B) well below them.
        need(m.get("alpha", 1) < 1 and all(m.get(k, 1) < 1e-4 for k in ("beta", "gamma", "beta_shared")),
             f"{w}: magnitudes (alpha {m.get('alpha')} s, beta {m.get('beta')}, gamma {m.get('gamma')}, "
             f"beta_shared {m.get('beta_shared')} s/B)")
        fit = m.get("fit", {})
        need({"r2", "median_abs_rel_error", "points", "dropped"} <= set(fit), f"{w}.fit: keys {sorted(fit)}")
        need(finite(fit.get("r2"), lo=-math.inf) and fit.get("r2", 2) <= 1, f"{w}.fit.r2")
        need(finite(fit.get("median_abs_rel_error")), f"{w}.fit.median_abs_rel_error")
        need(isinstance(fit.get("points"), int) and fit["points"] > 0, f"{w}.fit.points")
        need(isinstance(fit.get("dropped"), int) and fit["dropped"] >= 0, f"{w}.fit.dropped")
        pp = fit.get("pingpong")
        if pp is not None:
            need(set(pp) == {"alpha", "beta", "r2"} and finite(pp["alpha"]) and finite(pp["beta"]),
                 f"{w}.fit.pingpong")
    need(set(levels) == ({"intra"} if src.get("machines") == 1 else set(levels)), "one machine: the intra level only")
    # A level is one entry without bytes, or bands that tile every size: from
    # 0, each starting where the last ended, up to 2^64 - 1.
    for level, bands in levels.items():
        if len(bands) == 1 and bands[0] is None:
            continue
        ok = all(isinstance(b, list) and len(b) == 2 for b in bands) and len(bands) >= 2
        ok = ok and bands[0][0] == 0 and bands[-1][1] == 2**64 - 1
        ok = ok and all(bands[i + 1][0] == bands[i][1] + 1 for i in range(len(bands) - 1))
        need(ok, f"{level}: bands {bands} do not tile 0 .. 2^64 - 1 in order")
    for level, bands in levels.items():
        need(len(bands) >= args.min_bands, f"{level}: {len(bands)} band(s), expected at least {args.min_bands}")
    for level, os in overheads.items():
        need(len(set(os)) == 1, f"{level}: message_overhead differs between bands: {os}")
    if args.overhead:
        need(any(o is not None for os in overheads.values() for o in os),
             "no message_overhead (the neighbourhood probe's fit)")
    for i, r in enumerate(doc.get("rules", [])):
        w = f"rules[{i}]"
        coll = r.get("collective")
        keys = {"collective", "transport", "memory", "ranks", "bytes", "algorithm"}
        need(set(r) == keys | ({"density"} if coll == "sparse_allreduce" else set()), f"{w}: keys {sorted(r)}")
        need(coll in COLLECTIVES and r.get("algorithm") in COLLECTIVES.get(coll, ()), f"{w}: collective/algorithm")
        need(r.get("ranks") == [args.ranks, args.ranks], f"{w}.ranks")
        b = r.get("bytes", [])
        need(len(b) == 2 and all(isinstance(x, int) and x >= 0 for x in b) and b[0] <= b[1], f"{w}.bytes")
        if coll == "sparse_allreduce":
            d = r.get("density", [])
            need(len(d) == 2 and all(finite(x) for x in d) and d[0] <= d[1] <= 1, f"{w}.density")
    return bad


def check_raw(path, dense_only=False, probe=False):
    """Every point well formed, and every algorithm of every collective (auto
    aside) measured: a collective dropped from the sweep fails here. The
    neighbourhood probe's points carry the model's six terms; with probe, its
    naive and combining points must be there."""
    bad, n, seen = [], 0, set()
    with open(path) as f:
        for i, line in enumerate(f):
            p = json.loads(line)
            if i == 0:  # the run's facts, for --points
                src = p.get("source", {})
                if not (isinstance(src.get("ranks"), int) and src.get("transport") and src.get("memory")):
                    bad.append(f"{path}:1: expected the {{\"source\": ...}} line, got {line.strip()}")
                continue
            n += 1
            seen.add((p.get("collective"), p.get("algorithm")))
            if not (p.get("collective") and p.get("algorithm") and finite(p.get("seconds"), strict=True)
                    and finite(p.get("bytes"), strict=True)):
                bad.append(f"{path}:{i + 1}: {line.strip()}")
            if p.get("collective") == "neighbor_allgather":
                t = p.get("terms")
                if not (p.get("algorithm") in ("naive", "combining") and isinstance(t, list) and len(t) == 8
                        and all(finite(x) for x in t)):
                    bad.append(f"{path}:{i + 1}: a probe point needs naive or combining and 8 terms >= 0")
    want = {(c, a) for c, algos in COLLECTIVES.items() for a in algos if a != "auto"}
    if dense_only:
        want = {(c, a) for c, a in want if c not in ("sparse_allreduce", "dsop")}
    if probe:
        want |= {("neighbor_allgather", "naive"), ("neighbor_allgather", "combining")}
    missing = sorted(want - seen)
    if n and missing:
        bad.append(f"{path}: not measured: {', '.join(f'{c} {a}' for c, a in missing)}")
    return bad + ([] if n else [f"{path}: no points"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--transport", required=True)
    ap.add_argument("--raw")
    ap.add_argument("--step-bands", action="store_true",
                    help="the file was written with --step-bands: no band names its measured sizes")
    ap.add_argument("--min-bands", type=int, default=1,
                    help="each level has at least this many entries (bands)")
    ap.add_argument("--overhead", action="store_true",
                    help="the neighbourhood probe ran: the file has a message_overhead (and --raw the probe's points)")
    args = ap.parse_args()
    with open(args.file) as f:
        doc = json.load(f)
    dense_only = bool(doc.get("source", {}).get("dense_only"))
    bad = check(doc, args) + (check_raw(args.raw, dense_only, args.overhead) if args.raw else [])
    for b in bad:
        print(f"{args.file}: {b}")
    if not bad:
        print(f"{args.file}: ok ({len(doc['models'])} models, {len(doc['rules'])} rules)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
