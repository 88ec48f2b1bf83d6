// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

@Suite struct EngineScenarioTests {
  static let files = ScenarioRunner.files(in: "engine")

  @Test(arguments: files)
  func scenario(_ file: String) {
    ScenarioRunner.check(file, in: "engine", with: EngineScenarioDriver.self)
  }

  @Test func scenarioFilesArePresent() {
    #expect(Self.files.count >= 8, "found \(Self.files)")
  }
}
