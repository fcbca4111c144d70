import Dispatch
import EmulatorSupport

/// Runs an action on a Dispatch timer until `stop`: the expiry sweeps of upload sessions and
/// XML multipart uploads.
final class PeriodicSweep: Sendable {
  /// A Dispatch timer (Dispatch sources may be used from any thread).
  private final class Timer: @unchecked Sendable {
    let source: any DispatchSourceTimer
    init(_ source: any DispatchSourceTimer) { self.source = source }
  }

  private let timer = Locked<Timer?>(nil)

  /// The default period for a lifetime: a tenth of it, 1 s to 10 min.
  static func interval(ttlSeconds: Int) -> Double { min(max(Double(ttlSeconds) / 10, 1), 600) }

  /// Runs `action` every `seconds` (replacing an earlier schedule).
  func start(every seconds: Double, _ action: @escaping @Sendable () -> Void) {
    let source = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
    source.schedule(deadline: .now() + seconds, repeating: seconds)
    source.setEventHandler(handler: action)
    let wrapped = Timer(source)
    timer.withLock { old in
      old?.source.cancel()
      old = wrapped
    }
    source.activate()
  }

  func stop() {
    timer.withLock { timer in
      timer?.source.cancel()
      timer = nil
    }
  }
}
