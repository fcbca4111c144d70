import Foundation

#if canImport(Glibc)
  import Glibc
#endif

extension UploadSessions {
  /// A Dispatch timer (Dispatch sources may be used from any thread).
  final class SweepTimer: @unchecked Sendable {
    let source: any DispatchSourceTimer
    init(_ source: any DispatchSourceTimer) { self.source = source }
  }

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
      Self.removeFiles(directory + "/" + id)
      sessions.withLock { _ = $0.removeValue(forKey: id) }
      removed += 1
      log("uploads: removed the expired upload session \(id) (\(session.state.rawValue))")
    }
    return removed
  }

  /// Sweeps every `interval` seconds (default: a tenth of `ttlSeconds`, 1 s to 10 min) until
  /// `stopSweeping`.
  public func startSweeping(interval: Double? = nil) {
    let every = interval ?? min(max(Double(options.ttlSeconds) / 10, 1), 600)
    let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
    timer.schedule(deadline: .now() + every, repeating: every)
    timer.setEventHandler { [weak self] in self?.sweep() }
    let wrapped = SweepTimer(timer)
    sweeper.withLock { old in
      old?.source.cancel()
      old = wrapped
    }
    timer.activate()
  }

  public func stopSweeping() {
    sweeper.withLock { timer in
      timer?.source.cancel()
      timer = nil
    }
  }
}
