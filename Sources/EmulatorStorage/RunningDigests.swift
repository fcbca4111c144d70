import Dispatch
import EmulatorSupport

/// MD5 and CRC32C of each resumable session's bytes, computed while the upload goes on.
///
/// Without it the final request of a 100 MiB upload read the whole `.part` file again and
/// digested it before answering: about 40% of the upload's CPU, all of it on the last request's
/// critical path. Here each appended range is digested on a serial queue of its session, after
/// the chunk is acknowledged, so the hashing of one chunk overlaps the receiving of the next
/// (another core). `digest` waits for the queue and hands back the digest when it covers exactly
/// the bytes received; otherwise (a restart in the middle of the session, a failed read) it
/// returns nil and the store digests the bytes itself, as before.
///
/// Memory is bounded by the active sessions (`UploadSessions.Options.maxOpen`): one digest state
/// and one queue each, and no bytes kept (ranges are re-read from the page cache).
final class RunningDigests: Sendable {
  private final class Running: Sendable {
    struct State {
      var digester = Digester()
      /// Bytes digested so far, from the start of the entry.
      var hashed: Int64 = 0
      /// Bytes queued for digesting (the end of the last range handed over).
      var queued: Int64 = 0
      /// False once a range could not be read or did not follow the last one.
      var usable = true
    }

    let queue = DispatchQueue(label: "storage-emulator.upload-digest")
    let state = Locked(State())
  }

  private let running = Locked<[String: Running]>([:])

  /// Queues `range` of the entry `name` of `space` for digesting. A session whose digest did not
  /// start at byte 0 (loaded after a restart) is not followed. Called under the session's lock,
  /// so ranges arrive in order.
  func extend(_ id: String, space: any UploadSpace, name: String, range: Range<Int64>) {
    guard !range.isEmpty else { return }
    let entry: Running? = running.withLock { table in
      if let found = table[id] { return found }
      guard range.lowerBound == 0 else { return nil }
      let created = Running()
      table[id] = created
      return created
    }
    guard let entry else { return }
    let follows = entry.state.withLock { state -> Bool in
      guard state.usable, state.queued == range.lowerBound else {
        state.usable = false
        return false
      }
      state.queued = range.upperBound
      return true
    }
    guard follows else { return }
    entry.queue.async {
      var digester = entry.state.withLock { $0.digester }
      let read: Bool
      do {
        try space.update(&digester, from: name, range: range)
        read = true
      } catch {
        read = false
      }
      entry.state.withLock { state in
        guard read, state.usable, state.hashed == range.lowerBound else {
          state.usable = false
          return
        }
        state.digester = digester
        state.hashed = range.upperBound
      }
    }
  }

  /// Waits for the queued ranges of `id`; the digest when it covers exactly `size` bytes. The
  /// session stays followed (a finalize whose commit fails may be retried): `drop` forgets it.
  func digest(_ id: String, size: Int64) -> (md5: [UInt8], crc32c: UInt32)? {
    guard let entry = running.withLock({ $0[id] }) else { return nil }
    entry.queue.sync {}
    return entry.state.withLock { state in
      guard state.usable, state.hashed == size, state.queued == size else { return nil }
      return state.digester.finalize()
    }
  }

  /// Forgets `id` (cancelled, expired, removed); a range still being digested finishes unseen.
  func drop(_ id: String) { running.withLock { _ = $0.removeValue(forKey: id) } }

  /// Sessions followed (tests).
  var count: Int { running.withLock { $0.count } }
}
