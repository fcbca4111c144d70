extension UploadSessions {
  /// Sessions known (active, final or cancelled).
  public var count: Int { sessions.withLock { $0.count } }

  /// Forgets every session and removes its entries (`POST /internal/reset`): their upload URLs
  /// answer 404 afterwards. Returns how many there were.
  @discardableResult
  public func removeAll() -> Int {
    let ids = sessions.withLock { Array($0.keys) }
    for id in ids {
      let lock = lock(id)
      lock.lock()
      removeEntries(id)
      space.remove(Self.tempName(id))
      sessions.withLock { _ = $0.removeValue(forKey: id) }
      lock.unlock()
    }
    return ids.count
  }
}
