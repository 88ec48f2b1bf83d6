// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import FoundationEssentials
import Testing

/// docs/protocol.md is what clients are written from, so every example in it is checked
/// against the codec: a line the daemon sends must be exactly what the daemon's encoder
/// writes for it (decode, re-encode, compare byte for byte), a request must decode (or,
/// when the doc shows it refused, fail with exactly the documented error), and the tables
/// of error codes and events must list exactly the code's own lists.
@Suite struct ProtocolDocTests {
  /// One line of a ```json block, with its line number in the file.
  struct Line: CustomStringConvertible {
    var number: Int
    var text: String
    var description: String { "docs/protocol.md:\(number)" }
  }

  static let lines: [String] = {
    let path = repositoryPath("docs/protocol.md")
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  }()

  /// The ```json blocks, each as its lines.
  static var jsonBlocks: [[Line]] {
    var blocks: [[Line]] = []
    var current: [Line]?
    for (index, line) in lines.enumerated() {
      if current == nil {
        if line.trimmingPrefix(" ").hasPrefix("```json") { current = [] }
      } else if line.trimmingPrefix(" ").hasPrefix("```") {
        blocks.append(current!)
        current = nil
      } else if !line.isEmpty {
        current!.append(Line(number: index + 1, text: String(line.trimmingPrefix(" "))))
      }
    }
    return blocks
  }

  /// The first column of the Markdown table right after the line `heading` (a table of
  /// `code`/`event` names), each without its backticks.
  static func tableNames(after heading: String, header: String) -> [String] {
    guard let start = lines.firstIndex(of: heading) else { return [] }
    guard let top = lines[start...].firstIndex(where: { $0.hasPrefix("| \(header) ") }) else { return [] }
    var names: [String] = []
    for line in lines[(top + 2)...] {
      guard line.hasPrefix("| `") else { break }
      let cell = line.dropFirst(3).prefix { $0 != "`" }
      names.append(String(cell))
    }
    return names
  }

