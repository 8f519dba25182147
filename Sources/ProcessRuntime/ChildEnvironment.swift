/// The environment tokenctl hands to programs it starts (the browser, the hook).
public enum ChildEnvironment {
  /// `environment` without tokenctl's own secret-bearing variables: a user may pass a
  /// client secret as `TOKENCTL_CLIENT_SECRET` to tokenctl, and a browser or hook has no
  /// business seeing it.
  public static func sanitized(_ environment: [String: String]) -> [String: String] {
    environment.filter { name, _ in
      let upper = name.uppercased()
      return
        !(upper.hasPrefix("TOKENCTL_")
        && ["SECRET", "TOKEN", "PASSWORD", "CODE"].contains { upper.dropFirst(9).contains($0) })
    }
  }
}
