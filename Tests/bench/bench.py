#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The host side of `make bench` (see Tests/bench/README.md). Measures, never judges.

    bench.py host --actiond BIN --core BIN --tool BIN [--helper BIN] [--mqtt BIN_DIR] --out FILE.json
        host figures: recognizer (actiond-bench --json), `status` requests/s with 1 and 16
        clients, fan-out of one announcement to 1,000 subscribers, config load time for
        200 controls, start -> READY=1 with 10 controls, binary size; with --helper
        (actiond-test-helper) command start and `held` on one host core, actiond against the
        C reactor, idle and under 50 abusive clients; with --mqtt (the directory of actiond
        and actiond-mqtt) the MQTT round trip, publish → state, on the loopback
        (Tests/mqtt/bench_bridge.py's round_trip, in its set-ups)
    bench.py mqtt-host --mqtt BIN_DIR [--mqtt-n N]
        only the MQTT round trip, printed as the summary row `report` writes
    bench.py commands --helper BIN --tool BIN --out FILE.json
        only those last figures, printed
    bench.py abuse --actiond BIN --tool BIN --out FILE.json
        a well-behaved client's `status` round trips idle and while 50 abusive clients
        (garbage, 10 MB lines, connect storms, slow readers) hammer the socket, and the
        daemon's CPU time meanwhile (also part of `host`)
    bench.py admission --actiond BIN --tool BIN --out FILE.json
        another user's connect -> hello (and the abusers' own user's) while 50 abusive
        clients of one user hammer the socket (also part of `host`; root for setpriv)
    bench.py vm --serial LOG --hold-ms MS --out FILE.json [--vm-info F] [--load WHAT --host-load L]
        parses the bench scenarios' sample files out of the VM's serial log (--load: what kept
        the host busy during that boot, for the loaded one)
    bench.py report --host FILE.json --vm FILE.json [--vm-loaded FILE.json] --doc docs/benchmarks.md
                    [--notebook docs/benchmarks-notebook.md] --plots DIR
        writes the page a user reads (--doc: the summary table, a plot, how to run it), the
        lab notebook beside it (--notebook: every figure, the method, the hand-written
        experiments) and the gnuplot PNGs; --vm-loaded adds the notebook's section "Loaded
        host (one core busy)", idle against loaded

Everything is median-of-samples; the machine is shared, so each figure is compared only
with figures measured in the same run.
"""

import argparse
import bisect
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# --- statistics -------------------------------------------------------------------------------


def percentile(sorted_values, p):
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return None
    rank = max(1, min(len(sorted_values), int(-(-p * len(sorted_values) // 100))))
    return sorted_values[rank - 1]


def summary(values):
    """n, min, p50, p99, max of a list of numbers (any unit)."""
    v = sorted(values)
    if not v:
        return {"n": 0}
    return {"n": len(v), "min": v[0], "p50": percentile(v, 50), "p95": percentile(v, 95), "p99": percentile(v, 99),
            "max": v[-1]}


def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load": os.getloadavg()[0],
    }


# --- host benchmarks --------------------------------------------------------------------------


def control(i, intent=None):
    return {
        "kind": f"org.actiond.bench.c{i}",
        "type": "toggle",
        "displayName": f"Bench {i}",
        "valueText": {"on": "Running", "off": "Stopped"},
        "actionHint": {"on": "Stop", "off": "Start"},
        "intent": intent or {"type": "state"},
        "value": {"type": "store", "initial": False},
    }


def write_config(directory, controls, max_clients=64):
    """A configuration with one button and `controls` store-backed toggles; returns its path."""
    os.makedirs(os.path.join(directory, "controls.d"), exist_ok=True)
    config = {
        "socket": {"path": os.path.join(directory, "actiond.sock"), "mode": "0660", "maxClients": max_clients},
        "stateDirectory": os.path.join(directory, "state"),
        "controlsDirectory": os.path.join(directory, "controls.d"),
        "buttons": [{"name": "action", "key": "KEY_PROG1", "match": {"tag": "actiond"}, "holdThresholdMs": 600}],
        "controls": [control(i) for i in range(controls)],
        "assignments": {"action": {"kind": "org.actiond.bench.c0"}},
    }
    path = os.path.join(directory, f"actiond-{controls}.json")
    with open(path, "w") as f:
        json.dump(config, f, indent=1)
    return path


def run(cmd, **kw):
    result = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result.stdout


def start_daemon(actiond, config, directory):
    sock = os.path.join(directory, "actiond.sock")
    log = open(os.path.join(directory, "daemon.log"), "w")
    proc = subprocess.Popen(
        [actiond, "--config", config, "--socket", sock, "--state-dir", os.path.join(directory, "state"),
         "--log-level", "warning"], stdout=log, stderr=log)
    wait_for_socket(proc, sock, "actiond", log.name)
    return proc, sock


def wait_for_socket(proc, sock, name, log):
    """Until the daemon `proc` listens on `sock` (20 s at most; its log says why not)."""
    deadline = time.monotonic() + 20
    while not os.path.exists(sock):
        if proc.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"bench: {name} did not start; see {log}")
        time.sleep(0.02)


def reap(proc, seconds=10):
    """Waits for a process that ends by itself, killing it after `seconds`."""
    try:
        proc.wait(seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def stop_daemon(proc):
    proc.send_signal(signal.SIGTERM)
    reap(proc)


def cpu_seconds(pid):
    """utime + stime of a process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def socket_abuse(actiond, tool, work, clients=50, requests=2000):
    """`status` round trips of one well-behaved client, idle and under abuse, on one daemon."""
    path = write_config(work, 10, max_clients=64)
    proc, sock = start_daemon(actiond, path, work)
    try:
        def rtts():
            out = run([tool, "statusrtt", sock, str(requests)])
            return [int(line.split()[1]) for line in out.splitlines() if line.startswith("rtt ")]
        print("bench: status round trips, idle", flush=True)
        idle = rtts()
        print(f"bench: status round trips under {clients} abusive clients", flush=True)
        seconds = 600.0  # stopped as soon as the measurement is done
        abuser = subprocess.Popen([tool, "abuse", sock, str(clients), str(seconds)], stdout=subprocess.PIPE, text=True)
        time.sleep(1.0)  # let every abuser connect before measuring
        cpu0, wall0 = cpu_seconds(proc.pid), time.monotonic()
        abused = rtts()
        cpu1, wall1 = cpu_seconds(proc.pid), time.monotonic()
        abuser.send_signal(signal.SIGTERM)
        abuser.wait(10)
        return {"clients": clients, "idle": summary(idle), "abused": summary(abused),
                "daemonCPUSeconds": cpu1 - cpu0, "wallSeconds": wall1 - wall0}
    finally:
        stop_daemon(proc)


# Connect -> hello, measured by a probe run as a given user: `n` connections `gap` seconds
# apart, each timed from before connect(2) to the hello's newline.
HELLO_PROBE = r"""
import socket, sys, time
path, n, gap = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
for _ in range(n):
    t0 = time.monotonic_ns()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    buf = b""
    while b"\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    print("hello", time.monotonic_ns() - t0, int(buf.startswith(b'{"type":"hello"')), flush=True)
    s.close()
    time.sleep(gap)
"""


def admission(actiond, tool, work, clients=50, other_samples=30, same_samples=5):
    """Fair admission per user (issue 30 item 5): while `clients` abusers (this user: garbage,
    10 MB lines, connect storms, live reconnections) hammer the socket, a fresh client's
    connect -> hello, run as another user (uid 65534, through setpriv; needs root) and as the
    abusers' own user. The accept rate is per uid, so only the second waits behind the storm."""
    d = os.path.join(work, "admission")
    os.makedirs(d, exist_ok=True)
    path = write_config(d, 10, max_clients=64)
    proc, sock = start_daemon(actiond, path, d)
    # The other user must reach the socket: the directories and the socket open to all.
    for p in (work, d):
        os.chmod(p, 0o755)
    os.chmod(sock, 0o666)
    other = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else None
    try:
        def probe(prefix, n, must_greet=True):
            """(connect -> hello times, connections refused instead) of `n` probes."""
            out = run(prefix + [sys.executable, "-c", HELLO_PROBE, sock, str(n), "0.1"])
            rows = [line.split() for line in out.splitlines() if line.startswith("hello ")]
            if must_greet and not all(r[2] == "1" for r in rows):
                sys.exit(f"bench: a probe connection got no hello:\n{out}")
            return [int(r[1]) for r in rows if r[2] == "1"], sum(r[2] != "1" for r in rows)
        idle, _ = probe(other or [], other_samples)
        print(f"bench: connect -> hello under {clients} abusive clients, another user and the same user", flush=True)
        abuser = subprocess.Popen([tool, "abuse", sock, str(clients), "600"], stdout=subprocess.PIPE, text=True)
        try:
            time.sleep(1.0)  # let every abuser connect before measuring
            abused_other, _ = probe(other, other_samples) if other else ([], 0)
            # The abusers' own user: greeted behind its storm, or refused (too-many-clients)
            # while that user's waiting connections are at their bound.
            abused_same, refused_same = probe([], same_samples, must_greet=False)
        finally:
            abuser.send_signal(signal.SIGTERM)
            abuser.wait(10)
        return {"clients": clients, "otherUser": other is not None, "idle": summary(idle),
                "otherUserAbused": summary(abused_other), "sameUserAbused": summary(abused_same),
                "sameUserRefused": refused_same, "sameUserProbes": same_samples}
    finally:
        stop_daemon(proc)


def admission_line(a):
    """The docs/benchmarks.md sentence and the printed row for `admission`'s figures."""
    o, s = a["otherUserAbused"], a["sameUserAbused"]
    other = (f"another user's connect → hello is p50 {ms(o['p50'])} ms, p99 {ms(o['p99'])} ms, max {ms(o['max'])} ms "
             f"({o['n']} connections; idle p99 {ms(a['idle']['p99'])} ms; goal: max < 500 ms)"
             if o.get("n") else "another user's connect → hello was not measured (not run as root)")
    return (f"Connection storm, fair admission per user: while {a['clients']} clients of one user abuse the socket, "
            f"{other}; the abusers' own user waits behind its storm: of {a['sameUserProbes']} connections "
            f"{a['sameUserRefused']} were refused (too-many-clients: that user's waiting connections at their bound)"
            + (f", the others greeted after p50 {ms(s['p50'])} ms, max {ms(s['max'])} ms." if s.get("n") else "."))


HOST_HOLD_MS = 100


def host_commands(helper, tool, work, holds, rounds, clients=50):
    """Command start and `held` on the host's own CPU: the daemon itself (actiond-test-helper
    serve-fifo: actiond's engine, loop, server and runner, its button read from a FIFO of
    input_event records, since this kernel has no uinput) against the C reactor doing the same
    deadline work and the same posix_spawn (`reactor --subscriber --noblock --spawn`) on a FIFO
    of its own, both fed the same presses by `benchtool fifopress`, idle and while `clients`
    abusive clients hammer actiond's socket (the reactor runs then too, as in the VM). Every
    process of a series is pinned to one CPU, the guest's single vCPU's situation without the
    emulator. Interleaved rounds; samples paired by ACTIOND_PRESS_TIME, an early one fails the
    run."""
    cpu = str(max(os.sched_getaffinity(0)))
    pin = ["taskset", "-c", cpu]
    d = os.path.join(work, "commands")
    os.makedirs(os.path.join(d, "controls.d"), exist_ok=True)
    sock = os.path.join(d, "actiond.sock")
    hold_ns = HOST_HOLD_MS * 1_000_000
    out = {"cpu": int(cpu), "holds": holds, "rounds": rounds, "clients": clients, "series": {}}
    started = []  # every process of the run, killed should it end early

    def start(cmd, **kw):
        proc = subprocess.Popen(cmd, **kw)
        started.append(proc)
        return proc

    def config(rec):
        path = os.path.join(d, "config.json")
        with open(path, "w") as f:
            json.dump({
                "socket": {"path": sock, "mode": "0660"}, "stateDirectory": os.path.join(d, "state"),
                "controlsDirectory": os.path.join(d, "controls.d"),
                "buttons": [{"name": "action", "key": "KEY_PROG1", "match": {"name": "actiond-bench-fifo"},
                             "holdThresholdMs": HOST_HOLD_MS}],
                "controls": [dict(control("record", {"type": "exec", "argv": [tool, "record", "actiond", rec]}),
                                  kind="org.actiond.bench.record")],
                "assignments": {"action": {"kind": "org.actiond.bench.record"}}}, f)
        return path

    def fifo(name):
        path = os.path.join(d, name)
        if os.path.exists(path):
            os.unlink(path)
        os.mkfifo(path)
        return path

    def press(path, downs):
        run(pin + [tool, "fifopress", path, str(holds), str(HOST_HOLD_MS + 30), "70", downs])

    def lines(path):
        with open(path) as f:
            return f.read().splitlines()

    def commands(rec, tag, downs, what):
        """Deadline -> the command's first instruction, each paired with its own key-down."""
        return paired_by_press_time({d // 1000: d + hold_ns for d in downs}, lines(rec), tag, what, "deadline")

    def held(events):
        return [int(p[3]) - int(p[1]) * 1000 for p in (l.split() for l in lines(events)) if p and p[0] == "held"]

    def add(name, values):
        out["series"].setdefault(name, []).extend(values)

    def actiond_series(abused, k):
        tag = f"{'abused' if abused else 'idle'}-{k}"
        rec, events, downs = (os.path.join(d, f"actiond-{tag}{x}") for x in ("-rec.log", "-events.txt", "-down.log"))
        path = fifo("actiond.fifo")
        with open(os.path.join(d, f"actiond-{tag}.log"), "w") as log:
            daemon = start(pin + [helper, "serve-fifo", config(rec), path], stdout=log, stderr=log)
        wait_for_socket(daemon, sock, "serve-fifo", log.name)
        sub = start(pin + [tool, "subscribe", sock, events, str(holds)], stdout=subprocess.PIPE, text=True)
        if not sub.stdout.readline().startswith("subscribed"):
            sys.exit("bench: the host subscriber did not subscribe")
        abuser = None
        if abused:
            abuser = start(pin + [tool, "abuse", sock, str(clients), "3600"], stdout=subprocess.PIPE, text=True)
            time.sleep(2)
        cpu0 = cpu_seconds(daemon.pid)
        press(path, downs)
        cpu1 = cpu_seconds(daemon.pid)
        reap(sub)
        return daemon, abuser, cpu1 - cpu0, rec, events, downs, tag

    def reactor_series(tag):
        rec, events, downs, log = (os.path.join(d, f"reactor-{tag}{x}") for x in
                                   ("-rec.log", "-events.log", "-down.log", ".log"))
        path = fifo("reactor.fifo")
        r = start(pin + [tool, "reactor", path, str(HOST_HOLD_MS), str(holds), log, "--subscriber", events,
                         "--noblock", "--spawn", tool, "record", "rsub", rec], stdout=subprocess.PIPE, text=True)
        if not r.stdout.readline().startswith("ready"):
            sys.exit("bench: the host reactor did not start")
        press(path, downs)
        reap(r)
        timer = [int(l.split()[1]) for l in lines(log) if l.startswith("overshoot ")]
        return (commands(rec, "rsub", [int(l.split()[1]) for l in lines(downs)], f"host reactor {tag}"), held(events),
                timer)

    try:
        for k in range(1, rounds + 1):
            for abused in (False, True):
                kind = "Abused" if abused else "Idle"
                print(f"bench: host command start, round {k}, {'under abuse' if abused else 'idle'}", flush=True)
                daemon, abuser, cpu_s, rec, events, downs, tag = actiond_series(abused, k)
                down_ns = [int(l.split()[1]) for l in lines(downs)]
                add(f"actiond{kind}Command", commands(rec, "actiond", down_ns, f"host actiond {tag}"))
                add(f"actiond{kind}Held", held(events))
                out.setdefault(f"actiond{kind}CPUSeconds", []).append(cpu_s)
                # The reactor while the same abusers hammer actiond (which keeps serving them).
                c, h, t = reactor_series(tag)
                add(f"reactor{kind}Command", c)
                add(f"reactor{kind}Held", h)
                add(f"reactor{kind}Timer", t)
                if abuser:
                    abuser.send_signal(signal.SIGTERM)
                    abuser.wait(10)
                stop_daemon(daemon)
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    out["summary"] = {name: summary(v) for name, v in out["series"].items()}
    out["missed"] = {name: rounds * holds - len(v) for name, v in out["series"].items()}
    return out


def abuse(args):
    work = tempfile.mkdtemp(prefix="actiond-bench-")
    try:
        results = {"machine": machine(), "abuse": socket_abuse(args.actiond, args.tool, work)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    a = results["abuse"]
    print(f"status p50/p99/max idle {ms(a['idle']['p50'])}/{ms(a['idle']['p99'])}/{ms(a['idle']['max'])} ms; "
          f"under {a['clients']} abusive clients {ms(a['abused']['p50'])}/{ms(a['abused']['p99'])}/"
          f"{ms(a['abused']['max'])} ms; daemon CPU {a['daemonCPUSeconds']:.1f} s in {a['wallSeconds']:.1f} s")


def admission_only(args):
    work = tempfile.mkdtemp(prefix="actiond-bench-")
    try:
        results = {"machine": machine(), "admission": admission(args.actiond, args.tool, work)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(admission_line(results["admission"]))


def commands_only(args):
    work = tempfile.mkdtemp(prefix="actiond-bench-")
    try:
        results = {"machine": machine(),
                   "commands": host_commands(args.helper, args.tool, work, args.command_holds, args.command_rounds)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    for name, v in sorted(results["commands"]["summary"].items()):
        print(f"{name:28s} n={v['n']:4d} p50={ms(v['p50'])} p99={ms(v['p99'])} max={ms(v['max'])} ms")


def mqtt_round_trips(bin_dir, n):
    """Tests/mqtt/bench_bridge.py's round trip in each of its set-ups (a broker, actiond and
    actiond-mqtt of their own, a paho client): {setup: {"tmpfs", and a summary in ns of
    "total", "toActiond", "actiond", "fromActiond"}}, with the machine's state at the start."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mqtt"))
    import bench_bridge  # noqa: E402 (Tests/mqtt, with its harness; python3-paho-mqtt)
    out = {"machine": machine(), "n": n, "setups": {}}
    for name, samples in bench_bridge.round_trips(bin_dir, n).items():
        print(bench_bridge.describe(name, samples), flush=True)
        out["setups"][name] = {"tmpfs": samples["tmpfs"], "label": bench_bridge.SETUP_LABELS[name],
                               **{k: summary([us * 1000 for us in samples[k]])
                                  for k in ("total", "toActiond", "actiond", "fromActiond")}}
    return out


MQTT_ROUND_TRIP_TARGET = 5e6  # publish → state p50 on the loopback (issue 31)


def mqtt_host_rows(host):
    """The MQTT round trip's summary rows: with mosquitto's `set_tcp_nodelay true` and
    actiond's state on tmpfs (the MQTT path: the target), next to mosquitto's default and a
    client with Nagle on; then the same with the state on the disk (actiond's fsync)."""
    mq = host.get("mqtt", {}).get("setups", {})
    best, disk = mq.get("nodelay"), mq.get("disk")
    if not best:
        return []
    dflt, nagle = mq.get("default", {}), mq.get("clientNagle", {})
    v = best["total"]["p50"]
    where = "tmpfs" if best["tmpfs"] else "the disk (no /dev/shm)"
    rows = [f"| MQTT round trip (host loopback): switch command published → its state received, mosquitto "
            f"`set_tcp_nodelay true`, state on {where}, p50 (p99), samples | {ms(v)} ms ({ms(best['total']['p99'])}), "
            f"{best['total']['n']} | mosquitto's default (Nagle on): p50 {ms(dflt.get('total', {}).get('p50'))} ms "
            f"(p99 {ms(dflt.get('total', {}).get('p99'))}); Nagle on the client (as paho): p50 "
            f"{ms(nagle.get('total', {}).get('p50'))} ms; client → actiond p50 {ms(best['toActiond']['p50'])}, "
            f"actiond's perform {ms(best['actiond']['p50'])}, actiond → client {ms(best['fromActiond']['p50'])} | "
            f"≤ {MQTT_ROUND_TRIP_TARGET / 1e6:g} ms p50 | "
            f"{verdict(v <= MQTT_ROUND_TRIP_TARGET, f'by {ms(v - MQTT_ROUND_TRIP_TARGET)} ms')} |"]
    if disk:
        rows.append(f"| … with actiond's state on the disk (its fsync), p50 (p99), samples | {ms(disk['total']['p50'])} ms "
                    f"({ms(disk['total']['p99'])}), {disk['total']['n']} | actiond's perform p50 "
                    f"{ms(disk['actiond']['p50'])} ms (p99 {ms(disk['actiond']['p99'])}); client → actiond "
                    f"{ms(disk['toActiond']['p50'])}, actiond → client {ms(disk['fromActiond']['p50'])} | (no target) "
                    "| – |")
    return rows


def mqtt_host_only(args):
    """The MQTT round trip alone: its summary rows, printed (for a hand-written section)."""
    m = mqtt_round_trips(args.mqtt, args.mqtt_n)
    print(f"bench: {m['machine']['date']}, load average {m['machine']['load']:.2f}")
    print("\n".join(mqtt_host_rows({"mqtt": m})))


def host(args):
    results = {"machine": machine()}
    work = tempfile.mkdtemp(prefix="actiond-bench-")
    try:
        # Recognizer: the existing micro-benchmark.
        print("bench: recognizer (actiond-bench)", flush=True)
        results["recognizer"] = json.loads(run([args.core, "--json"]).strip().splitlines()[-1])

        # Config load: --check-config of 200 controls against 1 control (process start-up and
        # the rest of the run is what both share; the difference is the loading itself).
        print("bench: configuration load", flush=True)
        load = {}
        for n in (1, 200):
            path = write_config(work, n)
            times = []
            for _ in range(args.repeat):
                t0 = time.monotonic_ns()
                run([args.actiond, "--check-config", path])
                times.append(time.monotonic_ns() - t0)
            load[str(n)] = summary(times)
        results["configLoad"] = load

        # start -> READY=1 with 10 controls.
        print("bench: start -> READY=1", flush=True)
        path = write_config(work, 10)
        sock = os.path.join(work, "actiond.sock")
        out = run([args.tool, "ready", str(args.repeat), "--", args.actiond, "--config", path, "--socket", sock,
                   "--state-dir", os.path.join(work, "state"), "--log-level", "warning"])
        results["ready"] = summary([int(line.split()[1]) for line in out.splitlines() if line.startswith("ready ")])

        # status requests/s and fan-out on one daemon allowing 1,024 clients.
        path = write_config(work, 10, max_clients=1024)
        proc, sock = start_daemon(args.actiond, path, work)
        try:
            status = {}
            for clients in (1, 16):
                print(f"bench: status requests, {clients} client(s)", flush=True)
                rates = []
                for _ in range(3):
                    out = run([args.tool, "statusload", sock, str(clients), str(args.seconds)])
                    m = re.search(r"requests (\d+) seconds ([\d.]+)", out)
                    rates.append(int(m.group(1)) / float(m.group(2)))
                status[str(clients)] = summary(rates)
            results["status"] = status
            print("bench: fan-out to 1,000 subscribers", flush=True)
            out = run([args.tool, "fanout", sock, "1000", str(args.rounds), "org.actiond.bench.c1"])
            rounds = [line.split()[1:] for line in out.splitlines() if line.startswith("round ")]
            results["fanout"] = {
                "subscribers": 1000,
                "first": summary([int(r[0]) for r in rounds]),
                "last": summary([int(r[1]) for r in rounds]),
                "spread": summary([int(r[1]) - int(r[0]) for r in rounds]),
            }
        finally:
            stop_daemon(proc)

        # A well-behaved client while 50 others abuse the socket (issue 13, item 14).
        results["abuse"] = socket_abuse(args.actiond, args.tool, work)
        # Another user's new connection during one user's connection storm (issue 30, item 5).
        results["admission"] = admission(args.actiond, args.tool, work)

        # The MQTT round trip, publish → state (issue 31).
        if args.mqtt:
            results["mqtt"] = mqtt_round_trips(args.mqtt, args.mqtt_n)

        # Command start and `held` on the host's own CPU, against the C reactor (issues 13, 15).
        if args.helper:
            results["commands"] = host_commands(args.helper, args.tool, work, args.command_holds, args.command_rounds)

        # Binary size: as built and stripped.
        stripped = os.path.join(work, "actiond.stripped")
        shutil.copy(args.actiond, stripped)
        run(["strip", stripped])
        needed = [line.split("[", 1)[1].rstrip("]") for line in run(["readelf", "-d", args.actiond]).splitlines()
                  if "(NEEDED)" in line]
        results["binary"] = {"bytes": os.path.getsize(args.actiond), "strippedBytes": os.path.getsize(stripped),
                             "needed": needed}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"bench: host figures in {args.out}")


# --- VM results -------------------------------------------------------------------------------


def hold_turn_rows(r):
    """The engine's share of a hold (actiond-bench's `holdTurn`), for the host table."""
    t = r.get("holdTurn")
    if not t:
        return []
    return [
        f"| a hold in the engine, its announcements encoded for the wire: key-down (`pressed`), µs | "
        f"{t['keyDownMicrosP50']:.1f} | | | {t['holds']:,} holds |",
        f"| … the deadline (`held`, `performing`, the command's request), µs (p99 {t['deadlineMicrosP99']:.1f}) | "
        f"{t['deadlineMicrosP50']:.1f} | | | {t['holds']:,} holds |",
        f"| … the release, µs | {t['releaseMicrosP50']:.1f} | | | {t['holds']:,} holds |",
        f"| … heap allocations per hold (press, deadline, release, the command's outcome); wire bytes | "
        f"{t['allocationsPerHold']:g} | | | {t['bytesPerHold']:,} bytes |",
    ]


def serial_files(serial):
    """{scenario: {file name: [lines]}} from the @@vm file markers of Tests/vm/init."""
    files, current = {}, None
    with open(serial, errors="replace") as log:
        for line in log:
            line = line.rstrip("\r\n")
            m = re.match(r"@@vm file (\S+) (\S+)$", line)
            if m:
                current = files.setdefault(m.group(1), {}).setdefault(os.path.basename(m.group(2)), [])
                continue
            if line.startswith("@@vm "):
                current = None
                continue
            if current is not None:
                current.append(line)
    return files


def values(lines, tag, column=1):
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) > column and parts[0] == tag:
            out.append(int(parts[column]))
    return out


MISSED = {}


def paired(starts, ends, what, early=50_000_000):
    """end - start per sample. Each start (a deadline or key-down, in press order) takes the
    first end in [start - 50 ms, next start - 50 ms): presses are >= 100 ms apart, so an early
    end still pairs with its own start and shows as negative. Starts without an end are
    counted as missed (MISSED[what]) rather than shifting every later pair. The spawn floor
    passes early=0 (each spawn is waited for before the next one starts), and so does thd
    (measured from the key-down that triggers the command)."""
    starts, ends = sorted(starts), sorted(ends)
    out, j, missed = [], 0, 0
    for i, s in enumerate(starts):
        limit = starts[i + 1] - early if i + 1 < len(starts) else float("inf")
        while j < len(ends) and ends[j] < s - early:
            j += 1
        if j < len(ends) and ends[j] < limit:
            out.append(ends[j] - s)
            j += 1
        else:
            missed += 1
    MISSED[what] = {"starts": len(starts), "ends": len(ends), "missed": missed}
    return out


def paired_by_press(pressed, lines, tag, what):
    """actiond's command samples, each paired with the deadline of the press that started it:
    the command carries that press's kernel key-down time (ACTIOND_PRESS_TIME, microseconds,
    the `time` of its `pressed` event) and `benchtool record` writes it after its own time.
    No window can mis-pair here (a late command is late, not early for the next press)."""
    return paired_by_press_time({t // 1000: d for t, d, _ in pressed}, lines, tag, what, "deadline")


def paired_by_press_time(reference_of, lines, tag, what, reference):
    """Command samples ("TAG start_ns press_us" lines) paired exactly by ACTIOND_PRESS_TIME:
    reference_of maps a press time (us) to the moment its command is measured from (ns; the
    hold deadline, or the key-down itself). A command before that moment, one naming no press
    or one press run twice fails the run with the evidence; presses without a command are
    counted as missed (e.g. `busy`)."""
    started, problems = {}, []
    for line in lines:
        p = line.split()
        if not p or p[0] != tag:
            continue
        if len(p) < 3:
            problems.append(f"a command without ACTIOND_PRESS_TIME: {line!r}")
            continue
        t, press = int(p[1]), int(p[2])
        if press not in reference_of:
            problems.append(f"ACTIOND_PRESS_TIME {press} us is the time of no press of this series: {line!r}")
        elif press in started:
            problems.append(f"a second command for the press at {press} us: {line!r}")
        elif t < reference_of[press]:
            problems.append(f"started {(reference_of[press] - t) / 1e6:.3f} ms BEFORE its {reference}: press {press} us, "
                            f"{reference} {reference_of[press]} ns ({line!r})")
        else:
            started[press] = t
    MISSED[what] = {"starts": len(reference_of), "ends": len(started), "missed": len(reference_of) - len(started)}
    if problems:
        sys.exit(f"bench: {what}: {len(problems)} impossible sample(s):\n  " + "\n  ".join(problems))
    return [started[p] - reference_of[p] for p in sorted(started)]


def paired_by_deadline(deadlines, lines, tag, hold_ns, what):
    """A reactor's command samples, each paired with its own deadline: the reactor gives its
    command the press's key-down (ACTIOND_PRESS_TIME, microseconds) as actiond does, and
    `benchtool record` writes it. Records without it (an older benchtool) fall back to
    pairing in press order."""
    rec = [line.split() for line in lines]
    rec = [p for p in rec if p[:1] == [tag]]
    if rec and any(len(p) < 3 for p in rec):
        return paired(deadlines, [int(p[1]) for p in rec], what)
    wanted = set(deadlines)
    started = {}
    for p in rec:
        deadline = int(p[2]) * 1000 + hold_ns
        if deadline in wanted and deadline not in started:
            started[deadline] = int(p[1])
    MISSED[what] = {"starts": len(deadlines), "ends": len(rec), "missed": len(wanted) - len(started)}
    return [started[d] - d for d in sorted(started)]


def reactor_series(series, scenario, tag, prefix, hold_ns):
    """The figures of one `benchtool reactor` run (bench-lib.sh's reactor_holds TAG), if it ran:
    PREFIX+Timer (deadline -> its timerfd read), PREFIX+Command (deadline -> the command's
    first instruction, paired in press order) and, with a subscriber, PREFIX+Held (deadline
    -> the subscriber's read of `held`)."""
    lines = scenario.get(f"{tag}.log")
    if lines is None:
        return
    series[prefix + "Timer"] = values(lines, "overshoot")
    series[prefix + "Command"] = paired_by_deadline(values(lines, "deadline"), scenario.get(f"{tag}-rec.log", []), tag,
                                                    hold_ns, f"{tag} command")
    events = scenario.get(f"{tag}-events.log")
    if events is not None:
        e = [line.split() for line in events]
        series[prefix + "Held"] = [int(x[3]) - int(x[1]) * 1000 for x in e if x[0] == "held" and len(x) >= 4]


GESTURE_BLOCK = 5  # 05-gestures: holds in blocks of 5, alternating plain, double, double, plain, ...


def paired_by_key_down(downs, lines, tag, what):
    """Command samples paired with the key-down that started them: ACTIOND_PRESS_TIME
    (microseconds) is that key-down's kernel stamp, which the device tool read back (ns)."""
    return paired_by_press_time({d // 1000: d for d in downs}, lines, tag, what, "key-down")


def key_presses(lines):
    """[(tag, down ns, up ns or None)] in order from a `benchtool device` log ("TAG ns" at each
    key-down, "TAG-up ns" at each key-up; a double press gives first/first-up/second/second-up)."""
    out = []
    for line in lines:
        p = line.split()
        if len(p) != 2 or not p[1].isdigit():
            continue
        if p[0].endswith("-up"):
            if out and out[-1][2] is None:
                out[-1][2] = int(p[1])
        else:
            out.append([p[0], int(p[1]), None])
    return out


def gesture_series(series, extra, scenario, hold_ns, window_ns=300_000_000):
    """05-gestures: one daemon, two buttons that differ only in a doublePress assignment
    (`plain`: hold only; `double`: the same hold plus doublePress), each on its own device.
    g{Plain,Double}{Pressed,Held}, gPlainCommand, gDoubleHoldCommand: the same holds on each, in
    alternating blocks; gDoubleCommand: the doublePress command after the second key-down;
    gDoublePressedEvent: the second key-down → the subscriber's read of `double-pressed`;
    g{Plain,Double}Released: a short press's release → the subscriber's read of `released`.
    ...A/...B: the hold-only button's own odd and even blocks (the noise between two halves of
    one configuration). A guest stall can stretch a 40 ms press past the threshold or shrink a
    gap (the device tool writes late): by the kernel's own stamps such double and short presses
    are not what the scenario meant; they are counted and left out, with whatever they
    performed, as is any press whose neighbours they disturbed."""
    def need(name):
        if name not in scenario:
            sys.exit(f"bench: 05-gestures left no {name}")
        return scenario[name]
    margin = 1_000_000
    plain, double = key_presses(need("plain-down.log")), key_presses(need("double-down.log"))
    events = [line.split() for line in need("gestures-events.log")]
    records = need("gestures-rec.log")
    problems = []
    # Which double and short presses are what they were meant to be, by the kernel's stamps.
    valid_second, disturbed = set(), {"Plain": 0, "Double": 0}
    valid_short, valid_hold = {"Plain": set(), "Double": set()}, {"Plain": set(), "Double": set()}
    for button, presses in (("Plain", plain), ("Double", double)):
        def opens_window(j):
            """Whether press j, released before the threshold, may begin a double press."""
            return j >= 0 and presses[j][2] is not None and presses[j][2] - presses[j][1] < hold_ns + margin
        for i, (tag, down, up) in enumerate(presses):
            prev_up = presses[i - 1][2] if i and opens_window(i - 1) else None
            nxt = presses[i + 1][1] if i + 1 < len(presses) else None
            apart_before = prev_up is None or down - prev_up > window_ns + margin
            short = up is not None and up - down < hold_ns - margin
            if tag == "down":
                if (up is not None and up - down > hold_ns + margin
                        and (button == "Plain" or apart_before)):
                    valid_hold[button].add(down)
                else:
                    disturbed[button] += 1
            elif tag == "second":
                first = presses[i - 1]
                before = presses[i - 2][2] if i >= 2 and opens_window(i - 2) else None
                ok = (first[0] == "first" and first[2] is not None and first[2] - first[1] < hold_ns - margin
                      and down - first[2] < window_ns - margin
                      and (before is None or first[1] - before > window_ns + margin))
                if ok:
                    valid_second.add(down)
                else:
                    disturbed[button] += 1
            elif tag == "short":
                apart_after = button == "Plain" or nxt is None or (up is not None and nxt - up > window_ns + margin)
                if short and (button == "Plain" or (apart_before and apart_after)):
                    valid_short[button].add(down)
                else:
                    disturbed[button] += 1
    hold_downs = valid_hold
    others = {b: {d // 1000 for _, d, _ in pr} - {d // 1000 for d in valid_hold[b]}
              for b, pr in (("Plain", plain), ("Double", double))}
    left_out = {}

    def keep(tag, button, allowed_us):
        """The records of TAG whose press is in allowed_us; those of the button's other presses
        (stalled ones, or ones a stall disturbed) are counted and left out."""
        kept = []
        for line in records:
            q = line.split()
            if q[:1] != [tag]:
                continue
            if len(q) >= 3 and int(q[2]) not in allowed_us and int(q[2]) in others[button]:
                left_out[tag] = left_out.get(tag, 0) + 1
                continue
            kept.append(line)
        return kept
    for button, tag in (("Plain", "plain"), ("Double", "dhold")):
        downs = sorted(hold_downs[button])
        mine = set(downs)
        pressed = [(int(e[1]) * 1000, int(e[2]) * 1000, int(e[3])) for e in events
                   if e[0] == "pressed" and int(e[1]) * 1000 in mine]
        deadlines = {d for _, d, _ in pressed}
        held = [(int(e[1]) * 1000, int(e[3])) for e in events if e[0] == "held" and int(e[1]) * 1000 in deadlines]
        for what, got in (("pressed", pressed), ("held", held)):
            if len(got) != len(downs):
                MISSED[f"gestures: {button} `{what}`"] = {"starts": len(downs), "ends": len(got),
                                                         "missed": len(downs) - len(got)}
        block = {d: (i // GESTURE_BLOCK) % 2 for i, d in enumerate(downs)}
        series[f"g{button}Pressed"] = [recv - t for t, _, recv in pressed]
        series[f"g{button}Held"] = [recv - d for d, recv in held]
        key = "gPlainCommand" if button == "Plain" else "gDoubleHoldCommand"
        mine_records = keep(tag, button, {d // 1000 for d in downs})
        series[key] = paired_by_press(pressed, mine_records, tag, f"gestures: {tag} command")
        if button == "Plain":
            start_of = {d // 1000: d for d in downs}
            cmd = {}
            for line in mine_records:
                q = line.split()
                if q[:1] == [tag] and len(q) >= 3 and int(q[2]) in start_of:
                    cmd[start_of[int(q[2])]] = int(q[1]) - start_of[int(q[2])] - hold_ns
            press_of = {d: t for t, d, _ in pressed}
            for half, h in (("A", 0), ("B", 1)):
                series[f"gPlainPressed{half}"] = [recv - t for t, _, recv in pressed if block[t] == h]
                series[f"gPlainHeld{half}"] = [recv - d for d, recv in held if block[press_of[d]] == h]
                series[f"gPlainCommand{half}"] = [v for d, v in sorted(cmd.items()) if block[d] == h]
    seconds = sorted(valid_second)
    series["gDoubleCommand"] = paired_by_key_down(seconds, keep("double", "Double", {d // 1000 for d in seconds}),
                                                  "double", "gestures: doublePress command")
    dp = [(int(e[1]) * 1000, int(e[3])) for e in events if e[0] == "double-pressed" and int(e[1]) * 1000 in valid_second]
    if len(dp) != len(seconds):
        MISSED["gestures: `double-pressed`"] = {"starts": len(seconds), "ends": len(dp), "missed": len(seconds) - len(dp)}
    series["gDoublePressedEvent"] = [recv - t for t, recv in dp]
    firsts = {p[1]: q[1] for p, q in zip(double, double[1:]) if p[0] == "first" and q[0] == "second"}
    gaps = sorted(s - f for f, s in firsts.items() if s in valid_second)
    released = [(int(e[1]) * 1000, int(e[3])) for e in events if e[0] == "released"]
    for button, presses in (("Plain", plain), ("Double", double)):
        ups = {up: down for tag, down, up in presses if tag == "short" and down in valid_short[button] and up}
        mine = [recv - t for t, recv in released if t in ups]
        if len(mine) != len(ups):
            MISSED[f"gestures: {button} `released`"] = {"starts": len(ups), "ends": len(mine),
                                                       "missed": len(ups) - len(mine)}
        series[f"g{button}Released"] = mine
    if problems:
        sys.exit("bench: 05-gestures: the announcements do not match the presses:\n  " + "\n  ".join(problems))
    extra["gestures"] = {"windowMs": window_ns // 1_000_000, "block": GESTURE_BLOCK,
                         "doubles": sum(1 for t, _, _ in double if t == "second"), "validDoubles": len(seconds),
                         "disturbed": disturbed, "leftOut": left_out,
                         "gapMs": [gaps[0] / 1e6, gaps[-1] / 1e6] if gaps else None,
                         "memory": memory(scenario.get("gestures-mem.log", []))}


def mqtt_series(series, extra, mq):
    """07-mqtt (issue 19), if it ran: the same holds' deadlines (the socket subscriber's
    `pressed` events: the kernel's key-down + the threshold) → the socket subscriber's `held`
    (mqttHeld) and → the MQTT subscriber's `long_press` (mqttLongPress), each paired exactly by
    its deadline: `held`'s time is the deadline, and so is `long_press`'s time_us. A time that
    is no deadline of these holds, or a second `long_press` for one, fails the run; a hold
    without one is counted as missed. Plus the idle bridge's context switches and memory."""
    if "mqtt-events.log" not in mq or "mq-events.log" not in mq:
        return
    events = [line.split() for line in mq["mq-events.log"]]
    pressed = [(int(e[1]) * 1000, int(e[2]) * 1000) for e in events if e[0] == "pressed" and len(e) >= 4]
    deadlines = [d for _, d in pressed]
    downs = values(mq.get("mq-down.log", []), "down")
    if downs and downs != [t for t, _ in pressed]:
        sys.exit(f"bench: 07-mqtt: the socket subscriber's `pressed` times are not the kernel's {len(downs)} key-downs")
    problems = []

    wanted = set(deadlines)

    def by_deadline(stamps, what):
        got = {}
        for t, recv in stamps:
            if t not in wanted:
                problems.append(f"{what}: {t} ns is the deadline of no hold")
            elif t in got:
                problems.append(f"{what}: a second one for the deadline {t} ns")
            else:
                got[t] = recv
        MISSED[what] = {"starts": len(deadlines), "ends": len(got), "missed": len(deadlines) - len(got)}
        return [got[d] - d for d in deadlines if d in got]

    held = [(int(e[1]) * 1000, int(e[3])) for e in events if e[0] == "held" and len(e) >= 4]
    mqtt = [(int(p[1]) * 1000, int(p[2])) for p in (line.split() for line in mq["mqtt-events.log"])
            if p[:1] == ["long_press"] and len(p) >= 3]
    series["mqttHeld"] = by_deadline(held, "07-mqtt socket held")
    series["mqttLongPress"] = by_deadline(mqtt, "07-mqtt MQTT long_press")
    # What the bridge and the broker add, hold by hold (negative: the MQTT subscriber first;
    # one vCPU runs them all, in whatever order the scheduler picks).
    socket_at, mqtt_at = dict(held), dict(mqtt)
    series["mqttGap"] = [mqtt_at[d] - socket_at[d] for d in deadlines if d in socket_at and d in mqtt_at]
    if problems:
        sys.exit("bench: 07-mqtt: impossible sample(s):\n  " + "\n  ".join(problems[:20]))
    mem = mq.get("bridge-mem.log", [])
    extra["bridgeMemory"] = memory(mem)
    for p in (line.split() for line in mem):
        if p[:1] == ["idle"] and len(p) >= 3:
            extra["bridgeIdle"] = {"seconds": int(p[1]), "switches": int(p[2])}


def feedback_series(series, fb):
    """06-feedback (issues 17 and 32), if it ran: the threshold tick, one daemon of its own per
    LED kind. The LED's change as the kernel delivered it to its device, each paired with the
    first deadline at or before it (a tick cannot come before its hold's deadline: early=0),
    next to `held` and the command after the same deadlines. sysfs (fb-*): the Caps Lock LED
    class device of an actiond-testdev device, whose printed stamps (microseconds) are
    ticks.log. EV_LED (led-*, absent from older serial logs): LED_CAPSL of the button's own
    `benchtool device --leds`, "led NS CODE VALUE" lines in led-down.log, uinput's stamp."""

    def holds(tag, held_key, command_key, what):
        events = [line.split() for line in fb[f"{tag}-events.log"]]
        pressed = [(int(e[1]) * 1000, int(e[2]) * 1000, int(e[3])) for e in events if e[0] == "pressed"]
        held = [(int(e[1]) * 1000, int(e[3])) for e in events if e[0] == "held"]
        if not set(t for t, _ in held) <= set(d for _, d, _ in pressed):
            sys.exit(f"bench: {what}: a held time is not the deadline of a pressed")
        series[held_key] = [recv - t for t, recv in held]
        if f"{tag}-rec.log" in fb:
            series[command_key] = paired_by_press(pressed, fb[f"{tag}-rec.log"], "feedback", f"{what} command")
        return [d for _, d, _ in pressed]

    if "ticks.log" in fb and "fb-events.log" in fb:
        deadlines = holds("fb", "fbHeld", "fbCommand", "06-feedback sysfs")
        series["actiondTick"] = paired(deadlines, [v * 1000 for v in values(fb["ticks.log"], "tick")],
                                       "actiond tick", early=0)
    if "led-down.log" in fb and "led-events.log" in fb:
        deadlines = holds("led", "ledHeld", "ledCommand", "06-feedback EV_LED")
        capsl_on = [int(p[1]) for p in (line.split() for line in fb["led-down.log"])
                    if p[:1] == ["led"] and len(p) >= 4 and p[2] == "1" and p[3] != "0"]
        series["actiondTickLed"] = paired(deadlines, capsl_on, "actiond tick (EV_LED)", early=0)


def feedback_only(args):
    """06-feedback's rows alone, from a boot of that scenario only (Tests/bench/vm.sh with
    BENCH_ONLY=06-feedback): the summary rows and the table rows `report` would write."""
    series = {}
    feedback_series(series, serial_files(args.serial).get("06-feedback", {}))
    if not series:
        sys.exit(f"bench: 06-feedback left no samples in {args.serial}")
    vmr = {"series": {k: summary(v) for k, v in series.items()}}
    print("\n".join(["| what you wait for | p50 | p99 | where | target | verdict |", "|---|---:|---:|---|---|---|",
                     *feedback_rows(vmr, "VM"), "",
                     *table(["fbHeld", "actiondTick", "ledHeld", "actiondTickLed", "fbCommand", "ledCommand"],
                            vmr["series"]), "",
                     f"pairing: {json.dumps({k: v for k, v in MISSED.items() if '06-feedback' in k or 'tick' in k})}"]))


def feedback_rows(vmr, where):
    """The summary page's feedback rows: hold threshold → each LED kind's first change,
    against the p99 target of issue 32."""
    rows = []
    for key, kind in (("actiondTick", "sysfs"), ("actiondTickLed", "EV_LED")):
        s = vmr["series"].get(key, {})
        if s.get("p99") is not None:
            rows.append(target_row(f"hold threshold → the feedback LED's first change ({kind})", s["p50"], s["p99"],
                                   where, f"p99 ≤ {FEEDBACK_TARGET / 1e6:g} ms", s["p99"], FEEDBACK_TARGET))
    return rows


def mqtt_only(args):
    """07-mqtt's rows alone, from a boot of that scenario only (Tests/bench/vm.sh with
    BENCH_ONLY=07-mqtt): the summary rows and the table rows `report` would write."""
    series, extra = {}, {}
    mqtt_series(series, extra, serial_files(args.serial).get("07-mqtt", {}))
    if not series:
        sys.exit(f"bench: 07-mqtt left no samples in {args.serial}")
    vmr = {"series": {k: summary(v) for k, v in series.items()}, **extra}
    print("\n".join(["| figure | actiond | compared with | target | verdict |", "|---|---:|---|---|---|",
                     *mqtt_rows(vmr), "", *table(["mqttHeld", "mqttLongPress", "mqttGap"], vmr["series"]), "",
                     "| process | when | VmRSS | RssAnon |", "|---|---|---:|---:|",
                     *[f"| actiond-mqtt | {when} | {m['vmRSSkB']} | {m['rssAnonkB']} |"
                       for when, m in extra.get("bridgeMemory", {}).items()],
                     "", f"pairing: {json.dumps({k: v for k, v in MISSED.items() if k.startswith('07-mqtt')})}"]))


def memory(lines):
    return {p[1]: {"vmRSSkB": int(p[2]), "rssAnonkB": int(p[3])} for p in (l.split() for l in lines) if p[:1] == ["mem"]}


def vm(args):
    files = serial_files(args.serial)
    hold_ns = args.hold_ms * 1_000_000
    series, extra = {}, {}

    def need(scenario, name):
        try:
            return files[scenario][name]
        except KeyError:
            sys.exit(f"bench: {scenario} left no {name} in {args.serial}")

    lim = "01-limits"
    series["timerfd"] = values(need(lim, "timerfd.log"), "overshoot")
    series["spawn"] = paired(values(need(lim, "spawn-t0.log"), "spawn"), values(need(lim, "spawn-rec.log"), "spawn"),
                             "spawn floor", early=0)
    if "fork-rec.log" in files.get(lim, {}):
        series["fork"] = paired(values(need(lim, "fork-t0.log"), "spawn"), values(need(lim, "fork-rec.log"), "spawn"),
                                "fork floor", early=0)
    reactor = need(lim, "reactor.log")
    series["reactorPress"] = values(reactor, "rt")
    series["reactorTimer"] = values(reactor, "overshoot")
    series["reactorCommand"] = paired_by_deadline(values(reactor, "deadline"), need(lim, "reactor-rec.log"), "reactor",
                                                  hold_ns, "reactor command")

    # The same reactor doing actiond's deadline work besides the spawn (a subscriber fed
    # `held` and `performing` just before it, back to epoll_wait after it).
    reactor_series(series, files[lim], "reactor-sub", "reactorSub", hold_ns)
    # ... and with actiond's posix_spawn (attributes, pipes, file actions readied at key-down).
    reactor_series(series, files[lim], "reactor-spawn", "reactorSpawn", hold_ns)

    act = "02-actiond"
    # The reactors under the same abuse as actiond (BENCH_ABUSE_N), in actiond's scenario.
    reactor_series(series, files.get(act, {}), "reactor-abuse", "reactorAbuse", hold_ns)
    reactor_series(series, files.get(act, {}), "reactor-sub-abuse", "reactorSubAbuse", hold_ns)
    reactor_series(series, files.get(act, {}), "reactor-spawn-abuse", "reactorSpawnAbuse", hold_ns)
    events = [line.split() for line in need(act, "events.log")]
    pressed = [(int(e[1]) * 1000, int(e[2]) * 1000, int(e[3])) for e in events if e[0] == "pressed"]
    held = [(int(e[1]) * 1000, int(e[3])) for e in events if e[0] == "held"]
    series["actiondPressed"] = [recv - t for t, _, recv in pressed]
    series["actiondHeld"] = [recv - t for t, recv in held]
    deadlines = [d for _, d, _ in pressed]
    if not set(t for t, _ in held) <= set(deadlines):
        sys.exit("bench: actiond: a held time is not the deadline of a pressed")
    feedback_series(series, files.get("06-feedback", {}))
    mqtt_series(series, extra, files.get("07-mqtt", {}))
    records = need(act, "actiond-rec.log")
    # The blast comes after every hold series: a blast press that a guest stall stretched past
    # the threshold (its key-up written late) is a real hold and runs the command too. Such
    # records, after the last press of the hold series, are counted, not paired.
    last_press = max([int(e[1]) for e in events if e[0] == "pressed"]
                     + [int(line.split()[1]) for line in files[act].get("events-abuse.log", [])
                        if line.split()[:1] == ["pressed"]], default=0)
    late = [line for line in records if len(line.split()) >= 3 and int(line.split()[2]) > last_press]
    records = [line for line in records if line not in late]
    extra["blastHolds"] = len(late)
    # The holds under abusive clients (BENCH_ABUSE_N) ran the same command into the same file
    # after the first series; their own subscriber's `pressed` times tell their samples apart.
    abused = files[act].get("events-abuse.log")
    pressed_abuse = []
    if abused is not None:
        ev = [line.split() for line in abused]
        pressed_abuse = [(int(e[1]) * 1000, int(e[2]) * 1000, int(e[3])) for e in ev if e[0] == "pressed"]
        held_abuse = [(int(e[1]) * 1000, int(e[3])) for e in ev if e[0] == "held"]
        if not set(t for t, _ in held_abuse) <= set(d for _, d, _ in pressed_abuse):
            sys.exit("bench: actiond under abuse: a held time is not the deadline of a pressed")
        abuse_presses = {t // 1000 for t, _, _ in pressed_abuse}

        def press_of_record(line):
            f = line.split()
            return int(f[2]) if len(f) >= 3 and f[0] == "actiond" else None
        series["actiondPressedAbuse"] = [recv - t for t, _, recv in pressed_abuse]
        series["actiondHeldAbuse"] = [recv - t for t, recv in held_abuse]
        series["actiondCommandAbuse"] = paired_by_press(
            pressed_abuse, [l for l in records if press_of_record(l) in abuse_presses], "actiond",
            "actiond command under abuse")
        records_idle = [l for l in records if press_of_record(l) not in abuse_presses]
        ab = [l.split() for l in files[act].get("abuse.log", [])]
        ab = [x for x in ab if x[:1] == ["abuse"] and len(x) >= 3]
        extra["abuse"] = {"clients": int(ab[0][1]), "connects": int(ab[0][2])} if ab else {}
    else:
        records_idle = records
    series["actiondCommand"] = paired_by_press(pressed, records_idle, "actiond", "actiond command")
    # Whether the subscriber read `held` only after the command had already started (one vCPU:
    # the subscriber runs when the daemon blocks). Paired exactly, by the press time.
    started_at = {int(p[2]) * 1000: int(p[1]) for p in (l.split() for l in records) if p[:1] == ["actiond"]}
    press_of = {d: t for t, d, _ in pressed}
    after = 0
    for deadline, recv in held:
        started = started_at.get(press_of.get(deadline, -1))
        after += started is not None and recv > started
    extra["heldAfterCommand"] = {"after": after, "of": len(held)}
    # Whether `held` and the `performing` written right after it arrived in one read().
    together = sum(1 for a, b in zip(events, events[1:]) if a[0] == "held" and b[0] == "performing" and a[3] == b[3])
    extra["heldWithPerforming"] = {"together": together, "of": len(held)}
    # The kernel's own key-down timestamps, read back by the device tool, against the daemon's.
    downs = values(need(act, "down.log"), "down")
    if downs != [t for t, _, _ in pressed + pressed_abuse]:
        extra["actiondTimestampMismatch"] = sum(1 for a, (b, _, _) in zip(downs, pressed + pressed_abuse) if a != b)
    mem_lines = need(act, "mem.log")
    extra["actiondMemory"] = memory(mem_lines)
    for line in mem_lines:
        p = line.split()
        if p[0] == "idle":
            extra["idle"] = {"seconds": int(p[1]), "switches": int(p[2])}
        elif p[0] == "blast":
            extra["blast"] = {"presses": int(p[1]), "releasedSeen": int(p[2]), "seconds": float(p[3])}

    if "gestures-events.log" in files.get("05-gestures", {}):
        gesture_series(series, extra, files["05-gestures"], hold_ns)

    thd = "03-triggerhappy"
    if thd in files:
        # From the key-down that triggers it: nothing can start before it, and through dash a
        # command may take more than half the 100 ms between presses, so no early window.
        series["thdCommand"] = paired(values(need(thd, "down.log"), "down"), values(need(thd, "thd-rec.log"), "thd"),
                                      "thd command", early=0)
        extra["thdMemory"] = memory(need(thd, "mem.log"))
    py = "04-python-evdev"
    if py in files and "python-rec.log" in files[py]:
        series["pythonCommand"] = paired([d + hold_ns for d in values(need(py, "down.log"), "down")],
                                         values(need(py, "python-rec.log"), "python"), "python command")
        extra["pythonMemory"] = memory(need(py, "mem.log"))

    result = {"holdMs": args.hold_ms, "series": {k: summary(v) for k, v in series.items()},
              # A difference of two receipts is negative whenever the order flips: not lateness.
              "early": {k: sum(1 for x in v if x < 0) for k, v in series.items() if k != "mqttGap"}, "pairing": MISSED,
              **extra}
    if args.vm_info:
        with open(args.vm_info) as f:
            result["vm"] = json.load(f)
    if args.load:
        result["loaded"] = {"stress": args.load, "hostLoad": args.host_load}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    with open(args.out.replace(".json", "-samples.json"), "w") as f:
        json.dump(series, f)
    print(f"bench: VM figures in {args.out}")



def ms(ns):
    return "–" if ns is None else f"{ns / 1e6:.2f}"


def kib(kb):
    return f"{kb / 1024:.1f} MiB" if kb >= 1024 else f"{kb} kB"


def verdict(ok, missed):
    return "met" if ok else f"**missed**: {missed}"


SERIES = {
    # key: (label, what it measures)
    "actiondPressed": ("actiond `pressed` → subscriber", "key-down kernel timestamp → a socket subscriber's read()"),
    "reactorPress": ("C reactor key-down → subscriber (limit)", "the same through a minimal epoll reactor and a socketpair"),
    "actiondHeld": ("actiond `held` → subscriber", "hold deadline (key-down + threshold) → a subscriber's read()"),
    "fbHeld": ("actiond `held` → subscriber, with a feedback LED",
               "06-feedback: as `held` above, on a button whose sysfs LED ticks on `held`"),
    "actiondTick": ("actiond threshold tick (feedback LED)",
                    "06-feedback: hold deadline → the kernel's delivery of the sysfs LED's change to its device"),
    "ledHeld": ("actiond `held` → subscriber, with an EV_LED feedback LED",
                "06-feedback: as `held` above, on a button whose own device's LED (`led:`) ticks on `held`"),
    "actiondTickLed": ("actiond threshold tick (feedback LED, EV_LED)",
                       "06-feedback: hold deadline → uinput's stamp of the EV_LED write reaching the button's device"),
    "mqttHeld": ("actiond `held` → socket subscriber, next to MQTT",
                 "07-mqtt: hold deadline → `benchtool subscribe`'s read(), the holds of the row below"),
    "mqttLongPress": ("key-down → MQTT subscriber (`long_press`)",
                      "07-mqtt: hold deadline (kernel key-down + threshold) → a libmosquitto subscriber's receipt "
                      "through actiond-mqtt and mosquitto on the guest's loopback (no network)"),
    "mqttGap": ("… MQTT receipt − socket receipt, hold by hold",
                "07-mqtt: what the bridge and the broker add to the same `held` (negative: the MQTT subscriber first)"),
    "timerfd": ("timerfd overshoot (limit)", "absolute timerfd deadline → epoll_wait return, nothing else running"),
    "reactorTimer": ("C reactor timerfd overshoot", "hold deadline → the reactor's timerfd read"),
    "actiondCommand": ("actiond command start", "hold deadline → the exec'd recording command's first instruction"),
    "fbCommand": ("actiond command start, with a sysfs feedback LED",
                  "06-feedback: as above, on the button whose sysfs LED ticks on `held` in the same turn"),
    "ledCommand": ("actiond command start, with an EV_LED feedback LED",
                   "06-feedback: as above, on the button whose own device's LED ticks on `held` in the same turn"),
    "reactorCommand": ("C reactor command start (limit)", "hold deadline → the same command, epoll + timerfd + posix_spawn"),
    "spawn": ("posix_spawn floor", "posix_spawn() call → the command's first instruction, no input involved"),
    "fork": ("fork + execve floor", "fork() call → the same command's first instruction (execve in the child)"),
    "reactorSubHeld": ("C reactor with a subscriber: `held` → subscriber (limit)",
                       "hold deadline → its subscriber's read() of the `held` it wrote just before posix_spawn"),
    "reactorSubTimer": ("C reactor with a subscriber: timerfd overshoot", "hold deadline → that reactor's timerfd read"),
    "reactorSubCommand": ("C reactor with a subscriber, no waitpid: command start (limit)",
                          "hold deadline → the command; `held` + `performing` written first, back to epoll after"),
    "reactorSpawnCommand": ("C reactor with a subscriber and actiond's posix_spawn: command start (limit)",
                            "as above, spawned as actiond does: own process group, signals reset, output pipes, "
                            "/dev/null, closefrom, chdir (pipes and file actions readied at the key-down)"),
    "reactorSpawnHeld": ("C reactor with a subscriber and actiond's posix_spawn: `held` → subscriber",
                         "hold deadline → its subscriber's read() of `held`"),
    "reactorAbuseTimer": ("C reactor timerfd overshoot, same abuse", "as above, while the abusers hammer actiond"),
    "reactorAbuseCommand": ("C reactor command start, same abuse", "as above, while the abusers hammer actiond"),
    "reactorSubAbuseHeld": ("C reactor with a subscriber: `held` → subscriber, same abuse (limit)",
                            "as above, while the abusers hammer actiond"),
    "reactorSubAbuseCommand": ("C reactor with a subscriber: command start, same abuse (limit)",
                               "as above, while the abusers hammer actiond"),
    "reactorSpawnAbuseCommand": ("C reactor with a subscriber and actiond's posix_spawn: command start, same abuse",
                                 "as above, while the abusers hammer actiond"),
    "pythonCommand": ("python-evdev command start", "hold deadline → the same command from Tests/vm/bench/hold.py"),
    "actiondPressedAbuse": ("actiond `pressed` → subscriber, abused", "as `pressed` above, 50 abusive clients connected"),
    "actiondHeldAbuse": ("actiond `held` → subscriber, abused", "as `held` above, 50 abusive clients connected"),
    "actiondCommandAbuse": ("actiond command start, abused", "as command start above, 50 abusive clients connected"),
    "thdCommand": ("triggerhappy command start", "key-down kernel timestamp → the same command run by thd on the press"),
    "gPlainPressed": ("hold-only button: `pressed` → subscriber", "as `pressed` above, 05-gestures' hold-only button"),
    "gDoublePressed": ("+ doublePress: `pressed` → subscriber", "the same on the button that also has a doublePress"),
    "gPlainHeld": ("hold-only button: `held` → subscriber", "hold deadline → a subscriber's read()"),
    "gDoubleHeld": ("+ doublePress: `held` → subscriber", "the same on the button that also has a doublePress"),
    "gPlainCommand": ("hold-only button: hold command start", "hold deadline → the recording command"),
    "gDoubleCommand": ("double press: command start", "second key-down kernel timestamp → the doublePress command"),
    "gDoubleHoldCommand": ("+ doublePress: hold command start", "the same on the button that also has a doublePress"),
    "gDoublePressedEvent": ("double press: `double-pressed` → subscriber",
                            "second key-down kernel timestamp → a subscriber's read()"),
    "gPlainReleased": ("hold-only button: short press `released` → subscriber",
                       "the release's kernel timestamp → a subscriber's read()"),
    "gDoubleReleased": ("+ doublePress: short press `released` → subscriber",
                        "the same: announced once the double-press window has passed without a second press"),
}


def abuse_table(vmr):
    """The holds under abusive socket clients, next to the same daemon's holds without them."""
    series = vmr["series"]
    if not series.get("actiondHeldAbuse", {}).get("n"):
        return []
    a = vmr.get("abuse", {})
    return [
        f"### Under {a.get('clients', 50)} abusive socket clients",
        "",
        f"The same daemon, right after the holds above, {series['actiondHeldAbuse']['n']} more holds while "
        f"`benchtool abuse` runs {a.get('clients', 50)} local clients in the guest (by index mod 4: garbage lines "
        "never read, one 10 MB line after another, connect/close storms, subscribers that pipeline requests and "
        f"never read; {a.get('connects', '?')} connections in all), watched by a subscriber that connected before "
        "them. The abusers share the one vCPU with the daemon, as any local user's processes would.",
        "",
        *table(["actiondPressedAbuse", "actiondHeldAbuse", "reactorAbuseTimer", "reactorSubAbuseHeld",
                "actiondCommandAbuse", "reactorAbuseCommand", "reactorSubAbuseCommand", "reactorSpawnAbuseCommand"],
               series),
        "",
        "The C reactors of the limits ran right after actiond's holds, each on a uinput device of its own, while "
        "the same abusers kept hammering actiond's socket and actiond kept serving them: the limit under the "
        "same abuse.",
        "",
    ]


def table(rows, series):
    out = ["| series | n | min | p50 | p99 | max | measured from → to |", "|---|---:|---:|---:|---:|---:|---|"]
    for key in rows:
        s = series.get(key)
        if not s or not s.get("n"):
            continue
        label, what = SERIES[key]
        out.append(f"| {label} | {s['n']} | {ms(s['min'])} | {ms(s['p50'])} | {ms(s['p99'])} | {ms(s['max'])} | {what} |")
    return out


def plot(samples, keys, title, xlabel, path):
    """A CDF per series on a log x axis, with gnuplot (pngcairo)."""
    return plot_sets([(SERIES[key][0], samples.get(key, [])) for key in keys], title, xlabel, path)


def plot_sets(sets, title, xlabel, path):
    """A CDF per (label, samples in ns) on a log x axis, with gnuplot (pngcairo)."""
    data_dir = tempfile.mkdtemp(prefix="actiond-plot-")
    plots = []
    for n, (label, samples, *style) in enumerate(sets):
        v = sorted(x / 1e6 for x in samples if x > 0)
        if not v:
            continue
        data = os.path.join(data_dir, f"{n}.dat")
        with open(data, "w") as f:
            for i, x in enumerate(v):
                f.write(f"{x:.6f} {(i + 1) / len(v):.5f}\n")
        plots.append(f"'{data}' using 1:2 with steps lw 2 {' '.join(style)} title '{label} (n={len(v)})'")
    if not plots:
        return False
    script = "\n".join([
        "set terminal pngcairo size 1000,560 font 'sans,10' noenhanced",
        f"set output '{path}'",
        f"set title '{title}'",
        "set logscale x 10",
        f"set xlabel '{xlabel}'",
        "set ylabel 'fraction of samples ≤ x'",
        "set yrange [0:1.02]",
        "set grid xtics ytics mxtics",
        "set key bottom right",
        "plot " + ", ".join(plots),
    ])
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    shutil.rmtree(data_dir, ignore_errors=True)
    return True


def held_note(together):
    if not together or not together["of"]:
        return "."
    text = (f", and in {together['together']} of {together['of']} it read `held` in the same read() as the "
            "`performing` the daemon writes right after it")
    if together["together"] * 2 >= together["of"]:
        text += (": with one vCPU the subscriber runs only once the daemon blocks (the daemon does not yield "
                 "after an announcement), so it reads both at once after the command's posix_spawn")
    return text + "."


def notes(vmr):
    """Why a figure is where it is, when the measurements show it (the guest has one vCPU)."""
    p = lambda k, q: vmr["series"].get(k, {}).get(q)  # noqa: E731
    out = []
    a, reactor = p("actiondCommand", "p50"), p("reactorCommand", "p50")
    spawn = p("spawn", "p50")
    if a and reactor and spawn:
        text = (f"- actiond's command starts {ms(a)} ms (p50) after the hold deadline: {ms(a - spawn)} ms beyond "
                f"the posix_spawn floor, {'+' if a >= reactor else '−'}{ms(abs(a - reactor))} ms against the C "
                "reactor, which calls a bare posix_spawn at the deadline. actiond's posix_spawn also gives the "
                "child its own process group, default signals, /dev/null stdin, output pipes and closefrom "
                "(readied at the key-down)")
        both = p("reactorSpawnCommand", "p50")
        if both:
            text += (f"; the reactor spawning that way (and feeding a subscriber) starts it {ms(both)} ms after its "
                     f"deadline, so {'+' if a >= both else '−'}{ms(abs(a - both))} ms is the daemon's own work "
                     "at the deadline: draining the device, the engine, the announcements, the bookkeeping of the "
                     "run")
        text += ". Each sample is paired with its own press by ACTIOND_PRESS_TIME."
        fork = p("fork", "p50")
        if fork:
            text += f" For scale: fork + execve from a small process costs {ms(fork)} ms (p50)."
        out.append(text)
    held, timer = p("actiondHeld", "p50"), p("timerfd", "p50")
    if held and timer and held > timer + 1e6:
        out.append(
            f"- The `held` announcement reaches the subscriber {ms(held - timer)} ms (p50) after the timerfd "
            "limit (the `pressed` path adds "
            f"{ms(p('actiondPressed', 'p50') - p('reactorPress', 'p50'))} ms over the C reactor); in "
            f"{vmr.get('heldAfterCommand', {}).get('after')} of {vmr.get('heldAfterCommand', {}).get('of')} holds "
            "the subscriber read `held` only after the intent's command had started"
            + held_note(vmr.get("heldWithPerforming")))
    held99, reactor_timer99 = p("actiondHeld", "p99"), p("reactorTimer", "p99")
    if held99 and reactor_timer99 and held99 - reactor_timer99 > HELD_MARGIN:
        out.append(
            f"- `held` p99 is {ms(held99)} ms, p95 {ms(p('actiondHeld', 'p95'))} ms. Under the same load (device "
            f"tool and subscriber running) the C reactor's own timer wake-up has p99 {ms(reactor_timer99)} ms "
            f"(p95 {ms(p('reactorTimer', 'p95'))} ms), against {ms(p('timerfd', 'p99'))} ms for a timerfd with "
            "nothing else running: that wake-up is the part no daemon on this one-vCPU guest can avoid, and the "
            f"target allows {HELD_MARGIN / 1e6:g} ms over it. The remaining {ms(held99 - reactor_timer99 - HELD_MARGIN)} ms "
            "is the daemon's work between its wake-up and the subscriber's read (draining the device, the engine, "
            "encoding, and on one vCPU whatever runs before the subscriber is scheduled). The figure moves by a "
            "millisecond or more from run to run.")
    thd = p("thdCommand", "p50")
    if thd and reactor and reactor > 0.2 * thd:
        out.append(
            f"- The ≤ 0.2 × triggerhappy target is out of reach even for the minimal C reactor in this run "
            f"(ratio {reactor / thd:.2f}): thd started the command {ms(thd)} ms (p50) after the key-down (spawn "
            f"floor {ms(p('spawn', 'p50'))} ms), far from the ~55 ms of the reference run quoted in issue 8.")
    pairing = {k: v for k, v in vmr.get("pairing", {}).items() if v["missed"]}
    for what, v in pairing.items():
        out.append(f"- {what}: {v['missed']} of {v['starts']} presses/spawns produced no sample (a missed hold).")
    return (["Notes:", "", *out, ""] if out else [])


def gap(x):
    """A signed difference in ms."""
    return "–" if x is None else f"{'+' if x >= 0 else '−'}{abs(x) / 1e6:.2f}"


HELD_MARGIN = 0.5e6     # `held` p99 within this of the C reactor's timer wake-up p99 (issue 15)
COMMAND_MARGIN = 0.3e6  # command start p50 within this of the C reactor's (issue 15)
ABUSE_MARGIN = 1e6      # p99 under 50 abusive clients within this of the idle figure (issue 13)
STATUS_ABUSED = 10e6    # a well-behaved client's `status` p99 under abuse (issue 13)
GESTURE_P50_MARGIN = 0.2e6  # a hold on a button with a doublePress: not slower than hold-only by more (p50)
GESTURE_P99_MARGIN = 1e6    # ... and p99 (a p99 of 200 samples moves by a millisecond from run to run)

TARGETS = (
    "Targets (issues 15 and 13) are relative to limits measured in the same boot: `held` p99 within "
    f"{HELD_MARGIN / 1e6:g} ms of the C reactor's own timer wake-up p99 (the reactor runs under the same load: "
    "the device tool and its subscriber), and never early; command start p50 within "
    f"{COMMAND_MARGIN / 1e6:g} ms of the C reactor's (issue 15 took its bare posix_spawn for the same one as "
    "actiond's: it is not, actiond's child also gets its own process group, its signals reset, its output "
    "pipes, /dev/null, closefrom and chdir; hence the row with the reactor spawning as actiond does, where the "
    "gap is the daemon's own work at the deadline); under 50 abusive socket clients, "
    f"`held` and command start p99 within {ABUSE_MARGIN / 1e6:g} ms of the same daemon's figures without "
    "them. Next to those, the fair rows: the same margins against the C reactor doing actiond's deadline "
    "work besides the spawn (its subscriber fed `held` and `performing` just before posix_spawn, back to "
    "epoll_wait after it), with its bare posix_spawn and with actiond's, and under abuse against that reactor "
    "under the same abuse (it runs while the same abusers hammer actiond), so that what is left is actiond's "
    "own work. Issue 16: a double press's "
    f"command starts within {COMMAND_MARGIN / 1e6:g} ms (p50) of the same button's hold command (each from its "
    "own event: the second key-down, the hold deadline), and a hold on a button that also has a doublePress is "
    f"not slower than on a hold-only button of the same daemon by more than {GESTURE_P50_MARGIN / 1e6:g} ms p50 "
    f"or {GESTURE_P99_MARGIN / 1e6:g} ms p99, or by more than the hold-only button's own two halves differ, "
    "whichever is larger (`pressed`, `held`, command start; the holds alternate between the two buttons in "
    "blocks); a short press's `released` "
    "there comes the window later, never sooner. Every verdict is computed "
    "from the figures in this document; a missed one says by how much.")


def held_row(vmr):
    """`held` lateness p99 against the C reactor's timer wake-up p99, and never early."""
    p = lambda k, q: vmr["series"].get(k, {}).get(q)  # noqa: E731
    v, rt = p("actiondHeld", "p99"), p("reactorTimer", "p99")
    if v is None or rt is None:
        return []
    early = vmr["early"].get("actiondHeld", 0) + vmr["early"].get("actiondCommand", 0)
    over = v - rt - HELD_MARGIN
    missed = ", ".join(x for x in [f"{early} early" if early else "",
                                   f"p99 {ms(over)} ms over reactor + {HELD_MARGIN / 1e6:g} ms" if over > 0 else ""]
                       if x)
    return [f"| `held` lateness, p99 (p50); early | {ms(v)} ms ({ms(p('actiondHeld', 'p50'))}); {early} early | "
            f"C reactor timer wake-up p99 {ms(rt)} ms (gap {gap(v - rt)}); timerfd alone {ms(p('timerfd', 'p99'))} | "
            f"never early, p99 ≤ reactor + {HELD_MARGIN / 1e6:g} ms | {verdict(not missed, missed)} |"]


def command_row(vmr):
    """Command start p50 against the C reactor's in the same boot."""
    p = lambda k, q: vmr["series"].get(k, {}).get(q)  # noqa: E731
    a, r = p("actiondCommand", "p50"), p("reactorCommand", "p50")
    if a is None or r is None:
        return []
    over = a - r - COMMAND_MARGIN
    return [f"| command start after the hold deadline, p50 | {ms(a)} ms | C reactor {ms(r)} ms (gap {gap(a - r)}); "
            f"posix_spawn floor {ms(p('spawn', 'p50'))} ms | within {COMMAND_MARGIN / 1e6:g} ms of the C reactor | "
            f"{verdict(over <= 0, f'{ms(over)} ms over reactor + {COMMAND_MARGIN / 1e6:g} ms')} |"]


def same_work_rows(vmr):
    """`held` p99 and command start p50 against the C reactor that does actiond's deadline work
    besides the spawn (writes `held` and `performing` to a subscriber just before it, returns
    to epoll_wait after it): what a daemon with a subscriber can reach on this guest."""
    p = lambda k, q: vmr["series"].get(k, {}).get(q)  # noqa: E731
    rows = []
    v, r = p("actiondHeld", "p99"), p("reactorSubHeld", "p99")
    if v is not None and r is not None:
        over = v - r - HELD_MARGIN
        rows.append(f"| `held` lateness p99, against a C reactor announcing it the same way | {ms(v)} ms | C reactor "
                    f"with a subscriber: `held` read p99 {ms(r)} ms (gap {gap(v - r)}) | ≤ that + "
                    f"{HELD_MARGIN / 1e6:g} ms | {verdict(over <= 0, f'{ms(over)} ms over it + {HELD_MARGIN / 1e6:g} ms')} |")
    a = p("actiondCommand", "p50")
    for limit, label, reactor, other in (
            ("reactorSubCommand", "command start p50, against the C reactor doing the same deadline work",
             "C reactor with a subscriber, no waitpid", f"plain reactor {ms(p('reactorCommand', 'p50'))}"),
            ("reactorSpawnCommand", "… and the same posix_spawn (process group, signals, pipes, /dev/null, closefrom, "
             "chdir)", "that C reactor spawning as actiond does",
             f"with the bare posix_spawn {ms(p('reactorSubCommand', 'p50'))}")):
        r = p(limit, "p50")
        if a is None or r is None:
            continue
        over = a - r - COMMAND_MARGIN
        rows.append(f"| {label} | {ms(a)} ms | {reactor} {ms(r)} ms (gap {gap(a - r)}; {other}) | within "
                    f"{COMMAND_MARGIN / 1e6:g} ms of it | "
                    f"{verdict(over <= 0, f'{ms(over)} ms over it + {COMMAND_MARGIN / 1e6:g} ms')} |")
    return rows


def abuse_reactor_rows(vmr):
    """actiond under the abusers against the C reactor (with a subscriber) under the same abuse."""
    p = lambda k, q: vmr["series"].get(k, {}).get(q)  # noqa: E731
    rows = []
    clients = vmr.get("abuse", {}).get("clients", 50)
    for key, limit, plain, label, plain_label in (
            ("actiondHeldAbuse", "reactorSubAbuseHeld", "reactorAbuseTimer", "`held` lateness",
             "plain reactor's timer wake-up"),
            ("actiondCommandAbuse", "reactorSubAbuseCommand", "reactorAbuseCommand", "command start",
             "plain reactor's")):
        a, r = p(key, "p99"), p(limit, "p99")
        if a is None or r is None:
            continue
        over = a - r - ABUSE_MARGIN
        rows.append(f"| {label} under {clients} abusive clients, p99, against the C reactor under the same abuse | "
                    f"{ms(a)} ms | C reactor with a subscriber, same abuse: p99 {ms(r)} ms (gap {gap(a - r)}); "
                    f"{plain_label} p99 {ms(p(plain, 'p99'))} | p99 ≤ that + {ABUSE_MARGIN / 1e6:g} ms | "
                    f"{verdict(over <= 0, f'{ms(over)} ms over it + {ABUSE_MARGIN / 1e6:g} ms')} |")
    a, r = p("actiondCommandAbuse", "p99"), p("reactorSpawnAbuseCommand", "p99")
    if a is not None and r is not None:
        over = a - r - ABUSE_MARGIN
        rows.append(f"| … against that reactor spawning as actiond does, same abuse | {ms(a)} ms | p99 {ms(r)} ms "
                    f"(gap {gap(a - r)}) | p99 ≤ that + {ABUSE_MARGIN / 1e6:g} ms | "
                    f"{verdict(over <= 0, f'{ms(over)} ms over it + {ABUSE_MARGIN / 1e6:g} ms')} |")
    return rows


def host_command_rows(host):
    """The issue 15 and 13 margins on the host's own CPU (`host_commands`: one core, no
    emulator): command start p50 against the C reactor doing the same deadline work, `held`
    p99 against its timer wake-up and against its `held`, and under the abusers p99 against
    idle and against the reactor under the same abuse."""
    c = host.get("commands")
    if not c:
        return []
    p = lambda k, q: c["summary"].get(k, {}).get(q)  # noqa: E731
    rows = []
    where = "on the host's own CPU (one core)"
    a, r = p("actiondIdleCommand", "p50"), p("reactorIdleCommand", "p50")
    over = a - r - COMMAND_MARGIN
    rows.append(f"| command start {where}, p50 (p99) | {ms(a)} ms ({ms(p('actiondIdleCommand', 'p99'))}) | C reactor "
                f"doing the same deadline work {ms(r)} ms (gap {gap(a - r)}) | within {COMMAND_MARGIN / 1e6:g} ms of "
                f"it | {verdict(over <= 0, f'{ms(over)} ms over it + {COMMAND_MARGIN / 1e6:g} ms')} |")
    v, rt, rh = p("actiondIdleHeld", "p99"), p("reactorIdleTimer", "p99"), p("reactorIdleHeld", "p99")
    over = v - rt - HELD_MARGIN
    rows.append(f"| `held` lateness {where}, p99 (p50) | {ms(v)} ms ({ms(p('actiondIdleHeld', 'p50'))}) | C reactor "
                f"timer wake-up p99 {ms(rt)} ms (gap {gap(v - rt)}) | p99 ≤ that + {HELD_MARGIN / 1e6:g} ms | "
                f"{verdict(over <= 0, f'{ms(over)} ms over it + {HELD_MARGIN / 1e6:g} ms')} |")
    over = v - rh - HELD_MARGIN
    rows.append(f"| … against the C reactor announcing it the same way | {ms(v)} ms | its `held` read p99 {ms(rh)} ms "
                f"(gap {gap(v - rh)}) | ≤ that + {HELD_MARGIN / 1e6:g} ms | "
                f"{verdict(over <= 0, f'{ms(over)} ms over it + {HELD_MARGIN / 1e6:g} ms')} |")
    for label, key in (("`held` lateness", "Held"), ("command start", "Command")):
        a, idle, r = p(f"actiondAbused{key}", "p99"), p(f"actiondIdle{key}", "p99"), p(f"reactorAbused{key}", "p99")
        missed = ", ".join(x for x in [
            f"{ms(a - idle - ABUSE_MARGIN)} ms over idle + {ABUSE_MARGIN / 1e6:g} ms" if a - idle > ABUSE_MARGIN else "",
            f"{ms(a - r - ABUSE_MARGIN)} ms over the reactor + {ABUSE_MARGIN / 1e6:g} ms" if a - r > ABUSE_MARGIN else ""]
            if x)
        rows.append(f"| {label} under {c['clients']} abusive clients {where}, p99 | {ms(a)} ms | idle p99 {ms(idle)} ms "
                    f"(gap {gap(a - idle)}); C reactor doing the same work, same abuse: p99 {ms(r)} ms (gap "
                    f"{gap(a - r)}) | p99 ≤ each + {ABUSE_MARGIN / 1e6:g} ms | {verdict(not missed, missed)} |")
    return rows


HOST_COMMAND_SERIES = (
    ("actiondIdleCommand", "actiond command start", "hold deadline → the recording command's first instruction"),
    ("reactorIdleCommand", "C reactor doing the same deadline work: command start",
     "the same; `held` and `performing` to its subscriber first, back to epoll after the spawn"),
    ("actiondIdleHeld", "actiond `held` → subscriber", "hold deadline → a subscriber's read()"),
    ("reactorIdleHeld", "C reactor: `held` → subscriber", "the same, through its socketpair"),
    ("reactorIdleTimer", "C reactor timerfd overshoot", "hold deadline → the reactor's timerfd read"),
    ("actiondAbusedCommand", "actiond command start, abused", "as above, 50 abusive clients on actiond's socket"),
    ("reactorAbusedCommand", "C reactor command start, same abuse", "as above, while the abusers hammer actiond"),
    ("actiondAbusedHeld", "actiond `held` → subscriber, abused", "as above, 50 abusive clients on actiond's socket"),
    ("reactorAbusedHeld", "C reactor: `held` → subscriber, same abuse", "as above, while the abusers hammer actiond"),
    ("reactorAbusedTimer", "C reactor timerfd overshoot, same abuse", "as above, while the abusers hammer actiond"),
)


def host_command_section(host):
    c = host.get("commands")
    if not c:
        return []
    rows = ["| series | n | min | p50 | p99 | max | measured from → to |", "|---|---:|---:|---:|---:|---:|---|"]
    for key, label, what in HOST_COMMAND_SERIES:
        v = c["summary"].get(key)
        if v and v.get("n"):
            rows.append(f"| {label} | {v['n']} | {ms(v['min'])} | {ms(v['p50'])} | {ms(v['p99'])} | {ms(v['max'])} | "
                        f"{what} |")
    cpu = c.get("actiondAbusedCPUSeconds", [])
    missing = {k: v for k, v in c.get("missed", {}).items() if v}
    return [
        "## On the host's own CPU: command start and `held`, one core", "",
        "The daemon itself (engine, loop, socket server, process runner: `actiond-test-helper serve-fifo`, which "
        "runs actiond's `Daemon` with its button read from a FIFO of kernel `input_event` records, since the "
        "host's kernel has no uinput) against the C reactor doing the same deadline work (`benchtool reactor "
        "--subscriber --noblock --spawn` on a FIFO of its own: the same posix_spawn as actiond's, its pipes and "
        "file actions readied at the key-down), both fed the same presses by `benchtool fifopress` "
        f"(hold threshold {HOST_HOLD_MS} ms, holds of threshold + 30 ms, 70 ms apart), with every process of a "
        f"series pinned to CPU {c['cpu']}: the one-vCPU guest's situation without the emulator. {c['rounds']} "
        f"interleaved rounds of {c['holds']} holds, idle and while {c['clients']} abusive clients hammer actiond's "
        "socket (the reactor runs then too, while actiond serves them); commands paired with their own press by "
        "`ACTIOND_PRESS_TIME`, none early" + (f"; missing samples: {missing}" if missing else "") + ". "
        f"actiond's CPU during its abused holds: {', '.join(f'{x:.2f}' for x in cpu)} s per round of "
        f"{c['holds'] * (HOST_HOLD_MS + 100) / 1000:.0f} s. Milliseconds.",
        "", *rows,
    ]


GESTURE_COMPARED = (("`pressed` → subscriber", "gPlainPressed", "gDoublePressed"),
                    ("`held` lateness", "gPlainHeld", "gDoubleHeld"),
                    ("hold command start", "gPlainCommand", "gDoubleHoldCommand"))


def gesture_rows(vmr):
    """Summary rows of 05-gestures: the double press's command start, the holds of the two
    buttons (hold only / + doublePress) side by side, and what the window costs a short press."""
    p = lambda k, q: vmr["series"].get(k, {}).get(q)  # noqa: E731
    if not p("gPlainHeld", "n"):
        return []
    rows = []
    d, h = p("gDoubleCommand", "p50"), p("gDoubleHoldCommand", "p50")
    over = d - h - COMMAND_MARGIN if None not in (d, h) else 0
    rows += [] if None in (d, h) else [f"| double press: command start after the second key-down, p50 (p99) | {ms(d)} ms "
                f"({ms(p('gDoubleCommand', 'p99'))}) | the same button's hold: command start after its deadline p50 "
                f"{ms(h)} ms (gap {gap(d - h)}) | ≤ the hold's + {COMMAND_MARGIN / 1e6:g} ms (p50) | "
                f"{verdict(over <= 0, f'{ms(over)} ms over the hold + {COMMAND_MARGIN / 1e6:g} ms')} |"]
    for label, plain, double in GESTURE_COMPARED:
        a50, a99, b50, b99 = p(plain, "p50"), p(plain, "p99"), p(double, "p50"), p(double, "p99")
        n50, n99 = p(plain + "B", "p50"), p(plain + "B", "p99")
        m50, m99 = p(plain + "A", "p50"), p(plain + "A", "p99")
        have_noise = None not in (n50, n99, m50, m99)
        noise = (f"; noise, the hold-only button's own two halves: {gap(n50 - m50)} / {gap(n99 - m99)}"
                 if have_noise else "")
        # Allowed: the fixed margin, or what two halves of one configuration differ by, if more.
        l50 = max(GESTURE_P50_MARGIN, abs(n50 - m50) if have_noise else 0)
        l99 = max(GESTURE_P99_MARGIN, abs(n99 - m99) if have_noise else 0)
        early = vmr["early"].get(double, 0)
        o50, o99 = b50 - a50 - l50, b99 - a99 - l99
        missed = ", ".join(x for x in [f"{early} early" if early else "",
                                       f"p50 by {ms(o50)} ms" if o50 > 0 else "",
                                       f"p99 by {ms(o99)} ms" if o99 > 0 else ""] if x)
        rows.append(f"| {label} with a doublePress assigned, p50 / p99 | {ms(b50)} / {ms(b99)} ms | the same hold on "
                    f"the hold-only button, same daemon, alternating blocks: {ms(a50)} / {ms(a99)} ms (gap "
                    f"{gap(b50 - a50)} / {gap(b99 - a99)}, ratio {b50 / a50:.2f} p50{noise}) | not slower beyond "
                    f"noise: gap ≤ max({GESTURE_P50_MARGIN / 1e6:g} ms, noise) p50 = {ms(l50)}, ≤ "
                    f"max({GESTURE_P99_MARGIN / 1e6:g} ms, noise) p99 = {ms(l99)} | "
                    f"{verdict(not missed, missed + ' beyond it')} |")
    g = vmr.get("gestures", {})
    w = g.get("windowMs", 300) * 1e6
    r50, r99, rmin = p("gDoubleReleased", "p50"), p("gDoubleReleased", "p99"), p("gDoubleReleased", "min")
    if r50 is not None:
        early = sum(1 for x in [rmin] if x is not None and x < w)
        rows.append(f"| a short press's `released` on the doublePress button (the cost of configuring it), p50 (p99) | "
                    f"{ms(r50)} ms ({ms(r99)}) | the window {w / 1e6:g} ms: + {ms(r50 - w)} ms p50, + {ms(r99 - w)} "
                    f"p99; hold-only button {ms(p('gPlainReleased', 'p50'))} ms ({ms(p('gPlainReleased', 'p99'))}) | "
                    f"the window, never less (no target beyond it) | "
                    f"{verdict(not early, f'min {ms(rmin)} ms, before the window ended')} |")
    return rows


def gesture_section(vmr):
    """The section of 05-gestures."""
    series = vmr["series"]
    if not series.get("gPlainHeld", {}).get("n"):
        return []
    p = lambda k, q: series.get(k, {}).get(q)  # noqa: E731
    g = vmr.get("gestures", {})
    gaps = g.get("gapMs") or [0, 0]
    out = [
        "### Gestures: a double press, and what a doublePress costs the other gestures",
        "",
        "One daemon with two buttons that differ only in a `doublePress` assignment (window "
        f"{g.get('windowMs', 300)} ms), each on a uinput device of its own, one subscriber (Tests/vm/bench/"
        f"05-gestures.sh): the same holds as above on each ({p('gPlainHeld', 'n')} per button) in blocks of "
        f"{g.get('block', GESTURE_BLOCK)} alternating hold-only, +doublePress, +doublePress, hold-only, …, so both see "
        f"the same guest at the same time; then {g.get('doubles')} double presses (40 ms down, 80 ms up, 40 ms down, "
        f"350 ms up: the second key-down {gaps[0]:.1f}–{gaps[1]:.1f} ms after the first by the kernel's stamps), "
        "each command paired by its ACTIOND_PRESS_TIME, which for a "
        f"double press is the second key-down's kernel stamp; then {p('gDoubleReleased', 'n')} short presses on "
        "each button. The hold-only button's own odd and even blocks (A, B) show how much two halves of one "
        "configuration differ: the noise against which the gap between the buttons is read.",
        "",
        f"By the kernel's stamps {g.get('validDoubles', '?')} of the {g.get('doubles')} double presses were what "
        "the device tool meant (first press shorter than the threshold, second key-down within the window, a "
        "window apart from the press before; likewise every hold longer than the threshold, every short press "
        "shorter)"
        + ("; guest stalls (the tool writing a key event late) stretched or shrank "
           + ", ".join(f"{v} press(es) on the {'hold-only' if k == 'Plain' else 'doublePress'} button"
                       for k, v in g.get("disturbed", {}).items() if v)
           + ": left out, with what they performed ("
           + (", ".join(f"{v} `{k}` command(s)" for k, v in g.get("leftOut", {}).items()) or "nothing") + ")"
           if any(g.get("disturbed", {}).values()) else "; none was disturbed by a guest stall")
        + ". Every doublePress command is paired with its own second key-down.",
        "",
        *table(["gDoubleCommand", "gDoublePressedEvent", "gPlainPressed", "gDoublePressed", "gPlainHeld", "gDoubleHeld",
                "gPlainCommand", "gDoubleHoldCommand", "gPlainReleased", "gDoubleReleased"], series),
        "",
        "| figure | hold-only | + doublePress | gap | ratio | hold-only A | hold-only B | noise (B − A) | "
        "02-actiond (one button, earlier in this boot) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, plain, double in GESTURE_COMPARED:
        ref = {"gPlainPressed": "actiondPressed", "gPlainHeld": "actiondHeld", "gPlainCommand": "actiondCommand"}[plain]
        for q in ("p50", "p99"):
            a, b, ha, hb, r = p(plain, q), p(double, q), p(plain + "A", q), p(plain + "B", q), p(ref, q)
            if None in (a, b):
                continue
            out.append(f"| {label} {q} | {ms(a)} | {ms(b)} | {gap(b - a)} | {b / a:.2f} | {ms(ha)} | {ms(hb)} | "
                       f"{gap(hb - ha) if None not in (ha, hb) else '–'} | {ms(r)} |")
    out += ["", "Milliseconds. `released` on the doublePress button comes once the window has passed: a short press "
            "there is announced (and its hint spoken) the window later; a press, a hold and a double press are "
            "not delayed. On a button without doublePress nothing waits.", ""]
    return out


def mqtt_rows(vmr):
    """07-mqtt's summary rows: the MQTT subscriber's `long_press` next to the socket
    subscriber's `held` of the same holds; the idle bridge's wake-ups and memory."""
    series = vmr["series"]
    mq, so, gap = series.get("mqttLongPress", {}), series.get("mqttHeld", {}), series.get("mqttGap", {})
    if not mq.get("n"):
        return []
    rows = [f"| key-down → MQTT subscriber (`long_press`, actiond-mqtt + mosquitto on the guest's loopback), "
            f"p50 (p99) | {ms(mq['p50'])} ms ({ms(mq['p99'])}) | `held` → socket subscriber of the same "
            f"{so.get('n')} holds {ms(so.get('p50'))} ms ({ms(so.get('p99'))}); MQTT − socket hold by hold "
            f"{ms(gap.get('p50'))} ms ({ms(gap.get('p99'))}) | (no target) | – |"]
    idle = vmr.get("bridgeIdle")
    if idle:
        # The default keepalive (60 s): a housekeeping timer every 20 s, a PINGREQ's answer per
        # minute; one more of each for where the window falls.
        most = idle["seconds"] // 20 + idle["seconds"] // 60 + 2
        woke = idle["switches"]
        rows.append(f"| wakeups of the idle actiond-mqtt over {idle['seconds']} s | {woke} | keepalive "
                    f"60 s: a timer every 20 s and the ping's answer, at most {most} | only the keepalive | "
                    f"{verdict(woke <= most, f'{woke} wakeups')} |")
    start = vmr.get("bridgeMemory", {}).get("start")
    if start:
        rows.append(f"| actiond-mqtt RssAnon / VmRSS after start | {kib(start['rssAnonkB'])} / {kib(start['vmRSSkB'])} "
                    "| (libmosquitto, OpenSSL) | (no target) | – |")
    return rows


def abuse_rows(vmr, host):
    """`held` and command start with and without abusive clients (same boot), and the host's
    well-behaved client under abuse."""
    p = lambda k, q: vmr["series"].get(k, {}).get(q)  # noqa: E731
    rows = []
    clients = vmr.get("abuse", {}).get("clients", 50)
    for key, label in (("actiondHeld", "`held` lateness"), ("actiondCommand", "command start")):
        a, i = p(key + "Abuse", "p99"), p(key, "p99")
        if a is None or i is None:
            continue
        over = a - i - ABUSE_MARGIN
        early = vmr["early"].get(key + "Abuse", 0)
        missed = ", ".join(x for x in [f"{early} early" if early else "",
                                       f"{ms(over)} ms over idle + {ABUSE_MARGIN / 1e6:g} ms" if over > 0 else ""] if x)
        rows.append(f"| {label} under {clients} abusive socket clients, p99 (p50) | {ms(a)} ms "
                    f"({ms(p(key + 'Abuse', 'p50'))}) | without them, same boot: p99 {ms(i)} ms (gap {gap(a - i)}) | "
                    f"p99 ≤ idle + {ABUSE_MARGIN / 1e6:g} ms | {verdict(not missed, missed)} |")
    rows += abuse_reactor_rows(vmr)
    a = host.get("abuse")
    if a:
        v = a["abused"]["p99"]
        rows.append(f"| a well-behaved client's `status` round trip under {a['clients']} abusive clients (host), "
                    f"p99 (p50) | {ms(v)} ms ({ms(a['abused']['p50'])}) | idle p99 {ms(a['idle']['p99'])} ms | "
                    f"< {STATUS_ABUSED / 1e6:g} ms | {verdict(v < STATUS_ABUSED, f'by {ms(v - STATUS_ABUSED)} ms')} |")
    return rows


LOADED_ROWS = [
    # (label, actiond series, limit series, limit label, percentiles)
    ("`pressed` → subscriber", "actiondPressed", "reactorPress", "C reactor key-down → subscriber", ("p50", "p99")),
    ("`held` lateness", "actiondHeld", "reactorTimer", "C reactor timer wake-up", ("p50", "p99")),
    ("command start", "actiondCommand", "reactorCommand", "C reactor command start", ("p50", "p95")),
    ("command start", "actiondCommand", "spawn", "posix_spawn floor", ("p50", "p95")),
    ("`held` lateness", "actiondHeld", "reactorSubHeld", "C reactor with a subscriber: `held` read", ("p50", "p99")),
    ("command start", "actiondCommand", "reactorSubCommand", "C reactor with a subscriber, no waitpid",
     ("p50", "p95")),
]


def loaded_section(vmr, vml, cores):
    """Idle boot against the loaded boot (one host core busy), actiond against its limits."""
    pi = lambda k, q: vmr["series"].get(k, {}).get(q)  # noqa: E731
    pl = lambda k, q: vml["series"].get(k, {}).get(q)  # noqa: E731
    ld = vml.get("loaded", {})
    n_idle, n_loaded = pi("actiondCommand", "n"), pl("actiondCommand", "n")
    out = [
        "## Loaded host (one core busy)",
        "",
        f"A second VM boot of the same scenarios, started right after the first, while "
        f"`{ld.get('stress', 'stress-ng --cpu 1 --cpu-method all')}` keeps one of the host's "
        f"{cores} cores busy"
        + (f" (host load average {ld['hostLoad']:.1f} at the end of the boot)" if ld.get("hostLoad") is not None else "")
        + f"; {n_loaded} samples per figure against {n_idle} in the idle boot. qemu's single vCPU thread then "
        "competes with stress-ng for a core, so the guest loses the CPU for whole host time slices; every figure "
        "of a row is measured in the same boot, the C reactor and posix_spawn alone just before actiond. The gap "
        "is actiond − the limit on its row; its growth from the idle boot to the loaded one is what the load costs "
        "actiond beyond what it costs a minimal reactor. Milliseconds.",
        "",
        "| figure | compared with | idle: actiond | idle: limit | idle: gap | loaded: actiond | loaded: limit | "
        "loaded: gap | gap growth |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    growth = []
    for label, key, limit, limit_label, qs in LOADED_ROWS:
        for q in qs:
            a_i, l_i, a_l, l_l = pi(key, q), pi(limit, q), pl(key, q), pl(limit, q)
            if None in (a_i, l_i, a_l, l_l):
                continue
            g_i, g_l = a_i - l_i, a_l - l_l
            if limit != "spawn":  # the floor takes no input: the reactor rows say where actiond loses time
                growth.append((g_l - g_i, f"{label} {q} ({gap(g_i)} ms idle, {gap(g_l)} ms loaded)"))
            out.append(f"| {label} {q} | {limit_label} | {ms(a_i)} | {ms(l_i)} | {gap(g_i)} | {ms(a_l)} | {ms(l_l)} | "
                       f"{gap(g_l)} | {gap(g_l - g_i)} |")
    early = {k: v for k, v in vml.get("early", {}).items() if v and k in SERIES}
    missed = {k: v["missed"] for k, v in vml.get("pairing", {}).items() if v["missed"]}
    out += ["", "In the loaded boot: early samples "
            + (", ".join(f"{SERIES[k][0]} {v}" for k, v in early.items()) if early else "none")
            + "; presses or spawns without a sample "
            + (", ".join(f"{k} {v}" for k, v in missed.items()) if missed else "none") + "."]
    growth.sort(reverse=True)
    if growth:
        worst = [f"{what}: {gap(g)} ms" for g, what in growth if g > 0.1e6]
        out += ["", "Where actiond loses time under load beyond what the C reactor loses (growth of the gap to "
                "the reactor, over 0.1 ms, largest first): "
                + ("; ".join(worst) if worst else "nowhere: every gap to the reactor grew by 0.1 ms or less") + ". "
                "Read with the rows above: `pressed` is the device-read → announcement path alone; `held` adds "
                "the timer wake-up, and on one vCPU its subscriber reads it only once the daemon blocks, usually "
                "after the command's posix_spawn; command start is the whole hold path, wake-up → engine → "
                "posix_spawn → the child's first instruction."]
    return out + [""]


HAND_WRITTEN = "(hand-written, not generated)"


def hand_written(doc):
    """Sections of the existing document whose heading says HAND_WRITTEN (one-off measurements
    such as issue 15's with/without `sched_yield` boot), carried over as they are: each runs
    from its heading to the next heading of the same or a higher level."""
    if not os.path.exists(doc):
        return []
    with open(doc) as f:
        old = f.read().split("\n")
    out, level = [], None
    for line in old:
        m = re.match(r"(#+) ", line)
        if m and level is not None and len(m.group(1)) <= level:
            level = None
        if m and HAND_WRITTEN in line:
            level = len(m.group(1))
        if level is not None:
            out.append(line)
    # Exactly one blank line after them, however many the document had: regenerating from
    # the same figures gives the same document.
    while out and out[-1] == "":
        out.pop()
    return out + [""] if out else out


FEEDBACK_TARGET = 5e6  # deadline → the first feedback write reaching the device, p99 (issue 32)


def target_row(what, p50, p99, where, target, value, limit, strict=False):
    """A row of the page's table (what you wait for | p50 | p99 | where | target | verdict): the
    target is met when `value` (the figure it is about) is at most `limit` (below it when `strict`)."""
    met = value < limit if strict else value <= limit
    return f"| {what} | {ms(p50)} ms | {ms(p99)} ms | {where} | {target} | {verdict(met, f'by {ms(value - limit)} ms')} |"


def user_page(host, vmr, notebook_link, plot_path, hand):
    """docs/benchmarks.md, the page a user reads: what a user waits for against its target, in
    one table computed from the same figures and margins as the notebook's summary; a plot; how
    to run `make bench`; a link to the notebook. Its hand-written sections (figures measured alone
    after the last full run, with their dates) are carried over as the notebook's are."""
    m = host["machine"]
    vm_where = "VM, idle host"
    lines = [
        "# Benchmarks",
        "",
        f"How quickly actiond answers a button, measured by `make bench` on {m['date']}. Every figure, the "
        f"method and the experiments behind them are in [the lab notebook]({notebook_link}). Generated: rerun "
        "`make bench` rather than editing this file (sections marked hand-written are kept as they are).",
        "",
        "## Summary",
        "",
        "| what you wait for | p50 | p99 | where | target | verdict |",
        "|---|---:|---:|---|---|---|",
    ]
    rows = []
    series = vmr["series"] if vmr else {}
    p = lambda k, q: series.get(k, {}).get(q)  # noqa: E731
    if vmr:
        v = p("actiondPressed", "p99")
        if v is not None:
            rows.append(target_row("key-down → `pressed` read by a socket subscriber", p("actiondPressed", "p50"), v,
                                   vm_where, "p99 ≤ 2 ms", v, 2e6))
        v, rt = p("actiondHeld", "p99"), p("reactorTimer", "p99")
        if v is not None and rt is not None:
            early = vmr["early"].get("actiondHeld", 0) + vmr["early"].get("actiondCommand", 0)
            over = v - rt - HELD_MARGIN
            missed = ", ".join(x for x in [f"{early} early" if early else "",
                                           f"by {ms(over)} ms" if over > 0 else ""] if x)
            rows.append(f"| hold threshold → `held` read by a socket subscriber | {ms(p('actiondHeld', 'p50'))} ms | "
                        f"{ms(v)} ms | {vm_where} | never early; p99 ≤ the C reactor's timer wake-up "
                        f"({ms(rt)} ms) + {HELD_MARGIN / 1e6:g} ms | {verdict(not missed, missed)} |")
        a, r = p("actiondCommand", "p50"), p("reactorCommand", "p50")
        if a is not None and r is not None:
            over = a - r - COMMAND_MARGIN
            rows.append(f"| hold threshold → the command running | {ms(a)} ms | {ms(p('actiondCommand', 'p99'))} ms | "
                        f"{vm_where} | p50 ≤ the C reactor's ({ms(r)} ms) + {COMMAND_MARGIN / 1e6:g} ms | "
                        f"{verdict(over <= 0, f'by {ms(over)} ms')} |")
    c = host.get("commands")
    if c:
        q = lambda k, x: c["summary"].get(k, {}).get(x)  # noqa: E731
        a, r = q("actiondIdleCommand", "p50"), q("reactorIdleCommand", "p50")
        over = a - r - COMMAND_MARGIN
        rows.append(f"| … the same without the emulator | {ms(a)} ms | {ms(q('actiondIdleCommand', 'p99'))} ms | "
                    "host, one core | p50 ≤ the C reactor doing the same deadline work "
                    f"({ms(r)} ms) + {COMMAND_MARGIN / 1e6:g} ms | {verdict(over <= 0, f'by {ms(over)} ms')} |")
    if vmr:
        rows += feedback_rows(vmr, vm_where)
        v = p("mqttLongPress", "p50")
        if v is not None:
            rows.append(f"| hold threshold → `long_press` at an MQTT subscriber (actiond-mqtt, mosquitto) | {ms(v)} ms | "
                        f"{ms(p('mqttLongPress', 'p99'))} ms | {vm_where}, broker on the guest's loopback | "
                        "(no target) | – |")
    best = host.get("mqtt", {}).get("setups", {}).get("nodelay")
    if best:
        v = best["total"]["p50"]
        rows.append(target_row("MQTT switch command published → its state received", v, best["total"]["p99"],
                               "host loopback, mosquitto `set_tcp_nodelay true`",
                               f"p50 ≤ {MQTT_ROUND_TRIP_TARGET / 1e6:g} ms", v, MQTT_ROUND_TRIP_TARGET))
    a = host.get("abuse")
    if a:
        v = a["abused"]["p99"]
        rows.append(target_row(f"a well-behaved client's `status` while {a['clients']} abusive clients hammer the socket",
                               a["abused"]["p50"], v, "host", f"p99 < {STATUS_ABUSED / 1e6:g} ms", v, STATUS_ABUSED,
                               strict=True))
    if vmr and p("actiondHeldAbuse", "p99") is not None:
        v, idle = p("actiondHeldAbuse", "p99"), p("actiondHeld", "p99")
        over = v - idle - ABUSE_MARGIN
        rows.append(f"| hold threshold → `held`, {vmr.get('abuse', {}).get('clients', 50)} abusive clients on the socket | "
                    f"{ms(p('actiondHeldAbuse', 'p50'))} ms | {ms(v)} ms | {vm_where} | p99 ≤ without them "
                    f"({ms(idle)} ms) + {ABUSE_MARGIN / 1e6:g} ms | {verdict(over <= 0, f'by {ms(over)} ms')} |")
    if vmr:
        start = vmr["actiondMemory"]["start"]
        rows.append(f"| memory: VmRSS (RssAnon) after start | {kib(start['vmRSSkB'])} ({kib(start['rssAnonkB'])}) | | "
                    f"VM | ≤ 8 MiB (≤ 1 MiB) | "
                    + verdict(start["vmRSSkB"] <= 8192 and start["rssAnonkB"] <= 1024, ", ".join(
                        x for x in [f"VmRSS by {kib(start['vmRSSkB'] - 8192)}" if start["vmRSSkB"] > 8192 else "",
                                    f"RssAnon by {kib(start['rssAnonkB'] - 1024)}" if start["rssAnonkB"] > 1024 else ""]
                        if x)) + " |")
        idle = vmr.get("idle", {})
        woke = idle.get("switches")
        rows.append(f"| wakeups of the idle daemon over {idle.get('seconds')} s | {woke} | | VM | 0 | "
                    f"{verdict(woke == 0, f'{woke} wakeups')} |")
    r = host["recognizer"]
    rows.append(f"| the press recognizer's throughput | {r['eventsPerSecondMedian'] / 1e6:.1f} M events/s | | host | "
                f"(no target; {r['allocationsPerEvent']:g} heap allocations per event) | – |")
    lines += rows
    where = [f"Host: {m['cpu']}, {m['cores']} cores, load average {m['load']:.1f} at the start (a shared machine)."]
    if vmr and vmr.get("vm"):
        where.append(f"VM: qemu {vmr['vm']['qemu']} TCG (no KVM), 1 vCPU, on that host with nothing else of the run "
                     "going on; TCG runs about 8× slower than the host, so a VM figure is read against the C reactor "
                     "(a minimal epoll + timerfd + posix_spawn program) measured in the same boot, as the targets "
                     "are.")
    lines += ["", " ".join(where), ""]
    if plot_path:
        lines += [f"![command start latency]({plot_path})", "",
                  "Hold threshold → command start in the VM, as a CDF: actiond next to the C reactor, the posix_spawn "
                  "and fork + execve floors, a python-evdev script and triggerhappy (from its key-down: it has no "
                  "holds).", ""]
    lines += hand
    lines += [
        "## Running it",
        "",
        "    make bench                                   # everything: about 40 minutes on 2 cores",
        "    make bench-peers BENCH_N=100 BENCH_IDLE_S=10 # a quick look, fewer samples",
        "    make bench-peers BENCH_LOADED=0              # without the loaded boot (about half the time)",
        "    make bench-mqtt                              # or bench-abuse, bench-admission: one host figure alone",
        "",
        "`make bench` builds release binaries, measures on the host, boots the VM tier's kernel twice under "
        "qemu (once on an idle host, once with one host core kept busy by stress-ng) and rewrites this page, "
        f"[the notebook]({notebook_link}) and the plots. It only measures: no figure fails it. Run it on an "
        "otherwise quiet machine and compare figures of one run with each other, not across runs. Its packages "
        "(gnuplot, stress-ng, python3-evdev, mosquitto, …) come from `make bench-deps`; the variables and files "
        "are in Tests/bench/README.md. The raw figures stay in `.build/bench/`, from which "
        "`Tests/bench/bench.py report` rewrites the pages without measuring again.",
        "",
    ]
    return lines


def report(args):
    with open(args.host) as f:
        host = json.load(f)
    vmr, samples, commands_plot = None, {}, False
    if os.path.exists(args.vm):
        with open(args.vm) as f:
            vmr = json.load(f)
        with open(args.vm.replace(".json", "-samples.json")) as f:
            samples = json.load(f)
    vml = None
    if args.vm_loaded:
        with open(args.vm_loaded) as f:
            vml = json.load(f)
    os.makedirs(args.plots, exist_ok=True)
    m = host["machine"]
    # The notebook's hand-written sections stay in it; before there was a notebook they were
    # in the page itself, so the first report moves them there.
    notebook = args.notebook or os.path.join(os.path.dirname(args.doc), "benchmarks-notebook.md")
    had_notebook = os.path.exists(notebook)
    notebook_hand = hand_written(notebook if had_notebook else args.doc)
    page_hand = hand_written(args.doc) if had_notebook else []
    rel = os.path.relpath(args.plots, os.path.dirname(os.path.abspath(notebook)))
    page_rel = os.path.relpath(args.plots, os.path.dirname(os.path.abspath(args.doc)))
    notebook_link = os.path.relpath(os.path.abspath(notebook), os.path.dirname(os.path.abspath(args.doc)))
    page_link = os.path.relpath(os.path.abspath(args.doc), os.path.dirname(os.path.abspath(notebook)))
    lines = [
        "# Benchmarks: the lab notebook",
        "",
        f"Every figure of the last `make bench`, the method, and the experiments behind them; the summary a user "
        f"reads is [{os.path.basename(args.doc)}]({page_link}).",
        "",
        f"Generated by `make bench` on {m['date']} — rerun it rather than editing this file.",
        f"Host: {m['cpu']}, {m['cores']} cores, Linux {m['kernel']}, load average {m['load']:.1f} at the start "
        "(a shared machine: compare figures of one run with each other, not across runs).",
    ]
    if vmr and vmr.get("vm"):
        v = vmr["vm"]
        lines.append(f"VM: qemu {v['qemu']} TCG (no KVM), 1 vCPU, Debian kernel {v['kernel']}; every peer ran in "
                     "the same boot, one after the other, on the same uinput key.")
    lines += ["", "## Summary", ""]
    series = vmr["series"] if vmr else {}
    if vmr:
        p = lambda k, q: series.get(k, {}).get(q)  # noqa: E731
        hold = vmr["holdMs"]
        rows = ["| figure | actiond | compared with | target | verdict |", "|---|---:|---|---|---|"]
        v = p("actiondPressed", "p99")
        rows.append(f"| `pressed` read by a subscriber, p99 (p50) | {ms(v)} ms ({ms(p('actiondPressed', 'p50'))}) | "
                    f"raw epoll round trip p99 {ms(p('reactorPress', 'p99'))} ms | ≤ 2 ms (moonshot 1 ms) | "
                    f"{verdict(v <= 2e6, f'by {ms(v - 2e6)} ms')} |")
        rows += held_row(vmr)
        rows += command_row(vmr)
        rows += same_work_rows(vmr)
        a = p("actiondCommand", "p50")
        t = p("thdCommand", "p50")
        if t:
            ratio = a / t
            rows.append(f"| … versus triggerhappy (key-down → command), p50 | {ms(a)} ms | thd {ms(t)} ms: ratio "
                        f"{ratio:.2f} | ≤ 0.2 × thd | {verdict(ratio <= 0.2, f'ratio {ratio:.2f}')} |")
        py = p("pythonCommand", "p50")
        if py:
            rows.append(f"| … versus a python-evdev script, p50 | {ms(a)} ms | python {ms(py)} ms: ratio "
                        f"{a / py:.2f} | (no target) | – |")
        mem = vmr["actiondMemory"]
        idle = vmr.get("idle", {})
        wakeups = idle.get("switches")
        rows.append(f"| wakeups of the idle daemon over {idle.get('seconds')} s | {wakeups} | – | 0 | "
                    f"{verdict(wakeups == 0, f'{wakeups} wakeups')} |")
        start = mem["start"]
        pm = vmr.get("pythonMemory", {}).get("holds")
        tm = vmr.get("thdMemory", {}).get("presses")
        peers = "; ".join(x for x in [
            f"python {kib(pm['rssAnonkB'])} / {kib(pm['vmRSSkB'])}" if pm else "",
            f"thd {kib(tm['rssAnonkB'])} / {kib(tm['vmRSSkB'])}" if tm else ""] if x)
        over = [f"RssAnon by {kib(start['rssAnonkB'] - 1024)}" if start["rssAnonkB"] > 1024 else "",
                f"VmRSS by {kib(start['vmRSSkB'] - 8192)}" if start["vmRSSkB"] > 8192 else ""]
        rows.append(f"| RssAnon / VmRSS after start | {kib(start['rssAnonkB'])} / {kib(start['vmRSSkB'])} | {peers} | "
                    f"≤ 1 MiB / ≤ 8 MiB | {verdict(not any(over), ', '.join(x for x in over if x))} |")
        if "blast" in mem:
            # From just before the blast: after the holds, or after the abuse phase when there was one.
            before = mem.get("abused", mem["holds"])
            growth = mem["blast"]["vmRSSkB"] - before["vmRSSkB"]
            b = vmr.get("blast", {})
            abused = series.get("actiondCommandAbuse", {}).get("n")
            rows.append(f"| VmRSS growth over {2 * b.get('presses', 0):,} key events | {growth} kB (RssAnon "
                        f"{mem['blast']['rssAnonkB'] - before['rssAnonkB']} kB) | after "
                        f"{vmr['series']['actiondCommand']['n']} holds"
                        + (f" and {abused} under abusive clients" if abused else "") + " | "
                        f"≤ 64 kB | {verdict(growth <= 64, f'by {growth - 64} kB')} |")
        rows += mqtt_rows(vmr)
        rows += mqtt_host_rows(host)
        rows += abuse_rows(vmr, host)
        rows += host_command_rows(host)
        rows += gesture_rows(vmr)
        lines += rows
        lines += ["", TARGETS]
    r, st, fo = host["recognizer"], host["status"], host["fanout"]
    cl, rd = host["configLoad"], host["ready"]
    lines += [
        "",
        f"On the host (no targets): the recognizer handles {r['eventsPerSecondMedian'] / 1e6:.0f} M events/s with "
        f"{r['allocationsPerEvent']:g} heap allocations per event; `status` answers {st['1']['p50']:,.0f} requests/s "
        f"to one client and {st['16']['p50']:,.0f} to 16; one announcement reaches all 1,000 subscribers "
        f"{ms(fo['spread']['p50'] if 'spread' in fo else fo['last']['p50'] - fo['first']['p50'])} ms after the first (p50); 200 controls load in "
        f"{ms(cl['200']['p50'] - cl['1']['p50'])} ms; start → READY=1 takes {ms(rd['p50'])} ms with 10 controls.",
    ]
    if "abuse" in host:
        a = host["abuse"]
        lines += [
            "",
            f"Socket abuse on the host: a well-behaved client's `status` round trip is p50 {ms(a['idle']['p50'])} ms, "
            f"p99 {ms(a['idle']['p99'])} ms idle and p50 {ms(a['abused']['p50'])} ms, p99 {ms(a['abused']['p99'])} ms "
            f"(max {ms(a['abused']['max'])} ms) while {a['clients']} clients send garbage, 10 MB lines, connect storms "
            f"and never read (goal: p99 < 10 ms); the daemon used {a['daemonCPUSeconds']:.1f} s of CPU in "
            f"{a['wallSeconds']:.1f} s meanwhile.",
        ]
    if "admission" in host:
        lines += ["", admission_line(host["admission"])]
    lines += [
        "",
        "Under TCG the guest runs about 8× slower than the host, so absolute VM figures are inflated; "
        "the ratios to the limits and to the peers measured in the same boot are what count. The rows "
        "\"on the host's own CPU\" make the same comparisons without the emulator (section of that name).",
        "",
    ]
    if vmr:
        lines += notes(vmr)
    lines += notebook_hand
    lines += host_command_section(host)
    if host.get("commands"):
        lines.append("")
    if vmr:
        lines += [
            "## In the VM: the real evdev path",
            "",
            f"Hold threshold {vmr['holdMs']} ms; holds last threshold + 30 ms, presses are 70 ms apart (thd's 30 ms presses 170 ms "
            "apart: it runs one command at a time); milliseconds.",
            "",
            "### Announcements",
            "",
            *table(["actiondPressed", "reactorPress", "actiondHeld", "reactorSubHeld", "fbHeld", "actiondTick", "ledHeld", "actiondTickLed",
                    "mqttHeld",
                    "mqttLongPress", "mqttGap", "timerfd", "reactorTimer"],
                   series),
            "",
            "### Event → command start",
            "",
            *table(["actiondCommand", "reactorCommand", "reactorSubCommand", "reactorSpawnCommand", "fbCommand", "ledCommand",
                    "spawn", "fork", "pythonCommand", "thdCommand"], series),
            "",
            *abuse_table(vmr),
            *gesture_section(vmr),
            "Early samples (negative lateness): " + ", ".join(
                f"{SERIES[k][0]} {n}" for k, n in vmr["early"].items() if k in SERIES) + ".",
            "",
        ]
        if plot(samples, ["actiondPressed", "reactorPress", "actiondHeld", "timerfd"],
                "Announcement latency in the VM (CDF)", "milliseconds after the key-down / the hold deadline",
                os.path.join(args.plots, "vm-announcements.png")):
            lines += [f"![announcement latency]({rel}/vm-announcements.png)", ""]
        commands_plot = plot(samples, ["spawn", "fork", "reactorCommand", "actiondCommand", "pythonCommand",
                                       "thdCommand"],
                             "Event to command start in the VM (CDF)",
                             "milliseconds (thd from the key-down, the others from the hold deadline)",
                             os.path.join(args.plots, "vm-commands.png"))
        if commands_plot:
            lines += [f"![command start latency]({rel}/vm-commands.png)", ""]
        lines += ["### Memory (kB)", "", "| process | when | VmRSS | RssAnon |", "|---|---|---:|---:|"]
        for name, key in (("actiond", "actiondMemory"), ("actiond-mqtt (07-mqtt)", "bridgeMemory"),
                          ("python-evdev script", "pythonMemory"), ("thd", "thdMemory")):
            for when, mm in vmr.get(key, {}).items():
                lines.append(f"| {name} | {when} | {mm['vmRSSkB']} | {mm['rssAnonkB']} |")
        b = vmr.get("blast")
        if b:
            lines += ["", f"Memory growth: {b['presses']:,} presses ({2 * b['presses']:,} key events) sent at most 8 "
                      f"ahead of the daemon's `released` announcements, of which a subscriber received "
                      f"{b['releasedSeen']:,} in {b['seconds']:.1f} s ({b['releasedSeen'] / b['seconds']:,.0f} "
                      "presses/s through evdev, the recognizer and the socket, under TCG)."]
        lines.append("")
    if vmr and vml:
        lines += loaded_section(vmr, vml, m["cores"])
        loaded_samples = {}
        if os.path.exists(args.vm_loaded.replace(".json", "-samples.json")):
            with open(args.vm_loaded.replace(".json", "-samples.json")) as f:
                loaded_samples = json.load(f)
        sets = [(f"{who}, {boot}", s.get(key, []), f"lc {color} dt {dash}")
                for key, who, color in (("actiondCommand", "actiond", 1), ("reactorCommand", "C reactor", 2))
                for boot, s, dash in (("idle", samples, 1), ("loaded", loaded_samples, 2))]
        if plot_sets(sets, "Hold deadline to command start in the VM, idle and loaded host (CDF)",
                     "milliseconds after the hold deadline", os.path.join(args.plots, "vm-loaded.png")):
            lines += [f"![command start, idle and loaded host]({rel}/vm-loaded.png)", ""]
    r = host["recognizer"]
    st, fo, cl, rd, bi = host["status"], host["fanout"], host["configLoad"], host["ready"], host["binary"]
    lines += [
        "## On the host",
        "",
        "| figure | p50 | min | max | samples |",
        "|---|---:|---:|---:|---:|",
        f"| recognizer, events/s ({r['buttons']} buttons, {r['eventsPerRun']:,} events per run) | "
        f"{r['eventsPerSecondMedian'] / 1e6:.1f} M | {r['eventsPerSecondMin'] / 1e6:.1f} M | "
        f"{r['eventsPerSecondMax'] / 1e6:.1f} M | {r['runs']} runs |",
        f"| recognizer, heap allocations per event | {r['allocationsPerEvent']:.4f} | | | {r['allocations']} in all |",
        *hold_turn_rows(r),
        f"| `status` requests/s, 1 client, one in flight | {st['1']['p50']:,.0f} | {st['1']['min']:,.0f} | "
        f"{st['1']['max']:,.0f} | {st['1']['n']} runs |",
        f"| `status` requests/s, 16 clients, one in flight each | {st['16']['p50']:,.0f} | {st['16']['min']:,.0f} | "
        f"{st['16']['max']:,.0f} | {st['16']['n']} runs |",
        f"| one `performed` announcement: perform request → first of {fo['subscribers']:,} subscribers, ms | "
        f"{ms(fo['first']['p50'])} | {ms(fo['first']['min'])} | {ms(fo['first']['max'])} | {fo['first']['n']} |",
        f"| … → last of {fo['subscribers']:,} subscribers, ms | {ms(fo['last']['p50'])} | {ms(fo['last']['min'])} | "
        f"{ms(fo['last']['max'])} | {fo['last']['n']} |",
        *([f"| first → last of {fo['subscribers']:,} subscribers (the fan-out itself), ms | "
           f"{ms(fo['spread']['p50'])} | {ms(fo['spread']['min'])} | {ms(fo['spread']['max'])} | {fo['spread']['n']} |"]
          if "spread" in fo else []),
        f"| `actiond --check-config`, 200 controls, ms | {ms(cl['200']['p50'])} | {ms(cl['200']['min'])} | "
        f"{ms(cl['200']['max'])} | {cl['200']['n']} |",
        f"| `actiond --check-config`, 1 control, ms (process start-up) | {ms(cl['1']['p50'])} | {ms(cl['1']['min'])} | "
        f"{ms(cl['1']['max'])} | {cl['1']['n']} |",
        f"| start → READY=1, 10 controls, ms | {ms(rd['p50'])} | {ms(rd['min'])} | {ms(rd['max'])} | {rd['n']} |",
        "",
        f"Binary (release, `--static-swift-stdlib`): {bi['bytes'] / 1e6:.1f} MB as built, "
        f"{bi['strippedBytes'] / 1e6:.1f} MB stripped; its shared libraries: "
        f"{', '.join(bi.get('needed', [])) or 'unknown'} (the Swift runtime and libstdc++ are linked in).",
        "",
        "Loading 200 controls costs the difference of the two `--check-config` rows; the perform request's "
        "round includes running the intent and persisting the state before `performed` is announced, so the "
        "fan-out itself is the gap between the first and the last subscriber.",
        "",
    ]
    lines += METHOD
    with open(notebook, "w") as f:
        f.write("\n".join(lines))
    page = user_page(host, vmr, notebook_link, f"{page_rel}/vm-commands.png" if commands_plot else None, page_hand)
    with open(args.doc, "w") as f:
        f.write("\n".join(page))
    print(f"bench: wrote {args.doc} and {notebook}")


METHOD = [
    "## Method",
    "",
    "`make bench` (mk/benchmarks.mk) runs `Tests/bench/run.sh`: release binaries (`--static-swift-stdlib`), "
    "the host figures (`Tests/bench/bench.py host`), one VM boot with the scenarios of `Tests/vm/bench/` "
    "(`Tests/bench/vm.sh`, the VM tier's harness) on the otherwise idle host, a second boot of the same "
    "scenarios with one host core kept busy by `stress-ng --cpu 1 --cpu-method all` (started just before "
    "that boot and stopped right after it, however the run ends; `BENCH_LOADED=0` skips it, "
    "`BENCH_LOADED_N` sets its samples per figure), then this notebook, the summary page and the plots "
    "(`bench.py report`). "
    "Nothing here is a test: no figure fails the run, but an impossible sample does (below).",
    "",
    "- The key is a uinput device of `benchtool device` (Tests/bench/benchtool.c) with exact press and "
    "hold durations; it reads back the kernel's key-down timestamps (CLOCK_MONOTONIC) between presses.",
    "- The recording command is `benchtool record TAG FILE` (static), which takes CLOCK_MONOTONIC first "
    "thing in `main`: every peer starts the same program.",
    "- actiond runs at log level warning with an `exec` intent; the subscriber is `benchtool subscribe` "
    "(blocking reads, receipt time right after `read()`).",
    "- The limits are a minimal C reactor (`benchtool reactor`: epoll on the evdev fd, one timerfd, "
    "posix_spawn, a subscriber over a socketpair), the timerfd overshoot alone, and posix_spawn alone; "
    "then the same reactor doing actiond's deadline work besides the spawn (`--subscriber --noblock`: "
    "actiond's `held` and `performing` lines written to a subscriber running `benchtool subscribe`'s code "
    "just before posix_spawn, then back to epoll_wait with the child's pidfd instead of waitpid), the limit "
    "for a daemon that announces the hold; and that reactor with actiond's posix_spawn too (`--spawn`: its "
    "own process group, signals unblocked and default, stdout and stderr on pipes, stdin on /dev/null, "
    "closefrom 3, chdir /, the pipes and file actions readied at the key-down as actiond readies them), so "
    "that the gap left is the daemon's own work at the deadline. Under abuse, the reactors run again on "
    "devices of their own while the abusers keep hammering actiond (the limit under the same abuse).",
    "- triggerhappy is Debian's package unpacked into the VM, running the command on the key's press "
    "(`KEY_PROG1 1 …`; thd runs it with system(3), i.e. through /bin/sh, which is Debian's dash as on a Debian system (the guest's own /bin/sh, busybox, is swapped for it while thd runs)); it has no holds, so its figure starts at the key-down.",
    "- The python-evdev script (Tests/vm/bench/hold.py) runs on the host's python3 and python3-evdev, "
    "shared read-only into the guest over 9p.",
    "- Idle wakeups are the daemon's voluntary + involuntary context switches over the idle window with "
    "its button bound; memory is /proc/PID/status.",
    "- Pairing: every command actiond starts carries its press's kernel key-down time "
    "(`ACTIOND_PRESS_TIME`), which `benchtool record` writes after its own time, so each command start is "
    "paired with the deadline of the press that started it; a command before its own deadline, naming no "
    "press or a second one for a press fails the run with the offending lines. The C reactors give their "
    "commands the same variable and are paired by it too; the other peers' samples are paired in press order "
    "within a window.",
    "- Socket abuse in the VM: after its first series of holds the actiond scenario runs `BENCH_ABUSE_N` "
    "more while `benchtool abuse` keeps 50 abusive clients on the daemon's socket (garbage lines, 10 MB "
    "lines, connect/close storms, subscribers that never read), with a second subscriber connected before "
    "them; the two series share the daemon, the boot and the recording command, and are told apart by "
    "`ACTIOND_PRESS_TIME`.",
    "- Gestures (Tests/vm/bench/05-gestures.sh, idle boot only, `BENCH_GESTURE_N` holds per button and as "
    "many double presses): one daemon, two buttons that differ only in a doublePress assignment, each on its "
    "own uinput device (`benchtool device`'s `double COUNT FIRST_MS GAP_MS SECOND_MS PAUSE_MS` reads back both "
    "key-downs' kernel stamps); the doublePress command is paired by its ACTIOND_PRESS_TIME, the second "
    f"key-down; the holds alternate between the buttons in blocks of {GESTURE_BLOCK} (ABBA order). A hold "
    "on the button with the doublePress counts as not slower when its gap to the hold-only button is within "
    f"max({GESTURE_P50_MARGIN / 1e6:g} ms, noise) at p50 and max({GESTURE_P99_MARGIN / 1e6:g} ms, noise) at p99, "
    "the noise being how far the hold-only button's own odd and even blocks lie apart.",
    "- MQTT (Tests/vm/bench/07-mqtt.sh, issue 19): a daemon of its own (a store toggle, nothing spawned), "
    "actiond-mqtt and Debian's mosquitto on the guest's loopback, a libmosquitto subscriber "
    "(Tests/bench/benchmqtt.c, receipt stamped in its message callback) on the button's event topic and "
    "`benchtool subscribe` on actiond's socket, `BENCH_N` holds: both subscribers' figures from the same "
    "deadlines, each sample paired exactly by the deadline it carries (`held`'s time, `long_press`'s "
    "time_us). All on one vCPU: the bridge, the broker and the MQTT subscriber run when actiond and the "
    "socket subscriber do not, so the socket figure there is not 02-actiond's. Before the holds, the idle "
    "bridge's context switches over the idle window (default keepalive, 60 s) and its memory.",
    "- MQTT round trip on the host (issue 31; Tests/mqtt/bench_bridge.py's round_trip, `BENCH_MQTT_N` commands "
    "per set-up): mosquitto, actiond (a store toggle) and actiond-mqtt of their own on the loopback, and a paho "
    "client with TCP_NODELAY set that publishes `ON`/`OFF` (QoS 1) on the toggle's command topic, each once the "
    "last one's state came back, and stamps the retained state's receipt; a subscriber on actiond's socket splits "
    "each command into client → actiond's `performing`, actiond's perform and `performed` → the client. Set-ups: "
    "mosquitto's `set_tcp_nodelay true` with actiond's state directory on tmpfs (the target's: the MQTT path) "
    "and on the disk (the perform's fsync), mosquitto's default, and the client with Nagle on (as paho, Home "
    "Assistant's client).",
    "- Feedback (Tests/vm/bench/06-feedback.sh, issues 17 and 32): two daemons of their own, one after the other, "
    "each with one button whose feedback LED ticks on `held`, `BENCH_N` holds as above and a subscriber: a `sysfs` "
    "output on the Caps Lock LED class device of an `actiond-testdev --leds` device, whose reader prints each LED "
    "change with the kernel's stamp and runs at SCHED_IDLE (`benchtool idle`, as `chrt --idle 0`), and an `led` "
    "output (`EV_LED`, LED_CAPSL) on the button's own `benchtool device --leds`, which reads back uinput's stamp of "
    "each EV_LED delivery after each press, never woken by it. Neither reader can run before the daemon's deadline "
    "turn is over, so the command start and `held` beside each tick are the daemon's own. The tick is the first LED "
    "change at or after each hold's deadline.",
    "- The loaded boot skips the abuse phase and the gestures and shortens the idle window and the blast: "
    "none of them feeds its section.",
    "",
]

def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    h = sub.add_parser("host")
    h.add_argument("--actiond", required=True)
    h.add_argument("--core", required=True)
    h.add_argument("--tool", required=True)
    h.add_argument("--out", required=True)
    h.add_argument("--repeat", type=int, default=21)
    h.add_argument("--seconds", type=float, default=2.0)
    h.add_argument("--rounds", type=int, default=30)
    h.add_argument("--helper", help="actiond-test-helper (serve-fifo): adds the host command-start figures")
    h.add_argument("--command-holds", type=int, default=200)
    h.add_argument("--command-rounds", type=int, default=2)
    h.add_argument("--mqtt", help="directory of actiond and actiond-mqtt: adds the MQTT round trip")
    h.add_argument("--mqtt-n", type=int, default=300, help="commands per MQTT round-trip set-up")
    mh = sub.add_parser("mqtt-host", help="the MQTT round trip on the host alone (printed)")
    mh.add_argument("--mqtt", required=True, help="directory of actiond and actiond-mqtt")
    mh.add_argument("--mqtt-n", type=int, default=300)
    c = sub.add_parser("commands", help="the host command-start figures alone (printed, and --out)")
    c.add_argument("--helper", required=True)
    c.add_argument("--tool", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--command-holds", type=int, default=200)
    c.add_argument("--command-rounds", type=int, default=2)
    a = sub.add_parser("abuse")
    a.add_argument("--actiond", required=True)
    a.add_argument("--tool", required=True)
    a.add_argument("--out", required=True)
    f = sub.add_parser("admission", help="another user's connect -> hello during one user's storm, alone")
    f.add_argument("--actiond", required=True)
    f.add_argument("--tool", required=True)
    f.add_argument("--out", required=True)
    v = sub.add_parser("vm")
    v.add_argument("--serial", required=True)
    v.add_argument("--out", required=True)
    v.add_argument("--hold-ms", type=int, required=True)
    v.add_argument("--vm-info")
    v.add_argument("--load", help="what kept the host busy during this boot (the loaded boot)")
    v.add_argument("--host-load", type=float, help="the host's 1-minute load average at the end of the boot")
    q = sub.add_parser("mqtt", help="07-mqtt's rows alone, from a boot with BENCH_ONLY=07-mqtt")
    q.add_argument("--serial", required=True)
    q = sub.add_parser("feedback", help="06-feedback's rows alone, from a boot with BENCH_ONLY=06-feedback")
    q.add_argument("--serial", required=True)
    r = sub.add_parser("report")
    r.add_argument("--host", required=True)
    r.add_argument("--vm", required=True)
    r.add_argument("--vm-loaded", help="vm.json of the boot with one host core busy (adds the loaded section)")
    r.add_argument("--doc", required=True, help="the page a user reads: summary, plot, how to run")
    r.add_argument("--notebook", help="every figure, the method, the experiments (default: benchmarks-notebook.md "
                   "beside --doc)")
    r.add_argument("--plots", required=True)
    args = parser.parse_args()
    {"host": host, "abuse": abuse, "admission": admission_only, "commands": commands_only, "vm": vm, "mqtt": mqtt_only, "feedback": feedback_only,
     "mqtt-host": mqtt_host_only, "report": report}[args.command](args)


if __name__ == "__main__":
    main()