  static func isProviderRequest(_ text: String) -> Bool { text.hasPrefix(#"{"type":"request","id":"p"#) }

  /// Who wrote each line: what the daemon sends always starts with its type; client
  /// requests never do; the line after a provider request is the provider's answer.
  static var daemonLines: [Line] {
    jsonBlocks.flatMap { block in
      block.enumerated().filter { index, line in
        let text = line.text
        if isProviderRequest(text) { return true }
        if index > 0 && isProviderRequest(block[index - 1].text) { return false }
        return text.hasPrefix(#"{"type":"hello""#) || text.hasPrefix(#"{"type":"reply""#)
          || text.hasPrefix(#"{"type":"error""#) || text.hasPrefix(#"{"type":"event""#)
      }.map(\.element)
    }
  }

  static func isDaemonLine(_ line: Line) -> Bool { daemonLines.contains { $0.number == line.number } }

  /// A provider's answers (the line after each provider request).
  static var providerLines: [Line] {
    jsonBlocks.flatMap { block in
      block.indices.dropFirst().filter { isProviderRequest(block[$0 - 1].text) }.map { block[$0] }
    }
  }

  @Test func theDocumentIsThere() {
    #expect(Self.lines.count > 100, "docs/protocol.md not found or nearly empty")
    #expect(Self.jsonBlocks.count >= 15)
  }

  /// Every line the daemon sends in an example is exactly what it would send.
  @Test func daemonLinesAreWhatTheEncoderWrites() throws {
    var checked = 0
    for line in Self.daemonLines {
      checked += 1
      do {
        let message = try ServerMessage.decode(line: line.text)
        let encoded = String(decoding: message.line.dropLast(), as: UTF8.self)
        #expect(encoded == line.text, "\(line): the daemon writes\n\(encoded)")
      } catch {
        Issue.record("\(line): does not decode as a daemon message: \(error)")
      }
    }
    #expect(checked >= 25)
  }

  /// Every request decodes; a request followed by a codec error must produce exactly
  /// that error (code and message); a reply following a request answers it (id, name).
  @Test func requestsDecodeAndAreAnsweredAsShown() throws {
    var requests = 0
    for block in Self.jsonBlocks {
      for (index, line) in block.enumerated() where !Self.isDaemonLine(line) {
        requests += 1
        let next = index + 1 < block.count ? block[index + 1] : nil
        let answer = next.flatMap { try? ServerMessage.decode(line: $0.text) }
        switch ClientMessage.decode(line: line.text) {
        case .success(let message):
          guard case .request(let request) = message else { continue }  // a provider's answer
          switch answer {
          case .reply(let reply)?:
            #expect(reply.id == request.id, "\(line): the reply's id")
            #expect(reply.request == request.name, "\(line): the reply names \(reply.request)")
          case .error(let id, let error)?:
            #expect(id == request.id, "\(line): the error's id")
            // A request the codec accepts can only be refused by the daemon itself.
            #expect(
              ![ProtocolErrorCode.badJSON, .badRequest, .unknownRequest].contains(error.code),
              "\(line): decodes, but the doc shows it refused with \(error.code)")
          default:
            Issue.record("\(line): a request not followed by its reply or error")
          }
        case .failure(let failure):
          guard case .error(let id, let error)? = answer else {
            Issue.record("\(line): does not decode (\(failure.error.code): \(failure.error.message))")
            continue
          }
          #expect(id == failure.id, "\(line): the error's id")
          #expect(error.code == failure.error.code, "\(line): the codec answers \(failure.error.code)")
          #expect(error.message == failure.error.message, "\(line): the codec says: \(failure.error.message)")
        }
      }
    }
    #expect(requests >= 15)
  }

  /// A provider's answers are what the codec reads, written the way it writes them.
  @Test func providerAnswersDecode() {
    #expect(!Self.providerLines.isEmpty)
    for line in Self.providerLines {
      switch ClientMessage.decode(line: line.text) {
      case .success(let message):
        guard case .providerReply = message else {
          Issue.record("\(line): not a provider's answer: \(message)")
          continue
        }
        #expect(
          JSONEncoding.compact(message.json) == line.text,
          "\(line): the codec writes \(JSONEncoding.compact(message.json))")
      case .failure(let failure):
        Issue.record("\(line): does not decode (\(failure.error.code): \(failure.error.message))")
      }
    }
  }

  /// Every request of the protocol has an example.
  @Test func everyRequestHasAnExample() {
    let shown = Set(
      Self.jsonBlocks.joined().compactMap { line -> RequestName? in
        guard case .success(.request(let r)) = ClientMessage.decode(line: line.text) else { return nil }
        return r.name
      })
    for name in RequestName.allCases {
      #expect(shown.contains(name), "docs/protocol.md has no example of the request \(name.rawValue)")
    }
  }

  /// Every event has an example, and the table of events lists exactly the code's events.
  @Test func eventsAreAllShownAndTabled() {
    let shown = Set(
      Self.jsonBlocks.joined().compactMap { line -> EventName? in
        guard case .event(let e)? = try? ServerMessage.decode(line: line.text) else { return nil }
        return e.name
      })
    for name in EventName.allCases {
      #expect(shown.contains(name), "docs/protocol.md has no example of the event \(name.rawValue)")
    }
    let tabled = Self.tableNames(after: "## Events", header: "event")
    #expect(tabled.sorted() == EventName.allCases.map(\.rawValue).sorted(), "the table of events in docs/protocol.md")
    #expect(Set(tabled).count == tabled.count, "an event is in the table twice")
  }

  /// The tables of `cancelled` and `device-removed` reasons list exactly what the daemon
  /// announces.
  @Test func reasonTablesAreTheCodesLists() {
    let cancelled = Self.tableNames(after: "`cancelled` reasons:", header: "`reason`")
    #expect(cancelled.sorted() == PressCancelReason.allCases.map(\.description).sorted(), "cancelled reasons")
    let removed = Self.tableNames(after: "`device-removed` reasons:", header: "`reason`")
    #expect(removed.sorted() == DeviceUnbindReason.codes.sorted(), "device-removed reasons")
    let every: [DeviceUnbindReason] = [.removed, .readFailed("EIO"), .noLongerMatched, .shutdown]
    #expect(every.map(\.code) == DeviceUnbindReason.codes)
    // And the examples use them.
    for line in Self.daemonLines {
      guard case .event(let event)? = try? ServerMessage.decode(line: line.text) else { continue }
      switch event {
      case .cancelled(_, _, let reason):
        #expect(PressCancelReason.allCases.map(\.description).contains(reason), "\(line): reason \(reason)")
      case .deviceRemoved(_, let reason):
        #expect(reason.map(DeviceUnbindReason.codes.contains) == true, "\(line): reason \(reason ?? "none")")
      default: break
      }
    }
  }

  /// The table of error codes lists exactly the codes the daemon has.
  @Test func errorTableIsTheCodesList() {
    let tabled = Self.tableNames(after: "## Errors", header: "code")
    #expect(
      tabled.sorted() == ProtocolErrorCode.all.map(\.rawValue).sorted(), "the table of error codes in docs/protocol.md")
    #expect(Set(tabled).count == tabled.count, "a code is in the table twice")
  }
}
