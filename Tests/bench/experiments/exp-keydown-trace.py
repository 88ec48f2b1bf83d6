# SPDX-License-Identifier: Apache-2.0
"""Reads Tests/bench/experiments/12-exp-turn-trace.sh's serial log for the key-downs instead of
the deadlines: for each traced press, from the key-down's kernel stamp to the subscriber's
read() of `pressed` (its events file), when the spawner (actiond or the C reactor) was first
switched in, when it entered its first send (write, writev, sendto, sendmsg), when the
subscriber was woken and switched in, and when the spawner blocked again (epoll_wait); which
tasks had the one vCPU in [key-down, read]. Medians and p99 per series.

    python3 Tests/bench/experiments/exp-keydown-trace.py OUT_DIR/serial.log
"""
import os, sys, re, importlib.util, collections

spec = importlib.util.spec_from_file_location(
    "bench", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
files = bench.serial_files(sys.argv[1])
sc = next(v for k, v in files.items() if "turn-trace" in k)
info = sc.get("trace-info.log", [])
LINE = re.compile(r"-(\d+)\s+\[\d+\]\s+\S+\s+(\d+\.\d+): (\w+): (.*)$")
SENDS = {1, 20, 44, 46}
WAITS = {232, 281, 441}


def pct(xs, p):
    xs = sorted(x for x in xs if x is not None)
    return bench.percentile(xs, p) if xs else float("nan")


rows_out = []
for line in info:
    m = re.match(r"pids (\S+) spawner (\d+) sub (\d+)", line)
    if not m:
        continue
    tag, spawner, sub = m.group(1), int(m.group(2)), int(m.group(3))
    tr = []
    for l in sc.get(f"{tag}-trace.log", []):
        mm = LINE.search(l)
        if mm:
            tr.append((int(round(float(mm.group(2)) * 1e9)), int(mm.group(1)), mm.group(3), mm.group(4)))
    if not tr:
        continue
    # `pressed` as its subscriber read it: the key-down (us) -> the read (ns).
    reads = {int(e[1]): int(e[3]) for e in (l.split() for l in sc.get(f"{tag}-events.log", []))
             if len(e) >= 4 and e[0] == "pressed"}
    downs = [int(l.split()[1]) for l in sc.get(f"{tag}-down.log", []) if l.split()[0] == "down"]
    rows = collections.defaultdict(list)
    cpu = collections.Counter()
    n = 0
    for d in downs:
        r = reads.get(d // 1000)
        if r is None or d < tr[0][0] or r > tr[-1][0]:
            continue
        win = [e for e in tr if d <= e[0] <= r]
        woke = next((t for t, p, ev, f in win if ev == "sched_switch" and f" next_pid={spawner} " in f + " "), None)
        send = next((t for t, p, ev, f in win if ev == "sys_enter" and p == spawner
                     and int(re.search(r"NR (\d+)", f).group(1)) in SENDS), None)
        # The reactor's subscriber is its own child: the first task woken by the spawner
        # after its send, when the trace names no subscriber.
        s = sub
        if not s and send is not None:
            w = next((f for t, p, ev, f in win if t >= send and ev == "sched_wakeup" and p == spawner), None)
            s = int(re.search(r" pid=(\d+)", w).group(1)) if w else 0
        sub_woken = next((t for t, p, ev, f in win if send is not None and t >= send and ev == "sched_wakeup"
                          and f" pid={s} " in f" {f} "), None)
        sub_in = next((t for t, p, ev, f in win if sub_woken is not None and t >= sub_woken
                       and ev == "sched_switch" and f" next_pid={s} " in f + " "), None)
        blocks = next((t for t, p, ev, f in tr if send is not None and t > send and ev == "sys_enter"
                       and p == spawner and int(re.search(r"NR (\d+)", f).group(1)) in WAITS), None)
        cur, last = None, d
        for t, p, ev, f in tr:
            if ev != "sched_switch":
                continue
            nxt = int(re.search(r"next_pid=(\d+)", f).group(1))
            if t < d:
                cur = nxt
                continue
            if t > r:
                break
            if cur is not None:
                cpu["spawner" if cur == spawner else "subscriber" if cur == s else "idle" if cur == 0
                    else "other"] += t - last
            cur, last = nxt, t
        if cur is not None:
            cpu["spawner" if cur == spawner else "subscriber" if cur == s else "idle" if cur == 0 else "other"] += r - last
        for k, t in (("spawner in", woke), ("send", send), ("subscriber woken", sub_woken),
                     ("subscriber in", sub_in), ("spawner blocks", blocks), ("read", r)):
            rows[k].append((t - d) / 1e6 if t is not None else None)
        n += 1
    keys = ("spawner in", "send", "subscriber woken", "subscriber in", "spawner blocks", "read")
    rows_out.append((tag, n, {k: (pct(rows[k], 50), pct(rows[k], 99)) for k in keys},
                     {k: v / 1e6 / max(n, 1) for k, v in cpu.items()}))

print("| series | presses | " + " | ".join(("spawner in", "send", "subscriber woken", "subscriber in",
                                            "spawner blocks", "read")) + " | CPU: spawner, subscriber, other, idle |")
print("|---|---:|" + "---|" * 7)
for tag, n, f, c in sorted(rows_out, key=lambda t: (t[0].rsplit("-", 1)[-1], t[0])):
    print(f"| {tag} | {n} | " + " | ".join(f"{a:.2f} ({b:.2f})" for a, b in f.values()) +
          f" | {c.get('spawner', 0):.2f}, {c.get('subscriber', 0):.2f}, {c.get('other', 0):.2f}, {c.get('idle', 0):.2f} |")
print("p50 (p99), ms after the key-down's kernel stamp; CPU per press in [key-down, read], ms")
