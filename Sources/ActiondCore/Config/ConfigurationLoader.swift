// SPDX-License-Identifier: Apache-2.0
/// Turns configuration text into a validated `Configuration`, or reports every problem.
///
/// Pure: the caller reads the files (main file, then `controlsDirectory/*.json` sorted by
/// name) and passes their text. JSON5 is accepted (comments, trailing commas, unquoted
/// keys, single quotes, hex numbers). Unknown keys, wrong types, values out of range,
/// duplicate names and kinds (across files too), dangling assignments and malformed
/// placeholders are all errors; validation never stops at the first one.
public enum ConfigurationLoader {
  /// The file name problems in the embedded default configuration are reported under.
  public static let embeddedDefaultName = "(embedded default configuration)"

  /// Validates the main file (nil = `DefaultConfiguration.text`) plus drop-in files of
  /// control definitions. Each drop-in holds one definition object or an array of them.
  public static func load(
    main: ConfigurationSource?, dropIns: [ConfigurationSource] = []
  ) throws(ConfigurationError) -> Configuration {
    let mainSource = main ?? ConfigurationSource(name: embeddedDefaultName, text: DefaultConfiguration.text)
    var problems: [ConfigurationProblem] = []
    var config = Configuration()
    var definitions = DefinitionSet()

    var mainReader: ConfigurationReader?
    var assignmentsValue: JSONValue?
    switch parse(mainSource) {
    case .failure(let p):
      problems.append(p)
    case .success(let reader):
      mainReader = reader
      assignmentsValue = readMain(reader, into: &config, definitions: &definitions)
    }

    for source in dropIns {
      switch parse(source) {
      case .failure(let p):
        problems.append(p)
      case .success(let reader):
        if let array = reader.document.root.arrayValue {
          for (i, element) in array.enumerated() {
            readControl(element, JSONPath.root / i, reader, into: &definitions)
          }
        } else if reader.document.root.objectValue != nil {
          readControl(reader.document.root, .root, reader, into: &definitions)
        } else {
          reader.report(
            .root, "must be a control definition object or an array of them, got \(reader.document.root.typeName)")
        }
        problems += sorted(reader.problems)
      }
    }
    config.controls = definitions.definitions

    if let mainReader {
      if let assignmentsValue {
        config.assignments = readAssignments(
          assignmentsValue, .root / "assignments", mainReader, buttons: config.buttons, definitions: definitions)
      }
      problems.insert(contentsOf: sorted(mainReader.problems), at: 0)
    }
    guard problems.isEmpty else { throw ConfigurationError(problems: problems) }
    return config
  }

  /// The drop-in directory a main file names (`controlsDirectory`), so the caller knows
  /// which files to read before calling `load`. Falls back to the default when the text
  /// does not parse or the value is not a string (`load` then reports the problem).
  public static func controlsDirectory(in main: ConfigurationSource?) -> String {
    guard let main, let doc = try? JSONParser.parse(main.text, options: .configuration),
      let dir = doc.root["controlsDirectory"]?.stringValue, dir.hasPrefix("/")
    else { return Configuration.defaultControlsDirectory }
    return dir
  }

  // MARK: - Files

  private static func parse(_ source: ConfigurationSource) -> Parsed {
    do {
      let doc = try JSONParser.parse(source.text, options: .configuration)
      return .success(ConfigurationReader(file: source.name, document: doc))
    } catch {
      return .failure(
        ConfigurationProblem(
          file: source.name, path: nil, line: error.location.line, column: error.location.column,
          message: "\(error.message) (column \(error.location.column))"))
    }
  }

  private enum Parsed {
    case success(ConfigurationReader)
    case failure(ConfigurationProblem)
  }

  private static func sorted(_ problems: [ConfigurationProblem]) -> [ConfigurationProblem] {
    // Stable by line and column, so messages read top to bottom like the file.
    problems.enumerated().sorted { a, b in
      let la = (a.element.line ?? 0, a.element.column ?? 0)
      let lb = (b.element.line ?? 0, b.element.column ?? 0)
      return la != lb ? la < lb : a.offset < b.offset
    }.map(\.element)
  }

  static let topLevelKeys = [
    "socket", "stateDirectory", "controlsDirectory", "logLevel", "buttons", "controls", "assignments",
  ]

