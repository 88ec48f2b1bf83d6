// SPDX-License-Identifier: Apache-2.0
/// The configuration used when no main file exists, so a first run is useful: a
/// store-backed "Work Timer" toggle (the seeds' productivity timer) on a button `action`
/// bound to `KEY_PROG1` of any device the udev rules tag `actiond`.
///
/// A short press announces "Hold to Start"; a hold starts the timer and announces
/// "Running"; the next short press says "Hold to Stop". Nothing outside the daemon's
/// store changes. docs/configuration.md shows the same text.
public enum DefaultConfiguration {
  /// The kind of the embedded Work Timer control.
  public static let workTimerKind = "org.actiond.work-timer"

  /// JSON5 text, validated by `ConfigurationLoader` like any file.
  public static let text = """
    // actiond's embedded default configuration (used when /etc/actiond/actiond.json is missing).
    {
      socket: { path: "/run/actiond/actiond.sock", mode: "0660", maxClients: 64 },
      stateDirectory: "/var/lib/actiond",
      controlsDirectory: "/etc/actiond/controls.d",
      buttons: [
        {
          name: "action",
          key: "KEY_PROG1",
          match: { tag: "actiond" },  // devices tagged by udev-rules/70-actiond.rules
          holdThresholdMs: 600,
          debounceMs: 0,
          grab: false,
        },
      ],
      controls: [
        {
          kind: "org.actiond.work-timer",
          type: "toggle",
          displayName: "Work Timer",
          title: "Work Timer",
          description: "Starts and stops a focus timer. Only the daemon's state store changes.",
          valueText: { on: "Running", off: "Stopped" },
          symbol: { on: "timer", off: "timer" },
          tint: "orange",
          actionHint: { on: "Stop", off: "Start" },
          intent: { type: "state" },
          value: { type: "store", initial: false },
          previewValue: false,
        },
      ],
      assignments: {
        action: { kind: "org.actiond.work-timer" },
      },
    }
    """
}
