# SPDX-License-Identifier: Apache-2.0
"""Reads Tests/bench/experiments/08-exp-trace.sh's serial log: for each `held`, when the
subscriber was woken after the deadline and which tasks ran (ms) between the deadline and
its read.

    python3 Tests/bench/experiments/exp-trace.py OUT_DIR/serial.log
"""
import os, sys, re, importlib.util, collections
spec = importlib.util.spec_from_file_location("bench", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench.py"))
bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench)
files = bench.serial_files(sys.argv[1])
sc = next(v for k, v in files.items() if "trace" in k)
print("\n".join(sc.get("trace-info.log", [])))
info = " ".join(sc.get("trace-info.log", []))
m = re.search(r"pids actiond (\d+) sub (\d+) abuse (\d+)", info)
apid, spid, abpid = m.groups() if m else ("?", "?", "?")
sw = []  # (t_ns, prev "comm-pid", next "comm-pid")
wake = []  # (t_ns, "comm-pid", by)
for l in sc["trace.log"]:
    mm = re.search(r"\s(\d+\.\d+): (sched_switch|sched_wakeup|sched_wakeup_new): (.*)$", l)
    if not mm: continue
    t = int(round(float(mm.group(1)) * 1e9))
    body = mm.group(3)
    if mm.group(2) == "sched_switch":
        p = re.search(r"prev_comm=(.*?) prev_pid=(\d+).*prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)", body)
        sw.append((t, f"{p.group(1)}-{p.group(2)}", p.group(3), f"{p.group(4)}-{p.group(5)}"))
    else:
        p = re.search(r"comm=(.*?) pid=(\d+)", body)
        by = l.split()[0]
        wake.append((t, f"{p.group(1)}-{p.group(2)}", by))
print("switches", len(sw), "wakeups", len(wake), "trace span", (sw[-1][0] - sw[0][0]) / 1e9 if sw else 0)
ev = [l.split() for l in sc["tr-events.log"]]
held = [(int(e[1]) * 1000, int(e[3])) for e in ev if e[0] == "held"]
tot = collections.Counter()
for d, recv in held:
    if not sw or d < sw[0][0] or recv > sw[-1][0]: continue
    # who ran in [d, recv]
    run = collections.Counter()
    cur = None
    last = d
    for t, prev, st, nxt in sw:
        if t < d:
            cur = nxt; continue
        if t > recv: break
        if cur: run[cur] += t - last
        cur, last = nxt, t
    if cur: run[cur] += recv - last
    sw_sub = [w for w in wake if d <= w[0] <= recv and w[1].endswith("-" + spid)]
    wt = (sw_sub[0][0] - d) / 1e6 if sw_sub else None
    tot.update(run)
    top = ", ".join(f"{k} {v/1e6:.1f}" for k, v in run.most_common(6))
    print(f"held {(recv-d)/1e6:6.1f} ms; sub woken at +{wt if wt is None else round(wt,2)}; ran: {top}")
print("total:", ", ".join(f"{k} {v/1e6:.1f}" for k, v in tot.most_common(10)))
