// SPDX-License-Identifier: Apache-2.0
/// The daemon's version, shown by `--version` and sent in the protocol's `hello`.
public enum ActiondVersion {
  public static let string = "0.1.0"
}
