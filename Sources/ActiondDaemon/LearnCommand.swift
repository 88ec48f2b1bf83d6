// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import Glibc

/// `actiond learn`: waits for the next key-down on any readable input device and prints
/// what binds that button (``LearnedButton``).
///
/// Why a command of `actiond` and not of `actionctl`: learning reads input devices, as
/// the daemon does, through the same discovery (libudev) and device code (libevdev), it
/// needs the daemon's kind of access to /dev/input, and what it prints is the daemon's
/// configuration and udev rule; it works whether or not a daemon runs. `actionctl` is
/// the socket client: it talks to a running daemon and never opens a device. So
/// `actionctl learn`, a natural guess, only says to come here.
public enum LearnCommand {
  /// Runs one `actiond learn`; returns the exit status. `program` is how actiond was
  /// invoked (`argv[0]`), for the messages that say what to run.
  public static func run(_ options: LearnOptions, program: String) -> Int32 {
    let out = Terminal(fd: 1)
    let err = Terminal(fd: 2)
    let learnCommand = "\(program) learn"
    if options.help {
      out.line(LearnOptions.usage)
      return LearnOptions.ExitStatus.learned.rawValue
    }
    let loop: EventLoop
    let learner: ButtonLearner
    do {
      loop = try EventLoop()
      learner = ButtonLearner(loop: loop, backend: try LinuxInputBackend(), access: InputAccessProbe.node)
    } catch {
      err.line("actiond learn: cannot start device discovery: \(error)")
      return LearnOptions.ExitStatus.failed.rawValue
    }
    var learned: LearnedButton?
    var timedOut = false
    learner.onLearned = { info, code in
      learned = LearnedButton(
        device: info, keyCode: code, buttonName: options.buttonName, uaccess: options.uaccess,
        others: Array(learner.seenDevices.values))
      loop.stop()
    }
    learner.onProblem = { message in err.line("actiond learn: \(message)") }
    learner.onAdded = { info in err.line("actiond learn: also reading \(info.devnode ?? info.syspath) (\(info.name))") }
    let nodes: [InputNodeAccess]
    do {
      nodes = try learner.start()
    } catch {
      learner.stop()
      err.line("actiond learn: cannot start device discovery: \(error)")
      return LearnOptions.ExitStatus.failed.rawValue
    }
    let report = InputAccessProbe.report(nodes: nodes)
    guard !learner.openDevices.isEmpty else {
      learner.stop()
      err.line("actiond learn: \(report.nothingReadable(learn: learnCommand))")
      return LearnOptions.ExitStatus.nothingReadable.rawValue
    }
    var waiting = "actiond learn: press the button (reading \(learner.openDevices.count) input device"
    waiting += learner.openDevices.count == 1 ? "" : "s"
    if let clause = report.deniedClause { waiting += "; \(clause), so a key on them is not seen" }
    waiting += ")"
    err.line(waiting)
    if let timeout = options.timeout {
      _ = loop.schedule(at: loop.now() + timeout) { _ in
        timedOut = true
        learner.stop()
        loop.stop()
      }
    }
    do {
      try loop.run()
    } catch {
      learner.stop()
      err.line("actiond learn: \(error)")
      return LearnOptions.ExitStatus.failed.rawValue
    }
    guard let learned, !timedOut else {
      err.line("actiond learn: no key went down within \(options.timeout.map { "\($0)" } ?? "the wait")")
      return LearnOptions.ExitStatus.timedOut.rawValue
    }
    if options.json {
      out.line(JSONEncoding.compact(learned.json))
    } else if options.configuration {
      err.line(learned.text)
      out.line(learned.configuration)
    } else {
      out.line(learned.text)
    }
    return LearnOptions.ExitStatus.learned.rawValue
  }
}
