# SPDX-License-Identifier: Apache-2.0
"""Reads Tests/bench/experiments/12-exp-turn-trace.sh's serial log: for each traced hold, from
the hold deadline to the command's first instruction (its `record` stamp), when the spawner
(actiond or the C reactor) woke, how long it ran before the clone, how long the child took
from the clone to its exec and from the exec to its first instruction, and which tasks had
the one vCPU meanwhile; and the spawner's system calls in the turn. Medians per series.

    python3 Tests/bench/experiments/exp-turn-trace.py OUT_DIR/serial.log
"""
import os, sys, re, importlib.util, collections, statistics

spec = importlib.util.spec_from_file_location(
    "bench", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
files = bench.serial_files(sys.argv[1])
sc = next(v for k, v in files.items() if "turn-trace" in k)
info = sc.get("trace-info.log", [])
print("\n".join(info))
HOLD_NS = int(os.environ.get("BENCH_HOLD_MS", "100")) * 1_000_000
# x86_64 system call numbers the turn uses (the rest are printed by number).
NAMES = {0: "read", 1: "write", 3: "close", 7: "poll", 13: "rt_sigaction", 14: "rt_sigprocmask",
         16: "ioctl", 20: "writev", 44: "sendto", 46: "sendmsg", 72: "fcntl", 232: "epoll_wait",
         233: "epoll_ctl", 281: "epoll_pwait", 286: "timerfd_settime", 287: "timerfd_gettime",
         293: "pipe2", 435: "clone3", 56: "clone", 434: "pidfd_open", 9: "mmap", 11: "munmap",
         228: "clock_gettime", 39: "getpid", 257: "openat", 62: "kill", 61: "wait4", 424: "pidfd_send_signal",
         441: "epoll_pwait2", 10: "mprotect", 12: "brk", 25: "mremap", 318: "getrandom"}
LINE = re.compile(r"-(\d+)\s+\[\d+\]\s+\S+\s+(\d+\.\d+): (\w+): (.*)$")


def parse(lines):
    out = []
    for l in lines:
        m = LINE.search(l)
        if m:
            out.append((int(round(float(m.group(2)) * 1e9)), int(m.group(1)), m.group(3), m.group(4)))
    return out


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


table = []  # (tag, {figure: median})
for line in info:
    m = re.match(r"pids (\S+) spawner (\d+) sub (\d+)(?: abuse (\d+) daemon (\d+))?", line)
    if not m:
        continue
    tag, spawner = m.group(1), int(m.group(2))
    # Under EXP_ABUSE: the abusers, and the actiond they hammer (the spawner itself in an
    # actiond series).
    abuser, daemon = int(m.group(4) or 0), int(m.group(5) or 0)
    tr = parse(sc.get(f"{tag}-trace.log", []))
    rec = [l.split() for l in sc.get(f"{tag}-rec.log", [])]
    holds = []  # (deadline_ns, start_ns)
    # A double press's command is paired with its second key-down, which starts the turn.
    start_offset = 0 if tag.startswith("dbl") else HOLD_NS
    for r in rec:
        if len(r) >= 3:
            holds.append((int(r[2]) * 1000 + start_offset, int(r[1])))
    if not tr or not holds:
        print(tag, "no trace or no samples")
        continue
    rows = collections.defaultdict(list)
    ran_total = collections.Counter()
    calls_before = collections.Counter()
    calls_after = collections.Counter()
    n = 0
    for d, start in holds:
        if d < tr[0][0] or start > tr[-1][0]:
            continue
        win = [e for e in tr if d - 2_000_000 <= e[0] <= start]
        # The spawner's wake-up at the deadline: the first switch to it at or after d.
        woke = next((t for t, p, ev, f in win if t >= d and ev == "sched_switch"
                     and f" next_pid={spawner} " in f + " "), None)
        fork = next(((t, int(re.search(r"child_pid=(\d+)", f).group(1))) for t, p, ev, f in win
                     if ev == "sched_process_fork" and p == spawner and t >= d), None)
        if fork is None:
            continue
        child = fork[1]
        exe = next((t for t, p, ev, f in win if ev == "sched_process_exec" and p == child), None)
        # CPU per task in [d, start], from the switches.
        run = collections.Counter()
        cur, last = None, d
        for t, p, ev, f in tr:
            if ev != "sched_switch":
                continue
            nxt = int(re.search(r"next_pid=(\d+)", f).group(1))
            if t < d:
                cur = nxt
                continue
            if t > start:
                break
            if cur is not None:
                run[cur] += t - last
            cur, last = nxt, t
        if cur is not None:
            run[cur] += start - last

        def label(pid):
            return ("spawner" if pid == spawner else "child" if pid == child else "idle" if pid == 0
                    else "abuser" if pid == abuser else "actiond" if pid == daemon else f"pid{pid}")

        for pid, ns in run.items():
            ran_total[label(pid)] += ns
        # The spawner's system calls from its wake-up to the clone, and from the clone until
        # it blocks again (its next epoll_wait).
        sys_enter = [(t, int(re.search(r"NR (\d+)", f).group(1))) for t, p, ev, f in win
                     if ev == "sys_enter" and p == spawner and t >= d]
        before = [nr for t, nr in sys_enter if t < fork[0]]
        after = []
        for t, nr in sys_enter:
            if t > fork[0]:
                after.append(nr)
                if nr in (232, 281, 441):
                    break
        calls_before.update(before)
        calls_after.update(after)
        blocked = next((t for t, nr in sys_enter if t > fork[0] and nr in (232, 281, 441)), None)
        rows["woke"].append((woke - d) / 1e6 if woke else None)
        rows["clone"].append((fork[0] - d) / 1e6)
        rows["exec"].append((exe - d) / 1e6 if exe else None)
        rows["spawner blocks"].append((blocked - d) / 1e6 if blocked else None)
        rows["start"].append((start - d) / 1e6)
        rows["calls before clone"].append(len(before))
        rows["calls after clone"].append(len(after))
        n += 1
    print(f"\n{tag}: {n} holds traced; medians, ms after the deadline")
    for k in ("woke", "clone", "exec", "spawner blocks", "start", "calls before clone", "calls after clone"):
        print(f"  {k:20s} {med(rows[k]):8.2f}")
    print("  CPU in [deadline, start] per hold:",
          ", ".join(f"{k} {v / 1e6 / max(n, 1):.2f}" for k, v in ran_total.most_common(8)))
    print("  spawner calls before the clone, per hold:",
          ", ".join(f"{NAMES.get(k, k)} {v / max(n, 1):.1f}" for k, v in calls_before.most_common(14)))
    print("  after it, until it blocks:",
          ", ".join(f"{NAMES.get(k, k)} {v / max(n, 1):.1f}" for k, v in calls_after.most_common(14)))
    figures = {k: med(rows[k]) for k in ("woke", "clone", "exec", "spawner blocks", "start")}
    figures["spawner CPU"] = ran_total["spawner"] / 1e6 / max(n, 1)
    figures["child CPU"] = ran_total["child"] / 1e6 / max(n, 1)
    figures["abuser CPU"] = ran_total["abuser"] / 1e6 / max(n, 1)
    figures["actiond CPU"] = ran_total["actiond"] / 1e6 / max(n, 1)
    table.append((tag, n, figures))

print("\n| series | holds | woke | clone | exec | spawner blocks | start | spawner CPU | child CPU | abuser CPU | other actiond CPU |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for tag, n, f in sorted(table, key=lambda t: (t[0].rsplit("-", 1)[-1], t[0])):
    print(f"| {tag} | {n} | " + " | ".join(f"{f[k]:.2f}" for k in
          ("woke", "clone", "exec", "spawner blocks", "start", "spawner CPU", "child CPU", "abuser CPU",
           "actiond CPU")) + " |")
