// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import ActiondTesting
import Glibc
import Testing

@Suite struct LoggerTests {
  @Test func levelsFilterAndMessagesAreBuiltLazily() {
    let sink = RecordingLogSink()
    let logger = Logger(minimumLevel: .notice, sink: sink)
    var built = 0
    func expensive() -> String {
      built += 1
      return "built"
    }
    logger.info(expensive())
    #expect(built == 0, "a filtered message is never formatted")
    logger.notice("Button pressed", event: "button-pressed", ["button": "action", "hint": "Hold to Start"])
    logger.error(expensive())
    #expect(built == 1)
    #expect(sink.records.map(\.level) == [.notice, .error])
    #expect(sink.records(event: "button-pressed").first?[field: "hint"] == "Hold to Start")
    #expect(LogLevel(name: "warning") == .warning)
    #expect(LogLevel(name: "loud") == nil)
    #expect(LogLevel.allCases.map(\.syslogPriority) == [7, 6, 5, 4, 3])
  }

  @Test func streamLinesPlainAndWithSyslogPrefixes() throws {
    let (r, w) = try Syscall.pipe(nonBlocking: true)
    defer {
      Syscall.close(r)
      Syscall.close(w)
    }
    let record = LogRecord(
      level: .warning, message: "Intent failed\nbadly", event: "perform-failed",
      fields: [LogField("kind", "org.example.timer"), LogField("reason", "exit status 3"), LogField("empty", "")])
    let plain = StreamLogSink(fd: w, syslogPrefixes: false)
    plain.write(record)
    let journal = StreamLogSink(fd: w, syslogPrefixes: true)
    journal.write(LogRecord(level: .debug, message: "x"))
    var buffer = [UInt8](repeating: 0, count: 4096)
    let n = try #require(try buffer.withUnsafeMutableBytes { try Syscall.read(r, into: $0) }.value)
    let text = String(decoding: buffer[0..<n], as: UTF8.self)
    #expect(
      text
        == "warning: Intent failed badly event=perform-failed kind=org.example.timer reason=\"exit status 3\" empty=\"\"\n"
        + "<7>x\n")
  }

  @Test func quotingEscapesEverythingAmbiguous() {
    #expect(LogLineFormat.quoted("plain") == "plain")
    #expect(LogLineFormat.quoted("a=b") == "\"a=b\"")
    #expect(LogLineFormat.quoted("say \"hi\"\n\u{1}") == "\"say \\\"hi\\\"\\n\\x01\"")
  }

  @Test func aFailingStreamIsCountedNotFatal() {
    let sink = StreamLogSink(fd: -1, syslogPrefixes: false)
    sink.write(LogRecord(level: .error, message: "lost"))
    #expect(sink.failedWrites == 1)
  }

  @Test func journalNativeProtocol() throws {
    let dir = try TemporaryDirectory()
    let path = dir.file("journal.sock")
    let receiver = try DatagramReceiver(try #require(UnixAddress(path)))
    let fallback = RecordingLogSink()
    let sink = try JournalLogSink(path: path, fallback: fallback)
    sink.write(
      LogRecord(
        level: .notice, message: "Pressed", event: "button-pressed", fields: [LogField("button-name", "action")]))
    let id = JournalLogSink.messageID(for: "button-pressed")
    #expect(
      receiver.receiveText()
        == "MESSAGE=Pressed\nPRIORITY=5\nSYSLOG_IDENTIFIER=actiond\nACTIOND_EVENT=button-pressed\nMESSAGE_ID=\(id)\n"
        + "ACTIOND_BUTTON_NAME=action\n")
    // A multi-line value uses the binary form: NAME\n<u64 LE length>value\n.
    sink.write(LogRecord(level: .info, message: "two\nlines"))
    let bytes = try #require(receiver.receive())
    #expect(Array(bytes.prefix(8)) == Array("MESSAGE\n".utf8))
    #expect(Array(bytes[8..<16]) == [9, 0, 0, 0, 0, 0, 0, 0])
    #expect(Array(bytes[16..<26]) == Array("two\nlines\n".utf8))
    #expect(fallback.records.isEmpty)
  }

  @Test func journalFallsBackWhenItGoesAway() throws {
    let dir = try TemporaryDirectory()
    let path = dir.file("journal.sock")
    let fallback = RecordingLogSink()
    var receiver: DatagramReceiver? = try DatagramReceiver(try #require(UnixAddress(path)))
    let sink = try JournalLogSink(path: path, fallback: fallback)
    _ = receiver
    receiver = nil  // journald stopped
    sink.write(LogRecord(level: .error, message: "still logged"))
    #expect(fallback.records.map(\.message) == ["still logged"])
    #expect(sink.fallbackCount == 1)
    #expect(throws: SystemCallError.self) { try JournalLogSink(path: dir.file("none.sock"), fallback: fallback) }
  }

  @Test func messageIDsAreStableHex() {
    let id = JournalLogSink.messageID(for: "button-pressed")
    #expect(id.count == 32)
    #expect(id.allSatisfy { $0.isHexDigit && !$0.isUppercase })
    #expect(id == JournalLogSink.messageID(for: "button-pressed"))
    #expect(id != JournalLogSink.messageID(for: "button-released"))
    #expect(JournalLogSink.journalFieldName("hint.text") == "ACTIOND_HINT_TEXT")
  }

  @Test func journalStreamDetectionComparesDeviceAndInode() throws {
    let dir = try TemporaryDirectory()
    let fd = try Syscall.open(try dir.write("stream", ""), O_RDONLY)
    defer { Syscall.close(fd) }
    var info = stat()
    #expect(fstat(fd, &info) == 0)
    let matching = "\(info.st_dev):\(info.st_ino)"
    #expect(LogSinks.isJournalStream(environment: ["JOURNAL_STREAM": matching], fd: fd))
    #expect(!LogSinks.isJournalStream(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino + 1)"], fd: fd))
    #expect(!LogSinks.isJournalStream(environment: ["JOURNAL_STREAM": "garbage"], fd: fd))
    #expect(!LogSinks.isJournalStream(environment: [:], fd: fd))
  }
}
