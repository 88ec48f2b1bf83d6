// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

/// What `actiond learn` prints for a device and a key: the snippet is configuration the
/// loader accepts and that matches exactly that device, the udev line is exact, the JSON
/// parses and carries the documented members.
@Suite struct LearnedButtonTests {
  static let keyboard = InputDeviceInfo(
    syspath: "/sys/devices/pci0000:00/usb1/1-2/input/input7/event5", devnode: "/dev/input/event5",
    name: "Logitech USB Keyboard", phys: "usb-0000:00:14.0-2/input0", bustype: 0x03, vendor: 0x046d,
    product: 0xc31c,
    links: [
      "/dev/input/by-path/pci-0000:00:14.0-usb-0:2:1.0-event-kbd",
      "/dev/input/by-id/usb-Logitech_USB_Keyboard-event-kbd",
    ])
  /// A uinput device: no links, a name with glob and udev pattern characters.
  static let virtual = InputDeviceInfo(
    syspath: "/sys/devices/virtual/input/input9/event9", devnode: "/dev/input/event9",
    name: #"Foot [Switch] *2* | "x""#, bustype: 0x06, vendor: 0x1a86, product: 0xe026)

  /// The snippet, as a button of a configuration, loads and binds the same key on a match
  /// that takes the device and not a look-alike.
  private func load(_ snippet: String) throws -> ButtonConfig {
    let config = try ConfigurationLoader.load(
      main: ConfigurationSource(name: "learned.json", text: "{ buttons: [\(snippet)] }"))
    return try #require(config.buttons.first)
  }

  @Test func aDeviceWithLinksIsMatchedByItsByIDLink() throws {
    let learned = LearnedButton(device: Self.keyboard, keyCode: 183)
    #expect(learned.keyName == "KEY_F13")
    #expect(learned.identity == .link("/dev/input/by-id/usb-Logitech_USB_Keyboard-event-kbd"))
    #expect(
      learned.snippet
        == #"{ name: "action", key: "KEY_F13", match: { link: "/dev/input/by-id/usb-Logitech_USB_Keyboard-event-kbd" } }"#
    )
    #expect(
      learned.udevRule
        == #"SUBSYSTEM=="input", KERNEL=="event*", SYMLINK=="input/by-id/usb-Logitech_USB_Keyboard-event-kbd", ENV{ACTIOND_BUTTON}="action", TAG+="actiond""#
    )
    let button = try load(learned.snippet)
    #expect(button.name == "action" && button.keyCode == 183)
    #expect(button.match == learned.match)
    #expect(button.match.matches(Self.keyboard))
    var other = Self.keyboard
    other.links = ["/dev/input/by-id/usb-Other_Keyboard-event-kbd"]
    #expect(!button.match.matches(other))
  }

  @Test func byPathIsUsedWhenThereIsNoByIDLink() throws {
    var device = Self.keyboard
    device.links = ["/dev/input/by-path/platform-gpio-keys-event"]
    let learned = LearnedButton(device: device, keyCode: 0x100, buttonName: "user")
    #expect(learned.identity == .link("/dev/input/by-path/platform-gpio-keys-event"))
    #expect(learned.snippet.contains(#"key: "BTN_0""#))
    #expect(learned.udevRule.contains(#"SYMLINK=="input/by-path/platform-gpio-keys-event""#))
    #expect(learned.udevRule.hasSuffix(#"ENV{ACTIOND_BUTTON}="user", TAG+="actiond""#))
    #expect(try load(learned.snippet).match.matches(device))
  }

  /// Two identical keyboards without a serial share the by-id link: by-path tells them apart.
  @Test func aSharedLinkIsPassedOver() throws {
    var twin = Self.keyboard
    twin.syspath = "/sys/devices/pci0000:00/usb1/1-3/input/input8/event6"
    twin.links = [
      "/dev/input/by-path/pci-0000:00:14.0-usb-0:3:1.0-event-kbd",
      "/dev/input/by-id/usb-Logitech_USB_Keyboard-event-kbd",
    ]
    let learned = LearnedButton(device: Self.keyboard, keyCode: 183, others: [Self.keyboard, twin])
    #expect(learned.sharedLinks == ["/dev/input/by-id/usb-Logitech_USB_Keyboard-event-kbd"])
    #expect(learned.identity == .link("/dev/input/by-path/pci-0000:00:14.0-usb-0:2:1.0-event-kbd"))
    let match = try load(learned.snippet).match
    #expect(match.matches(Self.keyboard) && !match.matches(twin))
    #expect(learned.udevRule.contains(#"SYMLINK=="input/by-path/pci-0000:00:14.0-usb-0:2:1.0-event-kbd""#))
    // Every link shared: the name and id.
    twin.links = Self.keyboard.links
    #expect(
      LearnedButton(device: Self.keyboard, keyCode: 183, others: [twin]).identity
        == .nameAndID(name: "Logitech USB Keyboard", vendor: 0x046d, product: 0xc31c))
  }

  @Test func withoutLinksTheNameAndIDMatchAndPatternCharactersAreLiteral() throws {
    let learned = LearnedButton(device: Self.virtual, keyCode: 148, uaccess: true)
    #expect(learned.identity == .nameAndID(name: Self.virtual.name, vendor: 0x1a86, product: 0xe026))
    // The glob escapes make `*`, `[` literal: the match takes this name only.
    let button = try load(learned.snippet)
    #expect(button.match.matches(Self.virtual))
    var lookalike = Self.virtual
    lookalike.name = #"Foot S *2* | "x""#
    #expect(!button.match.matches(lookalike))
    lookalike = Self.virtual
    lookalike.product = 0xe027
    #expect(!button.match.matches(lookalike))
    // udev has no escapes: each pattern character is one `?`, never an alternative `|`.
    #expect(
      learned.udevRule
        == #"SUBSYSTEM=="input", KERNEL=="event*", ATTRS{name}=="Foot ?Switch? ?2? ? ?x?", ATTRS{id/vendor}=="1a86", ATTRS{id/product}=="e026", ENV{ACTIOND_BUTTON}="action", TAG+="actiond", TAG+="uaccess""#
    )
  }

  @Test func aKeyWithoutANameIsItsNumber() throws {
    let learned = LearnedButton(device: Self.keyboard, keyCode: 0x2f0)
    #expect(learned.keyName == "752")
    #expect(learned.snippet.contains("key: 752,"))
    #expect(try load(learned.snippet).keyCode == 0x2f0)
  }

  @Test func theJSONObjectParsesAndItsButtonIsConfiguration() throws {
    let learned = LearnedButton(device: Self.keyboard, keyCode: 183)
    let text = JSONEncoding.compact(learned.json)
    let root = try JSONParser.parse(text).root
    #expect(root["device"]?["name"]?.stringValue == "Logitech USB Keyboard")
    #expect(root["device"]?["devnode"]?.stringValue == "/dev/input/event5")
    #expect(root["device"]?["byId"]?.arrayValue == ["/dev/input/by-id/usb-Logitech_USB_Keyboard-event-kbd"])
    #expect(root["device"]?["byPath"]?.arrayValue?.count == 1)
    #expect(root["device"]?["bus"]?.stringValue == "usb")
    #expect(root["device"]?["bustype"]?.integerValue == 3)
    #expect(root["device"]?["id"]?.stringValue == "046d:c31c")
    #expect(root["device"]?["phys"]?.stringValue == "usb-0000:00:14.0-2/input0")
    #expect(root["device"]?["uniq"]?.isNull == true)
    #expect(root["key"]?["name"]?.stringValue == "KEY_F13")
    #expect(root["key"]?["code"]?.integerValue == 183)
    #expect(root["snippet"]?.stringValue == learned.snippet)
    #expect(root["udevRule"]?.stringValue == learned.udevRule)
    #expect(root["udevRuleFile"]?.stringValue == "/etc/udev/rules.d/69-actiond-local.rules")
    let button = try #require(root["button"])
    #expect(try load(JSONEncoding.compact(button)) == (try load(learned.snippet)))
  }

  @Test func theReportShowsEveryFactAndTheTwoLines() {
    let text = LearnedButton(device: Self.keyboard, keyCode: 183).text
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(lines[0] == "device   Logitech USB Keyboard (/dev/input/event5)")
    #expect(lines.contains("by-id    /dev/input/by-id/usb-Logitech_USB_Keyboard-event-kbd"))
    #expect(lines.contains("by-path  /dev/input/by-path/pci-0000:00:14.0-usb-0:2:1.0-event-kbd"))
    #expect(lines.contains("bus      usb (0x03), id 046d:c31c"))
    #expect(lines.contains("key      KEY_F13 (code 183)"))
    #expect(lines.contains("  " + LearnedButton(device: Self.keyboard, keyCode: 183).snippet))
    #expect(lines.contains("  " + LearnedButton(device: Self.keyboard, keyCode: 183).udevRule))
    #expect(text.contains("--uaccess"))
    #expect(!LearnedButton(device: Self.keyboard, keyCode: 183, uaccess: true).text.contains("--uaccess"))
  }

  /// `--configuration`: the embedded default with the learned button, under its name.
  @Test func theWholeConfigurationIsTheDefaultOnTheLearnedButton() throws {
    for name in ["action", "pedal"] {
      let learned = LearnedButton(device: Self.virtual, keyCode: 183, buttonName: name)
      let config = try ConfigurationLoader.load(
        main: ConfigurationSource(name: "learned.json", text: learned.configuration))
      let defaults = try ConfigurationLoader.load(main: nil)
      #expect(config.buttons.map(\.name) == [name])
      #expect(config.buttons[0].keyCode == 183 && config.buttons[0].match == learned.match)
      #expect(config.controls.map(\.kind) == defaults.controls.map(\.kind))
      #expect(config.assignments[name] != nil)
      #expect(config.socket == defaults.socket)
    }
  }

  @Test func busNames() {
    #expect(LearnedButton.busName(0x03) == "usb")
    #expect(LearnedButton.busName(0x19) == "host")
    #expect(LearnedButton.busName(0x05) == "bluetooth")
    #expect(LearnedButton.busName(0x7f) == nil)
  }
}

