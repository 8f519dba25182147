/// The refresher's use of the locks' ``GrantJournal``: a rotated grant is journaled before
/// the store is written, and a journaled one is written into the store by the next holder
/// of the account's lock, before it reads the account.
extension TokenRefresher {
  /// Stores the answer of a refresh that presented `replaced`'s refresh token: through the
  /// journal first when the server rotated it, since the answer then holds the only valid
  /// one. When the store fails, the entry stays for the next holder of the lock, and the
  /// store's error is thrown as it would be without a journal.
  ///
  /// A journal that cannot be written costs nothing but its protection: the store is
  /// written all the same.
  func saveRefreshed(_ account: Account, tokens: TokenSet, replacing replaced: TokenSet) throws {
    guard tokens.refreshToken != nil, tokens.refreshToken != replaced.refreshToken else {
      return try store.save(account, tokens: tokens)
    }
    let entry = JournaledGrant(
      key: account.key, group: account.group, tokens: tokens, grantedScopes: account.scopes,
      updatedAt: account.updatedAt, replaces: JournaledGrant.fingerprint(of: replaced.refreshToken))
    let journal = locks.journal.flatMap { journal in (try? journal.write(entry)).map { journal } }
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
  func replayJournal(_ key: AccountKey, group: String) throws {
    guard let journal = locks.journal, journal.contains(key, group: group) else { return }
    guard let entry = journal.read(key, group: group), let current = try store.load(key) else {
      journal.remove(key, group: group)
      return
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
  }

  /// Takes the account's lock only to replay a journal entry it has (``replayJournal``):
  /// for a sign-out, which must revoke and remove the newest grant, not a spent one.
  func replayingJournal(of account: Account) async throws {
    guard locks.journal?.contains(account.key, group: account.group) == true else { return }
    let lock = try await self.lock(account)
    defer { lock.release() }
    try replayJournal(account.key, group: account.group)
  }
}