  /// Reads everything but the assignments (they need the drop-ins' kinds), which it returns.
  private static func readMain(
    _ r: ConfigurationReader, into config: inout Configuration, definitions: inout DefinitionSet
  ) -> JSONValue? {
    let root = JSONPath.root
    guard let top = r.object(r.document.root, root, allowed: topLevelKeys, what: "an object (the configuration)")
    else { return nil }
    if let v = top["socket"] { config.socket = readSocket(v, root / "socket", r) }
    if let s = r.absolutePath(in: top, "stateDirectory", root) { config.stateDirectory = s }
    if let s = r.absolutePath(in: top, "controlsDirectory", root) { config.controlsDirectory = s }
    if let v = top["logLevel"],
      let l = r.word(v, root / "logLevel", LogLevel.allCases.map { ($0.name, $0) })
    {
      config.logLevel = l
    }
    if let v = top["buttons"] {
      config.buttons = readButtons(
        v, root / "buttons", r, names: &definitions.buttonNames, feedback: &config.feedback)
    }
    if let v = top["controls"] {
      if let array = v.arrayValue {
        for (i, element) in array.enumerated() { readControl(element, root / "controls" / i, r, into: &definitions) }
      } else {
        r.report(root / "controls", "must be an array of control definitions, got \(v.typeName)")
      }
    }
    return top["assignments"]
  }

  // MARK: - Socket

  private static func readSocket(_ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader) -> SocketSettings {
    var s = SocketSettings()
    guard
      let o = r.object(
        value, path, allowed: ["path", "group", "mode", "controlGroup", "controlUsers", "maxClients"])
    else { return s }
    if let p = r.absolutePath(in: o, "path", path) {
      // sun_path holds 108 bytes including the terminating NUL.
      if p.utf8.count > 107 {
        r.report(path / "path", "is too long for a Unix socket (at most 107 bytes, got \(p.utf8.count))")
      } else {
        s.path = p
      }
    }
    if let v = o["group"] { s.group = r.account(v, path / "group") }
    if let v = o["mode"] { s.mode = readMode(v, path / "mode", r) ?? s.mode }
    if let v = o["controlGroup"] { s.controlGroup = r.account(v, path / "controlGroup") }
    if let v = o["controlUsers"] {
      if let a = v.arrayValue {
        s.controlUsers = a.enumerated().compactMap { r.account($1, path / "controlUsers" / $0) }
      } else {
        r.report(path / "controlUsers", "must be an array of user names or uids, got \(v.typeName)")
      }
    }
    if let m = r.integer(
      in: o, "maxClients", path,
      range: Int64(SocketSettings.maxClientsRange.lowerBound)...Int64(SocketSettings.maxClientsRange.upperBound))
    {
      s.maxClients = Int(m)
    }
    return s
  }

