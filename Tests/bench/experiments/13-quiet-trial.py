# SPDX-License-Identifier: Apache-2.0
# EXPERIMENT ONLY (never committed as code): ACTIOND_EXP_QUIET=BEFORE_MS,AFTER_MS overrides
# EffectInterpreter.ClientQuiet.standard (the clients' quiet around a deadline and after the
# command it started). Checked against the tree of 2026-12-03 (the daemon in
# Sources/ActiondDaemon); it asserts its anchor, so a tree it no longer fits fails here.
import sys
p = sys.argv[1] + "/Sources/ActiondDaemon/Daemon.swift"
s = open(p).read()
a = "    interpreter.server = server\n"
assert s.count(a) == 1
s = s.replace(a, a + '''    if let raw = getenv("ACTIOND_EXP_QUIET") {
      let v = String(cString: raw).split(separator: ",").map { Int64($0)! }
      interpreter.clientQuiet = .init(before: .milliseconds(v[0]), after: .milliseconds(v[1]))
    }
''')
open(p, "w").write(s)
