// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

@Suite struct JSONTests {
  @Test func roundTripsStrictJSON() throws {
    let text = #"{"a":1,"b":[true,false,null],"c":"x\ny\u00e9\"","d":-2.5,"e":{}}"#
    let doc = try JSONParser.parse(text)
    #expect(JSONEncoding.compact(doc.root) == #"{"a":1,"b":[true,false,null],"c":"x\nyé\"","d":-2.5,"e":{}}"#)
  }

  @Test func acceptsJSON5InConfigurationMode() throws {
    let text = """
      // comment
      { unquoted: 'single', trailing: [1, 2,], hex: 0x1F, /* block */ plus: +1, half: .5, }
      """
    let doc = try JSONParser.parse(text, options: .configuration)
    #expect(doc.root["unquoted"] == "single")
    #expect(doc.root["trailing"] == [1, 2])
    #expect(doc.root["hex"] == .integer(31))
    #expect(doc.root["half"] == .double(0.5))
    #expect(doc.locations[JSONPath.root / "trailing" / 1] == SourceLocation(line: 2, column: 37))
  }

  /// JSON5's points without a digit on one side, each with and without an exponent (Double()
  /// takes none of them as written, so the parser fills the missing digit in).
  @Test func json5NumbersWithABarePoint() throws {
    let cases: [(String, Double)] = [
      (".5", 0.5), ("-.5", -0.5), ("5.", 5), ("+5.", 5), ("5.e2", 500), ("5.E-1", 0.5), (".5e1", 5),
      ("-5.e+1", -50), ("1.5e2", 150),
    ]
    for (text, value) in cases {
      #expect(try JSONParser.parse("[\(text)]", options: .configuration).root == [.double(value)], "\(text)")
    }
    for bad in ["[.]", "[.e5]", "[5.e]", "[-.e1]"] {
      #expect(throws: JSONParseError.self, "\(bad)") { try JSONParser.parse(bad, options: .configuration) }
    }
  }

  @Test func strictModeRejectsJSON5() {
    for bad in ["{a:1}", "[1,]", "// x\n1", "'s'", "+1", "0x10", "01", "[1 2]", "{\"a\" 1}", "\"\\q\"", "tru"] {
      #expect(throws: JSONParseError.self, "\(bad)") { try JSONParser.parse(bad) }
    }
  }

  @Test func reportsLineAndColumn() {
    do {
      _ = try JSONParser.parse("{\n  \"a\": 1,\n  \"b\": ]\n}")
      Issue.record("expected an error")
    } catch {
      #expect(error.location == SourceLocation(line: 3, column: 8))
    }
  }

  @Test func numbersBeyondADoubleAreRefused() throws {
    for text in ["{ n: 1e-400 }", "{ n: 1e400 }", "{ n: -2.5e-9999 }"] {
      #expect(throws: JSONParseError.self, "\(text)") { try JSONParser.parse(text, options: .configuration) }
    }
    #expect(try JSONParser.parse("[0e-400, 0.0, 1e-300]").root == [0.0, 0.0, 1e-300])
  }

  @Test func surrogatePairs() throws {
    #expect(try JSONParser.parse(#""\ud83d\ude00""#).root == "😀")
    #expect(throws: JSONParseError.self) { try JSONParser.parse(#""\ud83d""#) }
  }

  @Test func depthIsBounded() {
    let deep = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
    #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
  }

  @Test func pathsRenderLikeErrorMessages() {
    #expect((JSONPath.root / "controls" / 2 / "intent" / "argv").description == "controls[2].intent.argv")
    #expect((JSONPath.root / "assignments" / "my button").description == #"assignments["my button"]"#)
  }
}
