/// The refresher's use of the locks' ``GrantJournal``: a rotated grant is journaled before
/// the store is written, and a journaled one is written into the store by the next holder
/// of the account's lock, before it reads the account.
extension TokenRefresher {
  /// Stores the answer of a refresh that presented `replaced`'s refresh token: through the
  /// journal first when the server rotated it, since the answer then holds the only valid
  /// one. When the store fails, the entry stays for the next holder of the lock, and the
  /// store's error is thrown as it would be without a journal.
  ///
  /// A journal that cannot be written (its folder full) costs its protection, not the
  /// refresh: the store is written all the same, and the loss of that protection is said
  /// (``GrantJournalFault``), since a fault of the store at that moment now costs the grant.
  func saveRefreshed(_ account: Account, tokens: TokenSet, replacing replaced: TokenSet) throws {
    guard tokens.refreshToken != nil, tokens.refreshToken != replaced.refreshToken else {
      return try store.save(account, tokens: tokens)
    }
    let entry = JournaledGrant(
      key: account.key, group: account.group, tokens: tokens, grantedScopes: account.scopes,
      updatedAt: account.updatedAt, replaces: JournaledGrant.fingerprint(of: replaced.refreshToken))
    var journal = locks.journal
    do {
      try journal?.write(entry)
    } catch {
      journal = nil
      events.publish(AccountEvent(.failed, account, message: GrantJournalFault.report(error)))
    }
    pauseForTests?(account.key)
    try store.save(account, tokens: tokens)
    journal?.remove(account.key, group: account.group)
  }

  /// For a caller holding `key`'s lock: writes the journal's entry for the account into
  /// the store, when there is one and the store holds the refresh token it replaces or its
  /// own; then drops it. Its own too, because a keyring daemon that died between a write's
  /// steps may have kept the new secret beside the old attributes. An entry that a sign-in
  /// or a removal overtook is dropped unwritten. Throws the store's error, keeping the
  /// entry, when the store cannot be read or written (a locked keyring).
  ///
  /// An entry that cannot be read is set aside, and the account marked as needing a
  /// sign-in (``settleUnreadableEntry(_:group:in:)``): throws that error then.
  func replayJournal(_ key: AccountKey, group: String) throws {
    if let unreadable = try settleJournal(key, group: group) { throw unreadable }
  }

  /// ``replayJournal(_:group:)``, returning the error of an unreadable entry rather than
  /// throwing it: for a sign-out, which goes on to revoke what the store holds.
  func settleJournal(_ key: AccountKey, group: String) throws -> TokenKitError? {
    guard let journal = locks.journal, journal.contains(key, group: group) else { return nil }
    guard let entry = journal.read(key, group: group) else {
      return try settleUnreadableEntry(key, group: group, in: journal)
    }
    guard let current = try store.load(key) else {
      journal.remove(key, group: group)
      return nil
    }
    if current.tokens.refreshToken == entry.tokens.refreshToken
      || JournaledGrant.fingerprint(of: current.tokens.refreshToken) == entry.replaces
    {
      var account = current.account
      account.updatedAt = entry.updatedAt
      if let granted = entry.grantedScopes { account.scopes = granted }
      // Whatever rejected the spent refresh token meanwhile said nothing of its successor.
      account.needsSignIn = false
      try store.save(account, tokens: entry.tokens)
      events.publish(AccountEvent(.refreshed, account))
    }
    journal.remove(key, group: group)
    return nil
  }

  /// For an entry that exists but cannot be read (torn, emptied, overwritten, of another
  /// version, or open to others): a refresh's answer was written there, so the server has
  /// spent the stored refresh token and revoked the access token issued beside it, and
  /// the answer that replaced them is lost. Handing out the stored access token would give
  /// a dead one; dropping the entry would let the next caller do just that. So the account
  /// is marked as needing a sign-in first, then the entry set aside, never removed, and
  /// the error saying so is returned. A store that cannot be read or written throws,
  /// keeping the entry where it is, so that nothing is handed out meanwhile.
  func settleUnreadableEntry(_ key: AccountKey, group: String, in journal: any GrantJournal) throws -> TokenKitError? {
    guard let current = try store.load(key) else {
      // The account is gone; nothing is handed out from it.
      _ = journal.setAside(key, group: group)
      return nil
    }
    var marked = current.account
    if !marked.needsSignIn {
      marked.needsSignIn = true
      marked.updatedAt = clock.now
      try store.save(marked, tokens: current.tokens)
    }
    let kept = journal.setAside(key, group: group)
    let failure = TokenKitError(
      .needsSignIn,
      "\(marked.qualifiedName) needs a new sign-in: a refresh was cut short after the server had answered, and its "
        + "answer, kept in the grant journal, cannot be read (\(kept.map { "set aside as \($0)" } ?? "left in place")); "
        + "the refresh token in the keyring was spent by that refresh",
      remedy: signInAgain(marked))
    events.publish(AccountEvent(.needsSignIn, marked, message: failure.message))
    return failure
  }

  /// Takes the account's lock only to replay a journal entry it has (``replayJournal``):
  /// for a sign-out, which must revoke and remove the newest grant, not a spent one.
  func replayingJournal(of account: Account) async throws {
    guard locks.journal?.contains(account.key, group: account.group) == true else { return }
    let lock = try await self.lock(account)
    defer { lock.release() }
    // An unreadable entry leaves the spent grant in the store: the sign-out revokes that.
    _ = try settleJournal(account.key, group: account.group)
  }
}

/// What a refresh says when the grant journal cannot be written: the one wording, so that
/// a front end that hears it from many refreshes (the agent, from its refresh children)
/// can tell it apart and say it once.
public enum GrantJournalFault {
  /// How every such report begins.
  public static let lead = "the grant journal cannot be written"

  /// The report for the journal's `error`: what failed, what it now risks, and, in the
  /// journal's own recovery, what makes room.
  public static func report(_ error: any Error) -> String {
    let failure = error as? TokenKitError
    var text =
      "\(lead) (\(failure?.message ?? "\(error)")), so refreshes go on without it: should the keyring refuse a "
      + "refresh's new tokens (locked, or its daemon restarting at that moment), the server will have spent the old "
      + "refresh token, the account's grant is lost, and it needs a new sign-in"
    if let recovery = failure?.recovery { text += ". " + recovery }
    return text
  }

  /// Whether `warning` is such a report.
  public static func isReport(_ warning: String) -> Bool { warning.hasPrefix(lead) }
}
