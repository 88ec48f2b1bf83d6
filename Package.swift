// swift-tools-version: 6.0
// SPDX-License-Identifier: Apache-2.0
//
// actiond: the iPhone Action button and iOS 18 Controls for any Linux key or GPIO button.
//
// Layout (see README.md and docs/architecture.md, The modules): modules by program.
//   ActiondCore    pure logic: recognizer, control model, hints, configuration, wire codec, engine.
//                  No Glibc, libevdev, sockets or file I/O, so every rule is testable without a device.
//   ActiondLinux   Linux adapters behind small protocols: epoll loop, timerfd, signalfd, libevdev,
//                  libudev, Unix sockets, child processes, files, sd_notify.
//   CActiondShim   what `import Glibc` lacks (epoll, timerfd, signalfd, ucred, CMSG_*, ...).
//   CEvdev/CUdev   system libraries through pkg-config.
//   ActiondDaemon  the daemon's program: its command line and the wiring of adapters to the engine.
//   ActionctlKit   actionctl's program: command line, socket client, rendering, watch, notifications.
//   ActiondMQTT    actiond-mqtt's program: its pure model and its adapters, libmosquitto
//                  (CMosquitto) and actiond's socket on the loop.
//   ActiondTesting recording fakes, a manual clock and the harnesses more than one test target
//                  uses; only tests link it, no product.
//   actiond, actionctl, actiond-mqtt  thin executables that only hand over to their program.
import PackageDescription

/// Every Swift target: Swift 6 language mode (package default) and warnings are errors.
/// The flag, not 6.2's `.treatAllWarnings(as:)`: one manifest serves Debian 13's Swift 6.0.3
/// and newer toolchains alike (unsafe flags are allowed in a root package).
let strictSettings: [SwiftSetting] = [
  .unsafeFlags(["-warnings-as-errors"])
]

/// Every executable's link in a release build, for a smaller resident set (VmRSS; measured in
/// docs/benchmarks-notebook.md, "VmRSS: where it goes"); the code is the same:
/// - lld, which every toolchain that builds actiond ships (Swift.org's, and Debian 13's swiftlang
///   in /usr/libexec/swift/bin), with packed relative relocations (`-z pack-relative-relocs`,
///   glibc 2.36 and later: Debian 12 and 13): the static Swift runtime's 460 kB of `.rela.dyn`,
///   which ld.so reads once at start, become 4 kB of `.relr.dyn`, and lld puts the read-only
///   data in a segment of its own, away from the text. With gold, Swift's default, actiond's
///   VmRSS in the VM was 8,138 kB after start (median of 8), with lld 7,676 kB.
/// - No symbol of the project in the dynamic symbol table: `--static-swift-stdlib` links with
///   `-export-dynamic` (the toolchain's static-stdlib-args.lnk), which lists every public
///   symbol of the project's modules there (actiond: 5,074 symbols, 434 kB in its text
///   segment) for no reader: nothing the programs load looks them up, and the runtime finds
///   types and conformances in its own sections (about 300 kB of VmRSS). The flag follows the
///   toolchain's and the last one wins.
/// - A GNU build ID (SHA-1, as gold writes it), asked for by name because not every clang
///   driver passes one to lld (the arm64 cross build's does not): dh_strip files the detached
///   debug symbols (the -dbgsym packages) by it.
let releaseLinkerSettings: [LinkerSetting] = [
  .unsafeFlags(
    [
      "-use-ld=lld", "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
      "-Xlinker", "--build-id=sha1",
    ], .when(configuration: .release))
]

