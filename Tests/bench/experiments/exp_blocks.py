# SPDX-License-Identifier: Apache-2.0
"""What exp-pressed.py and exp-turn-cost.py share: a scenario's files out of a serial log
(through Tests/bench/bench.py), percentiles in ms, a printed row, and one block of holds of
an actiond build run by exp-lib's act_holds."""
import os, importlib.util
_spec = importlib.util.spec_from_file_location("bench", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench.py"))
bench = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(bench)


def scenario(serial_log, name):
    """The files of the scenario whose name contains `name`."""
    return next(v for k, v in bench.serial_files(serial_log).items() if name in k)


def pct(v, p):
    return bench.percentile(sorted(v), p) / 1e6 if v else float("nan")


def row(name, v):
    if not v: return f"{name:26s} n=0"
    return f"{name:26s} n={len(v):4d} p50={pct(v,50):6.2f} p95={pct(v,95):6.2f} p99={pct(v,99):6.2f} max={max(v)/1e6:6.2f}"


def actiond_block(sc, tag):
    """`pressed` (key-down kernel stamp -> subscriber read), `held` (deadline -> read) and
    command start (deadline -> the command's first instruction, paired by
    ACTIOND_PRESS_TIME) of the block TAG, in ns."""
    ev = [l.split() for l in sc[f"{tag}-events.log"]]
    pressed = [int(e[3]) - int(e[1]) * 1000 for e in ev if e[0] == "pressed" and len(e) >= 4]
    held = [int(e[3]) - int(e[1]) * 1000 for e in ev if e[0] == "held" and len(e) >= 4]
    deadline = {int(e[1]): int(e[2]) * 1000 for e in ev if e[0] == "pressed"}
    cmd = [int(p[1]) - deadline[int(p[2])] for p in (l.split() for l in sc.get(f"{tag}-rec.log", []))
           if len(p) >= 3 and p[2].isdigit() and int(p[2]) in deadline]
    return {"pressed": pressed, "held": held, "command": cmd}
