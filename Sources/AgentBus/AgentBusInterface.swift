/// The agent's D-Bus interface, `org.tokenctl.Agent1` (tokenctl-dbus(7)).
public enum AgentBusInterface {
  public static let busName = "org.tokenctl.Agent"
  public static let objectPath = "/org/tokenctl/Agent"
  public static let name = "org.tokenctl.Agent1"

  /// The introspection data GDBus checks every call against (argument types included,
  /// so a call with the wrong signature is refused before it reaches us). `make install`
  /// installs the same text, Sources/tokenctl/dbus/org.tokenctl.Agent1.xml, as
  /// share/dbus-1/interfaces/org.tokenctl.Agent1.xml; a test checks they are equal.
  public static let introspection = #"""
    <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
    <!-- org.tokenctl.Agent1: fresh OAuth 2.0 access tokens for desktop programs, from the
         tokenctl agent, with per-application consent. See tokenctl-dbus(7). -->
    <node>
      <interface name="org.tokenctl.Agent1">
        <!-- The accounts of a group ("" for "default") that the caller may see: type, id,
             name, group (s), expires_at (x, Unix seconds, 0 for none), refreshable and
             needs_sign_in (b). Never a token. -->
        <method name="ListAccounts">
          <arg name="group" type="s" direction="in"/>
          <arg name="accounts" type="aa{sv}" direction="out"/>
        </method>
        <!-- An access token of ACCOUNT (TYPE:NAME or a unique NAME) valid for at least
             min_valid_seconds, refreshed if need be, and when it expires (0 for never). -->
        <method name="GetAccessToken">
          <arg name="group" type="s" direction="in"/>
          <arg name="account" type="s" direction="in"/>
          <arg name="min_valid_seconds" type="u" direction="in"/>
          <arg name="access_token" type="s" direction="out"/>
          <arg name="expires_at" type="x" direction="out"/>
        </method>
        <!-- An account came, went, or its tokens changed. -->
        <signal name="AccountChanged">
          <arg name="group" type="s"/>
          <arg name="account" type="s"/>
        </signal>
        <!-- The server refused an account's refresh token: someone has to sign in again. -->
        <signal name="NeedsSignIn">
          <arg name="group" type="s"/>
          <arg name="account" type="s"/>
        </signal>
      </interface>
    </node>
    """#
}
