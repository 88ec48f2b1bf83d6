import Testing

@testable import ActiondCore

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

  @Test func rejectsMistakesClearly() {
    #expect(throws: DaemonOptions.UsageError(message: "unknown argument '--frobnicate'")) {
      try DaemonOptions.parse(["--frobnicate"])
    }
    #expect(throws: DaemonOptions.UsageError(message: "option --config needs a value")) {
      try DaemonOptions.parse(["--config"])
    }
    #expect(throws: DaemonOptions.UsageError.self) { try DaemonOptions.parse(["--log-level", "loud"]) }
  }

  @Test func levelsOrderFromVerboseToQuiet() {
    #expect(LogLevel.debug < LogLevel.info)
    #expect(LogLevel.error > LogLevel.warning)
    #expect(LogLevel.error.syslogPriority == 3)
  }
}
