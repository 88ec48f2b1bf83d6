# SPDX-License-Identifier: Apache-2.0
"""Figures of Tests/bench/experiments/16-exp-feedback.sh out of a serial log: per actiond
series `held` (deadline -> subscriber read), command start (deadline -> the command's first
instruction, paired by ACTIOND_PRESS_TIME) and the tick (deadline -> the kernel's delivery of
the sysfs LED's change to its device); the C reactor series; milliseconds.

    python3 Tests/bench/experiments/exp-feedback.py OUT_DIR/serial.log
"""
import os, sys, re, importlib.util
spec = importlib.util.spec_from_file_location("bench", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench.py"))
bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench)
files = bench.serial_files(sys.argv[1])
sc = next(v for k, v in files.items() if "16-exp-feedback" in k)
hold_ns = 100_000_000
def pct(v, p):
    return bench.percentile(sorted(v), p) / 1e6 if v else float("nan")
def row(name, v, extra=""):
    if not v: return f"{name:30s} n=0"
    return f"{name:30s} n={len(v):4d} p50={pct(v,50):7.2f} p95={pct(v,95):7.2f} p99={pct(v,99):7.2f} max={max(v)/1e6:7.2f} {extra}"
tags = sorted({m.group(1) for n in sc for m in [re.match(r"(i-.*)-down\.log$", n)] if m},
              key=lambda t: (t.rsplit("-", 1)[1], t))
for tag in tags:
    # Deadlines from the device tool's key-downs (kernel stamps, ns); `held` from the subscriber.
    downs = [int(l.split()[1]) for l in sc.get(f"{tag}-down.log", []) if l.startswith("down ")]
    deadline_of = {d // 1000: d + hold_ns for d in downs}                         # press us -> deadline ns
    ev = [l.split() for l in sc.get(f"{tag}-events.log", [])]
    held = [int(e[3]) - int(e[1]) * 1000 for e in ev if e[0] == "held"]
    cmd = [int(p[1]) - deadline_of[int(p[2])] for p in (l.split() for l in sc.get(f"{tag}-rec.log", []))
           if len(p) >= 3 and p[0] == "actiond" and int(p[2]) in deadline_of]
    ticks = bench.paired(sorted(deadline_of.values()), [v * 1000 for v in bench.values(sc.get(f"{tag}-ticks.log", []), "tick")],
                         f"{tag} tick", early=0)
    print(row(f"{tag} held", held))
    print(row(f"{tag} command", cmd, f"missed {len(downs) - len(cmd)}"))
    print(row(f"{tag} tick", ticks, f"missed {bench.MISSED[f'{tag} tick']['missed']}"))
for name in sorted(n for n in sc if re.match(r"r-subnb-\d+\.log$", n)):
    tag = name[:-4]; s = {}
    bench.reactor_series(s, sc, tag, "", hold_ns)
    print(row(tag + " timer", s.get("Timer", []))); print(row(tag + " held", s.get("Held", []))); print(row(tag + " command", s.get("Command", [])))
for l in sc.get("led-trigger.log", []): print(l)
