// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore
@testable import ActiondDaemon

@Suite struct DaemonOptionsTests {
  @Test func defaultsRunTheDaemon() throws {
    let o = try DaemonOptions.parse([])
    #expect(o.mode == .run)
    #expect(o.configPath == nil)
    #expect(o.logLevel == nil)  // the configuration decides
  }

  @Test func parsesEveryOption() throws {
    let o = try DaemonOptions.parse([
      "--config", "/tmp/a.json", "--socket=/tmp/s.sock", "--state-dir", "/tmp/st", "--log-level", "debug",
    ])
    #expect(o.configPath == "/tmp/a.json")
    #expect(o.socketPath == "/tmp/s.sock")
    #expect(o.stateDirectory == "/tmp/st")
    #expect(o.logLevel == .debug)
  }

  @Test func checkConfigTakesAnOptionalFile() throws {
    #expect(try DaemonOptions.parse(["--check-config"]).mode == .checkConfig(file: nil))
    #expect(try DaemonOptions.parse(["--check-config", "x.json"]).mode == .checkConfig(file: "x.json"))
    #expect(try DaemonOptions.parse(["--check-config", "--log-level", "error"]).mode == .checkConfig(file: nil))
  }

  @Test func rejectsMistakesClearly() throws {
    #expect(throws: UsageError(message: "unknown argument '--frobnicate'")) {
      try DaemonOptions.parse(["--frobnicate"])
    }
    #expect(throws: UsageError(message: "option --config needs a value")) {
      try DaemonOptions.parse(["--config"])
    }
    #expect(throws: UsageError.self) { try DaemonOptions.parse(["--log-level", "loud"]) }
    #expect(throws: UsageError(message: "option --socket needs a value")) {
      try DaemonOptions.parse(["--socket", "-c", "a.json"])
    }
    // A flag given a value is a mistake, wherever it stands (the last one too).
    #expect(throws: UsageError(message: "option --version takes no value (got '--version=1')")) {
      try DaemonOptions.parse(["--version=1", "-c", "a.json"])
    }
    #expect(throws: UsageError(message: "option --help takes no value (got '--help=no')")) {
      try DaemonOptions.parse(["--help=no"])
    }
    #expect(throws: UsageError(message: "option --json takes no value (got '--json=no')")) {
      try DaemonOptions.parse(["learn", "--json=no"])
    }
    // `-` and a negative number are values, for the option to judge.
    #expect(throws: UsageError(message: "--timeout needs a positive number of seconds, got \"-1\"")) {
      try DaemonOptions.parse(["learn", "--timeout", "-1"])
    }
    #expect((try? DaemonOptions.parse(["--config", "-"]))?.configPath == "-")
  }

  @Test func optionsTakeTheirValueBothWays() throws {
    var scan = OptionScanner([
      "--socket=/run/a=b.sock", "--state-dir", "/var/lib/x", "-c", "/etc/c.json", "--check-config",
    ])
    var seen: [String] = []
    while try scan.next() {
      seen.append(
        scan.name + " " + (scan.name == "--check-config" ? (scan.optionalValue() ?? "nil") : try scan.value()))
    }
    try scan.finish()
    #expect(seen == ["--socket /run/a=b.sock", "--state-dir /var/lib/x", "-c /etc/c.json", "--check-config nil"])
  }

  @Test func levelsOrderFromVerboseToQuiet() {
    #expect(LogLevel.debug < LogLevel.info)
    #expect(LogLevel.error > LogLevel.warning)
    #expect(LogLevel.error.syslogPriority == 3)
  }

  @Test func learnIsACommandOfTheDaemon() throws {
    #expect(try DaemonOptions.parse(["learn"]).mode == .learn(LearnOptions()))
    var expected = LearnOptions()
    expected.json = true
    expected.timeout = .milliseconds(2500)
    expected.buttonName = "pedal"
    expected.uaccess = true
    #expect(
      try DaemonOptions.parse(["learn", "--json", "--timeout", "2.5", "--name=pedal", "--uaccess"]).mode
        == .learn(expected))
    #expect(try LearnOptions.parse(["--configuration"]).configuration)
    #expect(try LearnOptions.parse(["--help"]).help)
  }
}
