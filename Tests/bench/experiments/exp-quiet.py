# SPDX-License-Identifier: Apache-2.0
"""Figures of Tests/bench/experiments/06-exp-quiet.sh and 07-exp-quiet-final.sh out of a
serial log: per series `held` (deadline -> subscriber read) and command start (deadline ->
the command's first instruction, paired by ACTIOND_PRESS_TIME); for a series with `alt` in
its tag, split into the deadlines with the quiet (even millisecond) and without; the trial
build's deadline-turn stamps; the C reactor series.

    python3 Tests/bench/experiments/exp-quiet.py OUT_DIR/serial.log [SCENARIO]
"""
import os, sys, re, importlib.util
spec = importlib.util.spec_from_file_location("bench", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench.py"))
bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench)
files = bench.serial_files(sys.argv[1])
sc = next(v for k, v in files.items() if (sys.argv[2] if len(sys.argv) > 2 else "exp") in k)  # optional: the scenario
hold_ns = 100_000_000
def pct(v, p):
    return bench.percentile(sorted(v), p) / 1e6 if v else float("nan")
def row(name, v):
    if not v: return f"{name:34s} n=0"
    return f"{name:34s} n={len(v):4d} p50={pct(v,50):7.2f} p95={pct(v,95):7.2f} p99={pct(v,99):7.2f} max={max(v)/1e6:7.2f}"
tags = sorted({m.group(1) for n in sc for m in [re.match(r"([ia]-.*)-events\.log$", n)] if m and "-r-" not in m.group(1)})
for tag in tags:
    ev = [l.split() for l in sc[f"{tag}-events.log"]]
    pressed = {int(e[1]): int(e[2]) * 1000 for e in ev if e[0] == "pressed"}   # press us -> deadline ns
    held = {int(e[1]) * 1000: int(e[3]) for e in ev if e[0] == "held"}        # deadline ns -> recv
    cmd = {}
    for l in sc.get(f"{tag}-rec.log", []):
        p = l.split()
        if len(p) >= 3 and p[0] == "actiond" and int(p[2]) in pressed:
            cmd[pressed[int(p[2])]] = int(p[1]) - pressed[int(p[2])]
    alt = "alt" in tag
    for name, keep in ([("quiet", 0), ("plain", 1)] if alt else [("", None)]):
        ds = [d for d in pressed.values() if keep is None or (d // 1_000_000) % 2 == keep]
        h = [held[d] - d for d in ds if d in held]
        c = [cmd[d] for d in ds if d in cmd]
        print(row(f"{tag} {name} held", h))
        print(row(f"{tag} {name} command", c), f"missed {len(ds) - len(c)}")
    ab = sc.get(f"{tag}-abuse.log")
    if ab: print("   ", " ".join(ab))
    stamps = [list(map(int, l.split()[1:])) for l in sc.get(f"{tag}-daemon.log", []) if l.startswith("stamp ")]
    if stamps:
        names = ["wake", "handler", "drained", "announce", "runIntent", "spawn0", "spawn1", "runRet", "end"]
        for keep in (0, 1):
            st = [s for s in stamps if (s[0] // 1_000_000) % 2 == keep]
            print(f"   stamps, {'quiet' if keep == 0 else 'plain'} (n={len(st)})")
            for i, n in enumerate(names, start=1):
                v = [s[i] - s[0] for s in st if s[i]]
                d = [s[i] - s[i - 1] for s in st if s[i] and s[i - 1]] if i > 1 else []
                print(f"    {n:10s} from D: p50 {pct(v,50):7.3f} p99 {pct(v,99):8.3f} | step p50 {pct(d,50):6.3f} p99 {pct(d,99):7.3f}")
for name in sorted(n for n in sc if re.match(r".*r-subnb.*\.log$", n) and not n.endswith(("-rec.log", "-events.log", "-down.log"))):
    tag = name[:-4]; s = {}
    bench.reactor_series(s, sc, tag, "", hold_ns)
    print(row(tag + " timer", s.get("Timer", []))); print(row(tag + " held", s.get("Held", []))); print(row(tag + " command", s.get("Command", [])))
if "spawn-t0.log" in sc:
    print(row("spawn floor", bench.paired(bench.values(sc["spawn-t0.log"], "spawn"), bench.values(sc["spawn-rec.log"], "spawn"), "spawn", early=0)))
