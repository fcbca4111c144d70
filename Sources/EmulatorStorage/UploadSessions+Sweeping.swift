import EmulatorSupport

extension UploadSessions {
  /// Removes every session untouched for `ttlSeconds` before `now`, with its files; returns
  /// how many.
  @discardableResult
  public func sweep(now: Int64 = Timestamp.nowMilliseconds()) -> Int {
    let cutoff = now - Int64(options.ttlSeconds) * 1000
    let candidates = sessions.withLock { $0.sessions.values.filter { $0.touched < cutoff }.map(\.id) }
    var removed = 0
    for id in candidates {
      let lock = lock(id)
      lock.lock()
      defer { lock.unlock() }
      guard let session = sessions.withLock({ $0[id] }), session.touched < cutoff else { continue }
      removeEntries(id)
      sessions.withLock { _ = $0.removeValue(forKey: id) }
      removed += 1
      log("uploads: removed the expired upload session \(id) (\(session.state.rawValue))")
    }
    return removed
  }

  /// Sweeps every `interval` seconds (default: a tenth of `ttlSeconds`, 1 s to 10 min) until
  /// `stopSweeping`.
  public func startSweeping(interval: Double? = nil) {
    sweeper.start(every: interval ?? PeriodicSweep.interval(ttlSeconds: options.ttlSeconds)) { [weak self] in
      self?.sweep()
    }
  }

  public func stopSweeping() { sweeper.stop() }
}
