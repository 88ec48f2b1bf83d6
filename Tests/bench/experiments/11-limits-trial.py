# SPDX-License-Identifier: Apache-2.0
# EXPERIMENT ONLY (never committed): ACTIOND_EXP_LIMITS=reqBurst,reqRate,byteBurst,byteRate,accBurst,accRate
# ("off": no limits) overrides ClientRateLimits.standard. Checked against the tree of
# 2026-12-03 (the daemon in Sources/ActiondDaemon); it asserts its anchor, so a tree it no
# longer fits fails here rather than building something else.
import sys
p = sys.argv[1] + "/Sources/ActiondDaemon/Daemon.swift"
s = open(p).read()
a = "    var serverConfiguration = ServerConfiguration(configuration.socket)\n"
assert s.count(a) == 1
s = s.replace(a, a + '''    if let raw = getenv("ACTIOND_EXP_LIMITS") {
      let text = String(cString: raw)
      if text == "off" {
        serverConfiguration.rateLimits = nil
      } else {
        let v = text.split(separator: ",").map { Int($0)! }
        serverConfiguration.rateLimits = ClientRateLimits(
          requestBurst: v[0], requestsPerSecond: v[1], byteBurst: v[2], bytesPerSecond: v[3], acceptBurst: v[4],
          acceptsPerSecond: v[5], resumeFraction: 4)
      }
    }
''')
open(p, "w").write(s)