@Suite struct LearnOptionsTests {
  @Test func mistakesAreUsageErrors() {
    #expect(throws: UsageError(message: "unknown argument '--config' for learn")) {
      try LearnOptions.parse(["--config", "x"])
    }
    #expect(throws: UsageError(message: "option --timeout needs a value")) {
      try LearnOptions.parse(["--timeout"])
    }
    #expect(throws: UsageError.self) { try LearnOptions.parse(["--timeout", "0"]) }
    #expect(throws: UsageError.self) { try LearnOptions.parse(["--timeout", "soon"]) }
    #expect(throws: UsageError.self) { try LearnOptions.parse(["--name", "no spaces"]) }
    #expect(throws: UsageError(message: "--json and --configuration exclude each other")) {
      try LearnOptions.parse(["--json", "--configuration"])
    }
  }
}

/// The explanations built from what this process may read.
@Suite struct InputAccessReportTests {
  static func denied(_ n: Int, listed: Bool = false) -> InputNodeAccess {
    InputNodeAccess(
      path: "/dev/input/event\(n)", error: "EACCES", group: "input", mode: 0o660, userListedInGroup: listed)
  }

  @Test func noNodeAtAll() {
    let report = InputAccessReport(user: "alice", isRoot: false, nodes: [])
    #expect(report.nothingReadable(learn: "actiond learn").hasPrefix("no input device: /dev/input has no event* node"))
    #expect(report.waitingAdvice(tag: "actiond", learn: "actiond learn").contains("no input device is present"))
  }

