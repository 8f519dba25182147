import AccountTypeFiles
import Testing

/// Where account type files are looked for; loading them is tested through the commands,
/// in TokenCtlCLITests.
@Suite struct UserTypesTests {
  @Test func theDirectoriesFollowTheXDGSpecification() {
    #expect(
      UserTypes.directories(environment: ["HOME": "/home/ada"]) == [
        "/home/ada/.config/tokenctl/types", "/etc/xdg/tokenctl/types",
      ])
    #expect(
      UserTypes.directories(environment: [
        "HOME": "/home/ada", "XDG_CONFIG_HOME": "/cfg", "XDG_CONFIG_DIRS": "/opt/xdg:relative:/etc/xdg",
      ]) == ["/cfg/tokenctl/types", "/opt/xdg/tokenctl/types", "/etc/xdg/tokenctl/types"])
  }
}