let package = Package(
  name: "actiond",
  products: [
    .executable(name: "actiond", targets: ["actiond"]),
    .executable(name: "actionctl", targets: ["actionctl"]),
    .executable(name: "actiond-mqtt", targets: ["actiond-mqtt"]),
  ],
  targets: [
    .target(
      name: "ActiondCore",
      swiftSettings: strictSettings,
      // The stdlib's floating-point rounding calls libm; the core imports no Glibc to get it.
      linkerSettings: [.linkedLibrary("m")]
    ),
    .systemLibrary(
      name: "CEvdev",
      path: "Sources/CEvdev",
      pkgConfig: "libevdev",
      providers: [.apt(["libevdev-dev"])]
    ),
    .systemLibrary(
      name: "CUdev",
      path: "Sources/CUdev",
      pkgConfig: "libudev",
      providers: [.apt(["libudev-dev"])]
    ),
    .systemLibrary(
      name: "CMosquitto",
      path: "Sources/CMosquitto",
      pkgConfig: "libmosquitto",
      providers: [.apt(["libmosquitto-dev"])]
    ),
    .target(
      name: "CActiondShim",
      path: "Sources/CActiondShim"
    ),
    .target(
      name: "ActiondLinux",
      dependencies: ["ActiondCore", "CActiondShim", "CEvdev", "CUdev"],
      swiftSettings: strictSettings
    ),
    // The daemon's program: its command line and the wiring of the adapters to the engine
    // (Daemon, EffectInterpreter, RequestRouter). A library so that tests drive it whole.
    .target(
      name: "ActiondDaemon",
      dependencies: ["ActiondCore", "ActiondLinux", "CActiondShim"],
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "actiond",
      dependencies: ["ActiondCore", "ActiondLinux", "ActiondDaemon"],
      swiftSettings: strictSettings,
      linkerSettings: releaseLinkerSettings
    ),
    // The MQTT / Home Assistant bridge's program: its pure model (Model/: topics, discovery,
    // command lanes, settings) and its I/O, libmosquitto and actiond's socket on the epoll
    // loop. Its own target so that only actiond-mqtt links libmosquitto.
    .target(
      name: "ActiondMQTT",
      dependencies: ["ActiondCore", "ActiondLinux", "CActiondShim", "CMosquitto"],
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "actiond-mqtt",
      dependencies: ["ActiondCore", "ActiondLinux", "ActiondMQTT"],
      swiftSettings: strictSettings,
      linkerSettings: releaseLinkerSettings
    ),
    // The VM test tier's device tool: uinput devices with exact press timing, and a reader.
    .executableTarget(
      name: "actiond-testdev",
      dependencies: ["ActiondCore", "CEvdev"],
      swiftSettings: strictSettings,
      linkerSettings: releaseLinkerSettings
    ),
    // Diagnostics and the VM tier: binds the configured buttons like actiond and prints what it reads.
    .executableTarget(
      name: "actiond-input-probe",
      dependencies: ["ActiondCore", "ActiondLinux"],
      swiftSettings: strictSettings,
      linkerSettings: releaseLinkerSettings
    ),
    // actionctl's program: command line, socket client, rendering, watch and notifications.
    .target(
      name: "ActionctlKit",
      dependencies: ["ActiondCore", "ActiondLinux"],
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "actionctl",
      dependencies: ["ActiondLinux", "ActionctlKit"],
      swiftSettings: strictSettings,
      linkerSettings: releaseLinkerSettings
    ),
    // Child-process fixtures for the tests (e.g. a state writer killed at random points, the
    // daemon reading its button from a FIFO); not a product, never installed.
    .executableTarget(
      name: "actiond-test-helper",
      dependencies: ["ActiondCore", "ActiondLinux", "ActiondDaemon"],
      swiftSettings: strictSettings,
      linkerSettings: releaseLinkerSettings
    ),
    // `make bench-core`: recognizer throughput and heap allocations per event. The
    // allocation counter interposes malloc, so it is linked into the benchmark only.
    .target(
      name: "CAllocCounter",
      path: "Sources/CAllocCounter"
    ),
    .executableTarget(
      name: "actiond-bench",
      dependencies: ["ActiondCore", "CAllocCounter"],
      swiftSettings: strictSettings,
      linkerSettings: releaseLinkerSettings
    ),
    // Recording fakes of the adapters' protocols, a manual clock, temporary directories, a
    // fake request handler, raw protocol clients and the built daemon as a child process, for
    // the tests of more than one program: only test targets link it, no product.
    .target(
      name: "ActiondTesting",
      dependencies: ["ActiondCore", "ActiondLinux", "CActiondShim"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "ActiondCoreTests",
      dependencies: ["ActiondCore", "ActiondTesting"],
      resources: [.copy("Scenarios")],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "ActiondLinuxTests",
      dependencies: ["ActiondCore", "ActiondLinux", "ActiondTesting", "CActiondShim", "CEvdev"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "ActiondDaemonTests",
      dependencies: ["ActiondCore", "ActiondLinux", "ActiondDaemon", "ActiondTesting"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "ActionctlKitTests",
      dependencies: ["ActiondCore", "ActiondLinux", "ActionctlKit", "ActiondTesting", "CActiondShim"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "ActiondMQTTTests",
      dependencies: ["ActiondCore", "ActiondMQTT", "ActiondTesting"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "ActiondTestDevTests",
      dependencies: ["actiond-testdev", "ActiondCore"],
      swiftSettings: strictSettings
    ),
  ]
)