  @Test func permissionDeniedNamesTheGroupTheUserAndTheFixes() {
    let report = InputAccessReport(user: "alice", isRoot: false, nodes: (0..<3).map { Self.denied($0) })
    #expect(
      report.deniedClause
        == "3 of 3 input devices (/dev/input/event*) belong to group input (mode 0660) and alice is not in it")
    let learn = report.nothingReadable(learn: "actiond learn")
    #expect(learn.hasPrefix("no input device is readable by alice: 3 of 3 input devices"))
    #expect(learn.contains("`sudo actiond learn`"))
    #expect(learn.contains("`sudo usermod -aG input alice`"))
    #expect(learn.contains(#"TAG+="uaccess""#))
    let advice = report.waitingAdvice(tag: "actiond", learn: ".build/debug/actiond learn")
    #expect(advice.hasPrefix("3 of 3 input devices (/dev/input/event*) belong to group input"))
    #expect(advice.contains("run `sudo .build/debug/actiond learn --uaccess` and press the button"))
  }

  @Test func addedToTheGroupButNotLoggedInAgain() {
    let report = InputAccessReport(user: "bob", isRoot: false, nodes: [Self.denied(0, listed: true)])
    #expect(
      report.deniedClause?.hasSuffix("bob was added to input but this login is not in it yet (log in again)") == true)
  }

  @Test func readableButUnmatchedSaysToLearn() {
    let nodes = [InputNodeAccess(path: "/dev/input/event0"), Self.denied(1)]
    let root = InputAccessReport(user: "root", isRoot: true, nodes: nodes)
    #expect(
      root.waitingAdvice(tag: "actiond", learn: "actiond learn")
        == "1 of 2 input devices are readable, none tagged actiond by udev, and none matches: run `actiond learn` "
        + "and press the button: it prints the configuration and the udev rule that bind it")
    let other = InputAccessReport(user: "x", isRoot: false, nodes: [InputNodeAccess(path: "/dev/input/event0")])
    #expect(other.deniedClause == nil)
    #expect(other.waitingAdvice(tag: nil, learn: "actiond learn").hasPrefix("1 of 1 input devices are readable, and"))
    let failing = InputAccessReport(
      user: "x", isRoot: false, nodes: [InputNodeAccess(path: "/dev/input/event0", error: "ENODEV")])
    #expect(failing.nothingReadable(learn: "actiond learn").contains("failed (ENODEV)"))
  }
}
