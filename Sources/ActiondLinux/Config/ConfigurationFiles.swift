// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import Glibc

/// Reads the configuration files from disk and validates them with the pure
/// ``ConfigurationLoader``: the main file, then `controlsDirectory/*.json` in name order.
/// Shared by `actionctl check-config` and the daemon.
public enum ConfigurationFiles {
  /// A file that could not be read (as opposed to one with invalid content).
  public struct ReadError: Error, CustomStringConvertible {
    public var path: String
    public var errno: Errno
    public var description: String { "cannot read \(path): \(errno)" }
  }

  /// Loads `mainPath`; when it is nil, the default main file, or the embedded default
  /// configuration if that file does not exist. Throws ``ReadError`` for unreadable
  /// files and ``ConfigurationError`` (every problem) for invalid ones.
  public static func load(mainPath: String?) throws -> Configuration {
    let main: ConfigurationSource?
    if let mainPath {
      main = ConfigurationSource(name: mainPath, text: try read(mainPath))
    } else {
      do {
        main = ConfigurationSource(
          name: Configuration.defaultMainFile, text: try read(Configuration.defaultMainFile))
      } catch let error as ReadError where error.errno == .notFound {
        main = nil
      }
    }
    let directory = ConfigurationLoader.controlsDirectory(in: main)
    let dropIns = try jsonFiles(in: directory).map { ConfigurationSource(name: $0, text: try read($0)) }
    return try ConfigurationLoader.load(main: main, dropIns: dropIns)
  }

  /// The problem of a file that is not valid UTF-8, at its first invalid byte.
  static func invalidUTF8(_ data: [UInt8], file: String) -> ConfigurationProblem {
    var parser = Unicode.UTF8.ForwardParser()
    var bytes = data.makeIterator()
    var offset = 0
    parsing: while true {
      switch parser.parseScalar(from: &bytes) {
      case .valid(let scalar): offset += scalar.count
      case .error, .emptyInput: break parsing
      }
    }
    let before = data[..<min(offset, data.count)]
    let line = before.reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
    let column = offset - (before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
    return ConfigurationProblem(
      file: file, path: nil, line: line, column: column,
      message: "not valid UTF-8 (byte 0x\(String(data[min(offset, data.count - 1)], radix: 16)) at column \(column)); "
        + "configuration files must be UTF-8")
  }

  /// `*.json` files directly in `directory`, sorted by name; none when it does not exist.
  public static func jsonFiles(in directory: String) throws -> [String] {
    guard let dir = opendir(directory) else {
      let error = Errno.current
      if error == .notFound { return [] }
      throw ReadError(path: directory, errno: error)
    }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      if name.hasSuffix(".json") && !name.hasPrefix(".") { names.append(name) }
    }
    return names.sorted().map { directory + "/" + $0 }
  }

  /// The whole file as UTF-8 text. A file that is not valid UTF-8 is a problem of its own
  /// (``ConfigurationError``, with the line and column of the first invalid byte): nothing
  /// is silently replaced, so a value is never something other than what the file says.
  public static func read(_ path: String) throws -> String {
    let fd: Int32
    do { fd = try Syscall.open(path, O_RDONLY) } catch { throw ReadError(path: path, errno: error) }
    defer { Syscall.close(fd) }
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let result = buffer.withUnsafeMutableBytes { b in Result { () throws(Errno) in try Syscall.read(fd, into: b) } }
      switch result {
      case .failure(let e): throw ReadError(path: path, errno: e)
      case .success(.wouldBlock): continue
      case .success(.done(0)):
        if let text = String(validating: data, as: UTF8.self) { return text }
        throw ConfigurationError(problems: [invalidUTF8(data, file: path)])
      case .success(.done(let n)): data += buffer[0..<n]
      }
    }
  }
}
