// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import Glibc

/// Resolves configured `user` references to uids and groups. It asks the name service
/// (NSS: files, but also LDAP or sssd, which may take seconds), so it runs when the
/// configuration is loaded or reloaded, never when a command starts.
public enum UserResolution {
  /// A user name, or a numeric uid (which need not have a passwd entry: then its gid is
  /// the same number and it has no supplementary groups).
  public static func resolve(_ reference: String) -> Result<ProcessUser, SpawnFailure> {
    var entry = passwd()
    var found: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 16 * 1024)
    let numeric = UInt32(reference)
    let rc: Int32
    if let numeric {
      rc = getpwuid_r(numeric, &entry, &buffer, buffer.count, &found)
    } else {
      rc = getpwnam_r(reference, &entry, &buffer, buffer.count, &found)
    }
    guard rc == 0, found != nil else {
      if let numeric { return .success(ProcessUser(reference: reference, uid: numeric, gid: numeric, groups: [])) }
      let error = rc == 0 ? "no such user" : Errno(rc).description
      return .failure(SpawnFailure(step: "user \(reference)", errnoName: "", message: error))
    }
    let uid = entry.pw_uid
    let gid = entry.pw_gid
    var count: Int32 = 64
    var groups = [gid_t](repeating: 0, count: Int(count))
    while getgrouplist(entry.pw_name, gid, &groups, &count) < 0 {
      groups = [gid_t](repeating: 0, count: Int(count) + 16)
      count = Int32(groups.count)
    }
    return .success(
      ProcessUser(reference: reference, uid: uid, gid: gid, groups: Array(groups.prefix(Int(count)))))
  }

  /// Every `user` that `configuration`'s exec intents and value providers name, resolved.
  public static func resolveAll(in configuration: Configuration) -> [String: Result<ProcessUser, SpawnFailure>] {
    var result: [String: Result<ProcessUser, SpawnFailure>] = [:]
    for control in configuration.controls {
      var specs: [ExecSpec] = []
      if case .exec(let spec) = control.intent { specs.append(spec) }
      if case .exec(let spec)? = control.value { specs.append(spec) }
      for spec in specs {
        guard let user = spec.user?.description, result[user] == nil else { continue }
        result[user] = resolve(user)
      }
    }
    return result
  }
}
