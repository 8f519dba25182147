import NativeAppSupport
import TokenKit

/// What an application argument (`APP` of `tokenctl allow` and `deny`) names:
/// `flatpak:APP_ID` is a Flatpak app, by the id its sandbox's `/.flatpak-info` carries;
/// anything else is a program of the host, resolved as ``ApplicationPath`` resolves it.
public enum ApplicationArgument {
  /// The application `argument` names. Throws for a `flatpak:` name whose id Flatpak
  /// would not accept, and as ``ApplicationPath/resolve(_:environment:currentDirectory:)``
  /// does for a program.
  public static func resolve(
    _ argument: String, environment: [String: String], currentDirectory: String
  ) throws -> ApplicationIdentity {
    guard ApplicationIdentity.isFlatpakName(argument) else {
      return .executable(
        try ApplicationPath.resolve(argument, environment: environment, currentDirectory: currentDirectory))
    }
    guard let identity = ApplicationIdentity(name: argument) else {
      throw TokenKitError(
        .invalidArgument,
        "'\(argument)' names no Flatpak app: an app id has three or more parts separated by dots, of letters, "
          + "digits and _ (- in the last part only), not starting with a digit",
        recovery: "Give the id `flatpak list --app` shows, such as flatpak:org.example.App.")
    }
    return identity
  }
}
