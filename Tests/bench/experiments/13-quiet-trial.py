# SPDX-License-Identifier: Apache-2.0
# EXPERIMENT ONLY (never committed as code): ACTIOND_EXP_QUIET=BEFORE_MS,AFTER_MS overrides
# EngineEffects.ClientQuiet.standard (the clients' quiet around a deadline and after the
# command it started).
import sys
p = sys.argv[1] + "/Sources/ActiondLinux/Daemon/Daemon.swift"
s = open(p).read()
a = "    effects.configurationLoaded(configuration)\n"
assert s.count(a) == 1
s = s.replace(a, a + '''    if let raw = getenv("ACTIOND_EXP_QUIET") {
      let v = String(cString: raw).split(separator: ",").map { Int64($0)! }
      effects.clientQuiet = .init(before: .milliseconds(v[0]), after: .milliseconds(v[1]))
    }
''')
open(p, "w").write(s)
