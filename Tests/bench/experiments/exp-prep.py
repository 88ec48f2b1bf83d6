# SPDX-License-Identifier: Apache-2.0
"""Figures of Tests/bench/experiments/10-exp-prep.sh out of a serial log: per series the
deadline turn's stamps (p50/p99 after the deadline, and of each step from the stamp before)
and command start (deadline -> the command's first instruction, paired by ACTIOND_PRESS_TIME).

    python3 Tests/bench/experiments/exp-prep.py OUT_DIR/serial.log
"""
import os, sys, re, importlib.util
spec = importlib.util.spec_from_file_location("bench", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench.py"))
bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench)
files = bench.serial_files(sys.argv[1])
sc = next(v for k, v in files.items() if "exp-prep" in k)
def pct(v, p):
    return bench.percentile(sorted(v), p) / 1e6 if v else float("nan")
names = ["wake", "handler", "runIntent", "request0", "request1", "run()", "argv/envp0", "posix_spawn0", "posix_spawn1", "run() ret"]
for build in ("stampA", "stampB"):
    tags = sorted({m.group(1) for n in sc for m in [re.match(r"(i-%s-\d+)-daemon\.log$" % build, n)] if m})
    if not tags: continue
    stamps, cmd = [], []
    for tag in tags:
        stamps += [list(map(int, l.split()[1:])) for l in sc[f"{tag}-daemon.log"] if l.startswith("stamp ")]
        ev = [l.split() for l in sc[f"{tag}-events.log"]]
        pressed = {int(e[1]): int(e[2]) * 1000 for e in ev if e[0] == "pressed"}
        for l in sc.get(f"{tag}-rec.log", []):
            p = l.split()
            if len(p) >= 3 and p[0] == "actiond" and int(p[2]) in pressed:
                cmd.append(int(p[1]) - pressed[int(p[2])])
    print(f"{build}: {len(tags)} rounds, {len(stamps)} stamped turns; command start p50 {pct(cmd,50):.3f} p99 {pct(cmd,99):.3f} (n={len(cmd)})")
    for i, n in enumerate(names, start=1):
        v = [s[i] - s[0] for s in stamps if s[i]]
        d = [s[i] - s[i - 1] for s in stamps if s[i] and s[i - 1]] if i > 1 else []
        print(f"   {n:13s} from D: p50 {pct(v,50):7.3f} p99 {pct(v,99):8.3f} | step p50 {pct(d,50):6.3f} p99 {pct(d,99):7.3f}")