  private static func readMode(_ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader) -> UInt32? {
    guard let text = value.stringValue else {
      r.report(path, "must be an octal string such as \"0660\" (a JSON number would be read as decimal)")
      return nil
    }
    guard (3...4).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x37 }),
      let mode = UInt32(text, radix: 8), mode <= 0o777
    else {
      r.report(path, "must be octal permission bits between \"000\" and \"0777\", got \(JSONEncoding.quoted(text))")
      return nil
    }
    if mode & 0o600 != 0o600 {
      r.report(path, "must give the owner read and write access (0600), got \(JSONEncoding.quoted(text))")
      return nil
    }
    return mode
  }

  // MARK: - Buttons

  static let buttonKeys = [
    "name", "key", "match", "holdThresholdMs", "debounceMs", "doublePressWindowMs", "longHoldThresholdMs", "grab",
    "feedback",
  ]
  static let matchKeys = ["tag", "property", "name", "phys", "uniq", "id", "link", "devnode"]

  /// Reads the buttons; `names` gets every name written, valid button or not, and
  /// `feedback` the feedback outputs of every valid button that has some.
  private static func readButtons(
    _ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader, names: inout [String],
    feedback: inout [String: [FeedbackOutput]]
  ) -> [ButtonConfig] {
    guard let array = value.arrayValue else {
      r.report(path, "must be an array of buttons, got \(value.typeName)")
      return []
    }
    var buttons: [ButtonConfig] = []
    var byName: [String: Int] = [:]
    var seen: [(index: Int, button: ButtonConfig)] = []
    var sysfsLEDs: [String: JSONPath] = [:]
    for (i, element) in array.enumerated() {
      let p = path / i
      guard let o = r.object(element, p, allowed: buttonKeys) else { continue }
      var ok = true
      var name = ""
      if let v = r.requireMember(o, "name", p, "a name such as \"action\""), let n = r.string(v, p / "name") {
        if !names.contains(n) { names.append(n) }
        if !ButtonConfig.isValidName(n) {
          r.report(
            p / "name",
            "must be letters, digits, -, _ and . starting with a letter or digit (at most 64), got \(JSONEncoding.quoted(n))"
          )
          ok = false
        } else if let first = byName[n] {
          r.report(
            p / "name", "duplicate button name \(n) (also buttons[\(first)], line \(r.line(of: path / first) ?? 0))")
          ok = false
        } else {
          byName[n] = i
        }
        name = n
      } else {
        ok = false
      }
      var code: UInt16 = 0
      if let v = r.requireMember(o, "key", p, "a key name such as \"KEY_PROG1\" or a code"),
        let c = readKey(v, p / "key", r)
      {
        code = c
      } else {
        ok = false
      }
      var match = DeviceMatch.default
      if let v = o["match"] {
        if let m = readMatch(v, p / "match", r) { match = m } else { ok = false }
      }
      var button = ButtonConfig(name: name, keyCode: code, match: match)
      if let ms = r.integer(in: o, "holdThresholdMs", p, range: ButtonConfig.holdThresholdRangeMs, unit: " ms") {
        button.holdThreshold = .milliseconds(ms)
      } else if o["holdThresholdMs"] != nil {
        ok = false
      }
      if let ms = r.integer(in: o, "debounceMs", p, range: ButtonConfig.debounceRangeMs, unit: " ms") {
        button.debounce = .milliseconds(ms)
      } else if o["debounceMs"] != nil {
        ok = false
      }
      if let g = r.bool(in: o, "grab", p) { button.grab = g } else if o["grab"] != nil { ok = false }
      if button.debounce >= button.holdThreshold {
        r.report(p / "debounceMs", "must be shorter than holdThresholdMs (\(button.holdThreshold.milliseconds))")
        ok = false
      }
      if let ms = r.integer(
        in: o, "doublePressWindowMs", p, range: ButtonConfig.doublePressWindowRangeMs, unit: " ms")
      {
        button.doublePressWindow = .milliseconds(ms)
        // A re-press within the debounce is chatter, so a shorter window could never see a double press.
        if button.doublePressWindow <= button.debounce {
          r.report(p / "doublePressWindowMs", "must be longer than debounceMs (\(button.debounce.milliseconds))")
          ok = false
        }
      } else if o["doublePressWindowMs"] != nil {
        ok = false
      }
      if let ms = r.integer(
        in: o, "longHoldThresholdMs", p, range: ButtonConfig.longHoldThresholdRangeMs, unit: " ms")
      {
        button.longHoldThreshold = .milliseconds(ms)
        if button.longHoldThreshold <= button.holdThreshold {
          r.report(
            p / "longHoldThresholdMs", "must be longer than holdThresholdMs (\(button.holdThreshold.milliseconds))")
          ok = false
        }
      } else if o["longHoldThresholdMs"] != nil {
        ok = false
      } else {
        button.longHoldThreshold = ButtonConfig.defaultLongHoldThreshold(holdThreshold: button.holdThreshold)
      }
      var outputs: [FeedbackOutput] = []
      if let v = o["feedback"] { outputs = readFeedback(v, p / "feedback", r, sysfsLEDs: &sysfsLEDs) }
      guard ok else { continue }
      if let twin = seen.first(where: { $0.button.keyCode == code && $0.button.match == match }) {
        r.report(
          p / "key",
          "buttons[\(twin.index)] (\(twin.button.name)) already uses \(button.keyName) on the same devices: one would shadow the other"
        )
        continue
      }
      seen.append((i, button))
      buttons.append(button)
      if !outputs.isEmpty { feedback[button.name] = outputs }
    }
    return buttons
  }

  // MARK: - Feedback

  static let feedbackKeys = [
    "led", "sysfs", "sound", "rumble", "hz", "strength", "device", "on", "indicator", "patterns",
  ]

  /// A button's `feedback` list. `sysfsLEDs` gets every LED class device named so far
  /// (over all buttons): one LED serves one output.
  private static func readFeedback(
    _ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader, sysfsLEDs: inout [String: JSONPath]
  ) -> [FeedbackOutput] {
    guard let array = value.arrayValue else {
      r.report(path, "must be an array of feedback outputs, got \(value.typeName)")
      return []
    }
    var outputs: [FeedbackOutput] = []
    var inputLEDs: [UInt16: Int] = [:]
    var beepers: [FeedbackDevice: Int] = [:]
    for (i, element) in array.enumerated() {
      let p = path / i
      guard let o = r.object(element, p, allowed: feedbackKeys) else { continue }
      var light: FeedbackOutput.Light?
      var ok = true
      let kinds = ["led", "sysfs", "sound", "rumble"].filter { o[$0] != nil }
      switch kinds.first {
      case nil:
        r.report(
          p,
          "needs led (an LED of the button's input device, such as \"LED_CAPSL\"), sysfs (an LED class "
            + "device under /sys/class/leds, such as \"ACT\"), sound (\"SND_TONE\" or \"SND_BELL\") or "
            + "rumble (\"FF_RUMBLE\")")
        ok = false
      case _ where kinds.count > 1:
        r.report(p / kinds[1], "cannot be given with \(kinds[0]): an output is one LED, beeper or motor")
        ok = false
      case "led":
        if let code = readLED(o["led"]!, p / "led", r) {
          if let first = inputLEDs[code] {
            r.report(p / "led", "the same LED as feedback[\(first)]")
            ok = false
          } else {
            inputLEDs[code] = i
            light = .inputLED(code: code)
          }
        } else {
          ok = false
        }
      case "sysfs":
        if let name = readSysfsLED(o["sysfs"]!, p / "sysfs", r) {
          if let first = sysfsLEDs[name] {
            r.report(p / "sysfs", "LED \(name) is already driven by \(first) (one LED, one output)")
            ok = false
          } else {
            sysfsLEDs[name] = p
            light = .sysfs(name: name)
          }
        } else {
          ok = false
        }
      default:
        light = readSoundOrRumble(o, p, r, kind: kinds[0])
        if let light, case .sound(_, _, let device) = light {
          if let first = beepers[device] {
            r.report(p / "sound", "the same beeper (\(device)) as feedback[\(first)]")
            ok = false
          } else {
            beepers[device] = i
          }
        }
        if light == nil { ok = false }
      }
      for key in ["hz", "strength", "device"] where o[key] != nil {
        let allowed = key == "hz" ? ["sound"] : key == "strength" ? ["rumble"] : ["sound", "rumble"]
        guard let kind = kinds.first, !allowed.contains(kind) else { continue }
        r.report(p / key, "is for \(allowed.joined(separator: " and ")) outputs, not \(kind)")
        ok = false
      }
      var indicator = false
      if let b = r.bool(in: o, "indicator", p) { indicator = b } else if o["indicator"] != nil { ok = false }
      // By the kind given, so that it is reported even when the output has other mistakes.
      if indicator, let kind = kinds.first, kind == "sound" || kind == "rumble" {
        r.report(p / "indicator", "needs a light (led or sysfs): a \(kinds[0]) output cannot show a state while idle")
        ok = false
      }
      var moments = indicator ? [] : light.map(FeedbackOutput.defaultMoments(for:)) ?? FeedbackMoment.allCases
      if let v = o["on"] {
        if let m = readMoments(v, p / "on", r) { moments = m } else { ok = false }
      }
      if moments.isEmpty && !indicator {
        r.report(p / "on", "shows nothing: name a moment (\(momentNames)) or set indicator: true")
        ok = false
      }
      var patterns: [FeedbackMoment: FeedbackPattern] = [:]
      if let v = o["patterns"] {
        if let given = readPatterns(v, p / "patterns", r, shown: moments) { patterns = given } else { ok = false }
      }
      guard ok, let light else { continue }
      outputs.append(FeedbackOutput(light: light, moments: moments, indicator: indicator, patterns: patterns))
    }
    return outputs
  }

  private static let momentNames = FeedbackMoment.allCases.map(\.rawValue).joined(separator: ", ")

  /// An `EV_LED` name (`LED_CAPSL`) or code 0...LED_MAX.
  private static func readLED(_ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader) -> UInt16? {
    switch value {
    case .string(let name):
      if let code = LEDCodes.code(named: name) { return code }
      var message = "unknown LED name \(JSONEncoding.quoted(name))"
      if let s = closestMatch(to: name, in: LEDCodes.all.map(\.name)) {
        message += " (did you mean \(s)?)"
      } else if let s = LEDCodes.code(named: "LED_" + name.uppercased()).flatMap(LEDCodes.name(of:)) {
        message += " (did you mean \(s)?)"
      } else {
        message += "; names are those of linux/input-event-codes.h, such as LED_CAPSL or LED_MISC"
      }
      r.report(path, message)
      return nil
    case .integer, .double:
      return r.integer(value, path, range: 0...Int64(LEDCodes.maximum)).map { UInt16($0) }
    default:
      r.report(path, "must be an LED name such as \"LED_CAPSL\" or an LED code, got \(value.typeName)")
      return nil
    }
  }

  /// A `sound` output (`SND_TONE` with `hz`, or `SND_BELL`) or a `rumble` one
  /// (`FF_RUMBLE` with `strength`), on `device` or the button's own device.
  private static func readSoundOrRumble(
    _ o: JSONObject, _ p: JSONPath, _ r: ConfigurationReader, kind: String
  ) -> FeedbackOutput.Light? {
    var ok = true
    var device = FeedbackDevice.button
    if let v = o["device"] {
      if let text = r.string(v, p / "device", maxLength: 255) {
        device = FeedbackDevice(configured: text)
        if case .path(let path) = device, path.hasSuffix("/") || path.split(separator: "/").contains("..") {
          r.report(
            p / "device",
            "must be an input event device node such as /dev/input/event5 or a link to one, or a device "
              + "name such as \"PC Speaker\", got \(JSONEncoding.quoted(text))")
          ok = false
        }
      } else {
        ok = false
      }
    }
    if kind == "sound" {
      var code: UInt16?
      if let name = r.string(o["sound"]!, p / "sound") {
        code = SoundCodes.code(named: name) ?? SoundCodes.code(named: "SND_" + name.uppercased())
        if code == nil || !name.hasPrefix("SND_") {
          var message = "unknown sound \(JSONEncoding.quoted(name)): SND_TONE (a tone of hz) or SND_BELL"
          if let code { message += " (did you mean \(SoundCodes.name(of: code))?)" }
          r.report(p / "sound", message)
          code = nil
        }
      }
      var hertz = SoundCodes.defaultHertz
      if let v = o["hz"] {
        if code == SoundCodes.bell {
          r.report(p / "hz", "is for SND_TONE: SND_BELL rings at the device's own pitch")
          ok = false
        } else if let h = r.integer(v, p / "hz", range: SoundCodes.hertzRange, unit: " Hz") {
          hertz = Int32(h)
        } else {
          ok = false
        }
      }
      guard ok, let code else { return nil }
      return .sound(code: code, hertz: code == SoundCodes.tone ? hertz : 1, device: device)
    }
    if let name = r.string(o["rumble"]!, p / "rumble") {
      if name != RumbleEffect.name {
        r.report(p / "rumble", "unknown effect \(JSONEncoding.quoted(name)): the rumble effect is \"FF_RUMBLE\"")
        ok = false
      }
    } else {
      ok = false
    }
    var strength = RumbleEffect.defaultStrength
    if let v = o["strength"] {
      if let s = r.integer(v, p / "strength", range: 1...100, unit: "%") { strength = Int(s) } else { ok = false }
    }
    return ok ? .rumble(strength: strength, device: device) : nil
  }

  /// The directory LED class devices live in; `sysfs` names one of them.
  public static let ledsDirectory = "/sys/class/leds"

  /// An LED class device's name (`ACT`), or its path `/sys/class/leds/ACT`: the name.
  private static func readSysfsLED(_ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader) -> String? {
    guard let s = r.string(value, path, maxLength: 255) else { return nil }
    var name = Substring(s)
    if s.hasPrefix(ledsDirectory + "/") { name = name.dropFirst(ledsDirectory.count + 1) }
    if name.hasSuffix("/") { name = name.dropLast() }
    guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
      r.report(
        path,
        "must be the name of an LED class device (such as \"ACT\") or its path under \(ledsDirectory), "
          + "got \(JSONEncoding.quoted(s))")
      return nil
    }
    return String(name)
  }

  private static func readMoments(
    _ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader
  )
    -> [FeedbackMoment]?
  {
    guard let array = value.arrayValue else {
      r.report(path, "must be an array of moments (\(momentNames)), got \(value.typeName)")
      return nil
    }
    var moments: [FeedbackMoment] = []
    var ok = true
    for (i, element) in array.enumerated() {
      guard let m = r.word(element, path / i, FeedbackMoment.allCases.map { ($0.rawValue, $0) }) else {
        ok = false
        continue
      }
      if moments.contains(m) {
        r.report(path / i, "\(m) is listed twice")
        ok = false
      }
      moments.append(m)
    }
    return ok ? moments : nil
  }

  /// `patterns`: moment → `"on"` or alternating on/off milliseconds, starting with on.
  private static func readPatterns(
    _ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader, shown: [FeedbackMoment]
  ) -> [FeedbackMoment: FeedbackPattern]? {
    guard let o = r.object(value, path, allowed: FeedbackMoment.allCases.map(\.rawValue)) else { return nil }
    var patterns: [FeedbackMoment: FeedbackPattern] = [:]
    var ok = true
    for key in o.keys {
      guard let moment = FeedbackMoment(rawValue: key), let v = o[key] else {
        ok = false
        continue
      }
      let p = path / key
      if !shown.contains(moment) {
        r.report(p, "\(moment) is not in on, so this pattern is never shown")
        ok = false
        continue
      }
      if v.stringValue == "on" {
        patterns[moment] = .whileDown
        continue
      }
      let what =
        "\"on\" (on while the key is down) or milliseconds alternating on and off, starting with on, "
        + "such as [80, 80, 80]"
      guard let list = v.arrayValue else {
        r.report(p, "must be \(what), got \(v.stringValue.map(JSONEncoding.quoted) ?? v.typeName)")
        ok = false
        continue
      }
      guard (1...FeedbackPattern.maximumSteps).contains(list.count) else {
        r.report(p, "must have 1 to \(FeedbackPattern.maximumSteps) durations, got \(list.count)")
        ok = false
        continue
      }
      var ms: [Int64] = []
      for (i, element) in list.enumerated() {
        if let d = r.integer(element, p / i, range: FeedbackPattern.stepRangeMs, unit: " ms") {
          ms.append(d)
        } else {
          ok = false
        }
      }
      if ms.count == list.count { patterns[moment] = FeedbackPattern(alternatingMilliseconds: ms) }
    }
    return ok ? patterns : nil
  }

  /// A key name from the table (`KEY_PROG1`, `BTN_0`, aliases) or a number 1...KEY_MAX.
  private static func readKey(_ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader) -> UInt16? {
    switch value {
    case .string(let name):
      guard let code = KeyCodes.code(named: name) else {
        var message = "unknown key name \(JSONEncoding.quoted(name))"
        let candidates = KeyCodes.all.map(\.name)
        if let s = closestMatch(to: name, in: candidates) {
          message += " (did you mean \(s)?)"
        } else if let s = ["KEY_", "BTN_"].map({ $0 + name.uppercased() }).first(where: {
          KeyCodes.code(named: $0) != nil
        }) {
          message += " (did you mean \(s)?)"
        } else {
          message += "; names are those of linux/input-event-codes.h, such as KEY_PROG1 or BTN_0"
        }
        r.report(path, message)
        return nil
      }
      guard code != 0 else {
        r.report(path, "KEY_RESERVED is not a key")
        return nil
      }
      return code
    case .integer, .double:
      return r.integer(value, path, range: 1...Int64(KeyCodes.maximum)).map { UInt16($0) }
    default:
      r.report(path, "must be a key name such as \"KEY_PROG1\" or a key code, got \(value.typeName)")
      return nil
    }
  }

  private static func readMatch(_ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader) -> DeviceMatch? {
    guard let o = r.object(value, path, allowed: matchKeys) else { return nil }
    var m = DeviceMatch()
    var ok = true
    func glob(_ key: String, absolute: Bool = false) -> Glob? {
      guard let v = o[key] else { return nil }
      let p = path / key
      guard let s = absolute ? r.absolutePath(v, p) : r.string(v, p) else {
        ok = false
        return nil
      }
      do {
        return try Glob(s)
      } catch {
        r.report(p, error.message)
        ok = false
        return nil
      }
    }
    if let v = o["tag"] {
      let values: [JSONValue]
      if let a = v.arrayValue {
        values = a
        if a.isEmpty { r.report(path / "tag", "must not be empty (leave tag out to match without a tag)") }
      } else {
        values = [v]
      }
      for (i, t) in values.enumerated() {
        let p = v.arrayValue == nil ? path / "tag" : path / "tag" / i
        guard let s = r.string(t, p) else {
          ok = false
          continue
        }
        if s.utf8.contains(where: {
          !($0.isASCIILetter || $0.isASCIIDigit || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-"))
        }) {
          r.report(p, "must be a udev tag (letters, digits, _ and -), got \(JSONEncoding.quoted(s))")
          ok = false
        } else {
          m.tags.append(s)
        }
      }
    }
    if let v = o["property"] {
      if let props = r.object(v, path / "property", allowed: nil, what: "an object of udev properties") {
        if props.isEmpty { r.report(path / "property", "must not be empty") }
        for (key, pv) in props {
          let p = path / "property" / key
          if key.isEmpty
            || key.utf8.contains(where: { !($0.isASCIILetter || $0.isASCIIDigit || $0 == UInt8(ascii: "_")) })
          {
            r.report(p, "is not a udev property name (letters, digits and _)")
            ok = false
            continue
          }
          guard let s = r.string(pv, p, allowEmpty: true) else {
            ok = false
            continue
          }
          do {
            m.properties[key] = try Glob(s)
          } catch {
            r.report(p, error.message)
            ok = false
          }
        }
      } else {
        ok = false
      }
    }
    m.name = glob("name")
    m.phys = glob("phys")
    m.uniq = glob("uniq")
    m.link = glob("link", absolute: true)
    m.devnode = glob("devnode", absolute: true)
    if let v = o["id"] {
      if let (vendor, product) = readID(v, path / "id", r) {
        m.vendor = vendor
        m.product = product
      } else {
        ok = false
      }
    }
    guard ok else { return nil }
    return m.isEmpty ? .default : m
  }

  /// `"046d:c52b"`: vendor and product, four hex digits each.
  private static func readID(_ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader) -> (UInt16, UInt16)? {
    guard let s = r.string(value, path) else { return nil }
    let parts = s.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, parts.allSatisfy({ $0.utf8.count == 4 }),
      let v = UInt16(parts[0], radix: 16), let p = UInt16(parts[1], radix: 16)
    else {
      r.report(path, "must be vendor:product in hexadecimal, such as \"046d:c52b\", got \(JSONEncoding.quoted(s))")
      return nil
    }
    return (v, p)
  }

  // MARK: - Assignments

  /// Keys of one gesture's assignment object, and of the hold's short object form.
  static let assignmentKeys = ["kind", "configuration", "momentary"]

  private static func readAssignments(
    _ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader, buttons: [ButtonConfig],
    definitions: DefinitionSet
  ) -> [String: [Gesture: GestureAssignment]] {
    let buttonNames = buttons.map(\.name)
    // Names of buttons that had errors were reported there; an assignment to one is not reported again.
    let writtenNames = definitions.buttonNames
    guard let o = r.object(value, path, allowed: nil, what: "an object of button name → control")
    else { return [:] }
    var result: [String: [Gesture: GestureAssignment]] = [:]
    for (button, entry) in o {
      let p = path / button
      if !writtenNames.contains(button) {
        var message = "no button is named \(JSONEncoding.quoted(button))"
        if let s = closestMatch(to: button, in: writtenNames) { message += " (did you mean \(s)?)" }
        if !writtenNames.isEmpty { message += "; buttons: \(writtenNames.joined(separator: ", "))" }
        r.report(p, message)
      }
      var gestures: [Gesture: GestureAssignment] = [:]
      if let eo = entry.objectValue, eo.keys.contains(where: { Gesture(rawValue: $0) != nil }) {
        // The per-gesture form: only gesture keys, each holding a kind or an object.
        guard
          let go = r.object(
            entry, p, allowed: nil, what: "an object of gesture → control")
        else { continue }
        for key in go.keys where Gesture(rawValue: key) == nil {
          if assignmentKeys.contains(key) {
            r.report(
              p / key,
              "cannot be mixed with the gesture keys \(Gesture.names) (write the hold's control as hold: { \(key): ... })"
            )
          } else {
            var message = "unknown key"
            if let s = closestMatch(to: key, in: Gesture.allCases.map(\.rawValue)) {
              message += " (did you mean \(s)?)"
            }
            r.report(p / key, message + "; gestures: \(Gesture.names)")
          }
        }
        for gesture in Gesture.allCases {
          guard let v = go[gesture.rawValue] else { continue }
          if let a = readGestureAssignment(v, p / gesture.rawValue, gesture, r, definitions: definitions) {
            gestures[gesture] = a
          }
        }
      } else if let a = readGestureAssignment(entry, p, .hold, r, definitions: definitions, shortForm: true) {
        gestures[.hold] = a
      }
      if buttonNames.contains(button), !gestures.isEmpty { result[button] = gestures }
    }
    return result
  }

  /// One gesture's assignment: a kind, or `{kind, configuration?, momentary?}`. `shortForm`:
  /// the button's entry itself (the hold), where a misspelt gesture key is likelier than a
  /// misspelt `kind`.
  private static func readGestureAssignment(
    _ entry: JSONValue, _ p: JSONPath, _ gesture: Gesture, _ r: ConfigurationReader, definitions: DefinitionSet,
    shortForm: Bool = false
  ) -> GestureAssignment? {
    var kindValue: JSONValue?
    var kindPath = p
    var configuration = JSONObject()
    let configurationPath = p / "configuration"
    var momentary = false
    var momentaryPath: JSONPath?
    if entry.stringValue != nil {
      kindValue = entry
    } else if let eo = r.object(
      entry, p, allowed: nil,
      what: shortForm
        ? "a kind, {kind, configuration, momentary} or {hold, doublePress, longHold}"
        : "a kind or {kind, configuration, momentary}")
    {
      var misspeltGesture = false
      let candidates = assignmentKeys + (shortForm ? Gesture.allCases.map(\.rawValue) : [])
      for key in eo.keys where !assignmentKeys.contains(key) {
        var message = "unknown key"
        if let s = closestMatch(to: key, in: candidates) {
          message += " (did you mean \(s)?)"
          if Gesture(rawValue: s) != nil { misspeltGesture = true }
        }
        r.report(p / key, message)
      }
      if let k = eo["kind"] {
        kindValue = k
      } else if !misspeltGesture {
        // A misspelt gesture key (`doublePres`) means the per-gesture form: no kind is missing.
        r.report(p / "kind", "missing (the kind of the control to assign)")
      }
      kindPath = p / "kind"
      if let c = eo["configuration"] {
        if let co = c.objectValue {
          configuration = co
        } else {
          r.report(configurationPath, "must be an object of parameter values, got \(c.typeName)")
          return nil
        }
      }
      if eo["momentary"] != nil {
        momentaryPath = p / "momentary"
        if gesture != .hold {
          r.report(
            p / "momentary", "only a hold can be momentary (a \(gesture) performs once); leave momentary out")
          return nil
        }
        guard let m = r.bool(in: eo, "momentary", p) else { return nil }
        momentary = m
      }
    }
    guard let kindValue, let kind = r.string(kindValue, kindPath) else { return nil }
    guard let definition = definitions.definition(kind) else {
      // A kind whose definition had errors was already reported; do not cascade.
      if !definitions.attempted.contains(kind) {
        var message = "no control has kind \(JSONEncoding.quoted(kind))"
        if let s = closestMatch(to: kind, in: definitions.definitions.map(\.kind)) {
          message += " (did you mean \(s)?)"
        }
        r.report(kindPath, message)
      }
      return nil
    }
    if momentary, definition.type != .toggle, let momentaryPath {
      r.report(
        momentaryPath,
        "only a toggle can be momentary (on while held, off at the release): \(kind) is a \(definition.type.rawValue)")
      return nil
    }
    do {
      return GestureAssignment(
        instance: try ControlInstance(definition: definition, configuration: configuration), momentary: momentary)
    } catch {
      for problem in error.problems { r.report(configurationPath / problem.parameter, problem.message) }
      return nil
    }
  }
}

/// Definitions read so far, with where each kind was defined (for duplicate messages).
struct DefinitionSet {
  var definitions: [ControlDefinition] = []
  /// Where each kind was first defined: file and line.
  var origins: [String: (file: String, line: Int?)] = [:]
  /// Kinds that appeared, valid or not (an assignment to a broken definition is not reported twice).
  var attempted: Set<String> = []
  /// Every button name the main file wrote, valid or not, in order.
  var buttonNames: [String] = []

  func definition(_ kind: String) -> ControlDefinition? { definitions.first { $0.kind == kind } }
}
