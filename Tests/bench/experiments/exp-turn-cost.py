# SPDX-License-Identifier: Apache-2.0
"""Figures of Tests/bench/experiments/19-exp-turn-cost.sh out of a serial log: per block, the
actiond builds' `pressed` (key-down kernel stamp -> subscriber read), `held` (deadline -> read)
and command start (deadline -> the command's first instruction, paired by ACTIOND_PRESS_TIME),
and the C reactor's timer, `held` and command start; then each series pooled over its blocks
(a build's A and A2 blocks together), and each build's pooled p50 less the reactor's.

    python3 Tests/bench/experiments/exp-turn-cost.py OUT_DIR/serial.log
"""
import os, sys, re
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exp_blocks import bench, scenario, pct, row, actiond_block
sc = scenario(sys.argv[1], "19-exp")
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
    block = actiond_block(sc, tag)
    series = tag.rsplit("-", 1)[0]
    for what, v in block.items():
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
