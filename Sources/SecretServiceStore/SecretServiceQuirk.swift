/// What the Secret Service providers tokenctl supports do of their own, beyond or against
/// the Secret Service API, and how the store copes: one table, so that a reader finds
/// every quirk and its reason in one place, and the code that copes names its case where
/// it does (``SecretServiceQuirkTests`` checks that each case is named there).
///
/// Each is coped with whatever the provider: the store does not ask which provider it
/// talks to before it reads or writes (``SecretServiceProvider`` only words errors), since
/// a version of another provider may do the same, and the handling costs nothing where
/// the quirk is absent.
enum SecretServiceQuirk: CaseIterable {
  /// KeePassXC merges the attributes `SetAttributes` sends into those the item has, so an
  /// attribute left out (no expiry any more) keeps its old value. Each optional attribute
  /// of ours the item has and a write lacks goes as an empty value, which reads as absent
  /// (`SecretServiceTokenStore.put`, `KeyringSchema.listing`).
  case mergesAttributes
  /// KeePassXC adds its entry's fields to an item's attributes (Uuid, Path, Title…) and
  /// refuses to have them changed: a write sends only our attributes.
  case addsEntryAttributes
  /// KeePassXC creates an item in a prompt which, when the secret came in a session it no
  /// longer has, leaves an empty entry and is dismissed; libsecret reports no error. An
  /// item without the attributes written is removed and the write tried once more in a
  /// new session.
  case createsEmptyItems
  /// KeePassXC reports items locked to a program it has not allowed yet (its access
  /// confirmation, on by default) in `SearchItems`' locked list: the store unlocks them,
  /// which shows the confirmation, and searches again.
  case locksItemsPerProgram
  /// KeePassXC 2.7.4 lists a database's items a moment after it completes the unlock
  /// prompt: a search right after the unlock finds nothing, so the store searches again
  /// until the unlocked collections list their items (at most 15 s).
  case listsItemsAfterUnlock
  /// KeePassXC holds `SearchItems` while it asks for a locked database's password
  /// ("unlock before search"): where a prompt may be shown, calls wait as long as one.
  case holdsCallsForItsDialog
  /// KeePassXC 2.7.4, asked to unlock a database whose dialog the user just cancelled,
  /// never completes the prompt: every prompt is bounded (``KeyringPrompting/timeout``).
  case leavesPromptsUnanswered
  /// gnome-keyring forgets every session when it restarts, and a later read in a kept one
  /// gets `NoSession`: the store opens another session, once (``SessionRefusal``).
  case forgetsSessionsOnRestart
  /// kwalletd5 refuses `OpenSession` for a Diffie-Hellman public key shorter than 128 bytes,
  /// which libsecret sends for 1 session in 256 (it drops leading zero bytes), and says
  /// "Can't find session" of a session its bus name's other connection opened: the store
  /// forgets libsecret's service and tries once more (``SessionRefusal``).
  case refusesSomeSessions
  /// KWallet keeps an item's content type, and libsecret's text readers (`secret-tool
  /// lookup`) take only `text/plain` as text: the JSON secret is stored as `text/plain`
  /// (``KeyringSchema/contentType``).
  case keepsContentType

  /// The providers known to do it.
  var providers: [SecretServiceProvider] {
    switch self {
    case .mergesAttributes, .addsEntryAttributes, .createsEmptyItems, .locksItemsPerProgram, .listsItemsAfterUnlock,
      .holdsCallsForItsDialog, .leavesPromptsUnanswered:
      [.keePassXC]
    case .forgetsSessionsOnRestart: [.gnomeKeyring]
    case .refusesSomeSessions, .keepsContentType: [.kWallet]
    }
  }
}
