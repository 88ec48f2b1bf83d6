# SPDX-License-Identifier: Apache-2.0
"""Figures of Tests/bench/experiments/19-exp-turn-cost.sh out of a serial log: per block, the
actiond builds' `pressed` (key-down kernel stamp -> subscriber read), `held` (deadline -> read)
and command start (deadline -> the command's first instruction, paired by ACTIOND_PRESS_TIME),
and the C reactor's timer, `held` and command start; then each series pooled over its blocks
(a build's A and A2 blocks together), and each build's pooled p50 less the reactor's.

    python3 Tests/bench/experiments/exp-turn-cost.py OUT_DIR/serial.log
"""
import os, sys, re, importlib.util
spec = importlib.util.spec_from_file_location("bench", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench.py"))
bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench)
files = bench.serial_files(sys.argv[1])
sc = next(v for k, v in files.items() if "19-exp" in k)
hold_ns = 100_000_000
def pct(v, p):
    return bench.percentile(sorted(v), p) / 1e6 if v else float("nan")
def row(name, v):
    if not v: return f"{name:26s} n=0"
    return f"{name:26s} n={len(v):4d} p50={pct(v,50):6.2f} p95={pct(v,95):6.2f} p99={pct(v,99):6.2f} max={max(v)/1e6:6.2f}"
pooled = {}
def pool(series, what, v):
    pooled.setdefault((re.sub(r"2$", "", series), what), []).extend(v)
for tag in sorted({m.group(1) for n in sc for m in [re.match(r"(i-.*-\d+)-events\.log$", n)] if m}):
    ev = [l.split() for l in sc[f"{tag}-events.log"]]
    pressed = [int(e[3]) - int(e[1]) * 1000 for e in ev if e[0] == "pressed" and len(e) >= 4]
    held = [int(e[3]) - int(e[1]) * 1000 for e in ev if e[0] == "held" and len(e) >= 4]
    deadline = {int(e[1]): int(e[2]) * 1000 for e in ev if e[0] == "pressed"}
    cmd = [int(p[1]) - deadline[int(p[2])] for p in (l.split() for l in sc.get(f"{tag}-rec.log", []))
           if len(p) >= 3 and p[2].isdigit() and int(p[2]) in deadline]
    series = tag.rsplit("-", 1)[0]
    for what, v in (("pressed", pressed), ("held", held), ("command", cmd)):
        print(row(f"{tag} {what}", v))
        pool(series, what, v)
for name in sorted(n for n in sc if re.match(r"r-spawn2?-\d+\.log$", n)):
    tag = name[:-4]; s = {}
    bench.reactor_series(s, sc, tag, "", hold_ns)
    series = tag.rsplit("-", 1)[0]
    for what, key in (("timer", "Timer"), ("held", "Held"), ("command", "Command")):
        print(row(f"{tag} {what}", s.get(key, [])))
        pool(series, what, s.get(key, []))
print()
for (series, what), v in sorted(pooled.items()):
    print(row(f"{series} {what} (pooled)", v))
print()
reactor = {what: pct(pooled.get(("r-spawn", what), []), 50) for what in ("held", "command", "timer")}
for series in sorted({s for s, _ in pooled if s.startswith("i-")}):
    print(f"{series}: command p50 − reactor's {pct(pooled[(series, 'command')], 50) - reactor['command']:+.2f} ms;"
          f" held p99 − reactor's timer p99 {pct(pooled[(series, 'held')], 99) - pct(pooled[('r-spawn', 'timer')], 99):+.2f} ms")
