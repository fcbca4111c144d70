import Dispatch
import EmulatorHTTP
import EmulatorStorage

/// The store's recent changes, numbered, for the web UI's live updates: a long poll
/// (`GET /ui/api/changes?since=N`) is answered as soon as there is a change after N, or empty
/// after its timeout. Keeps at least the last `capacity` changes; a poll from before them is told
/// to reload (`"reload": true`). Recording a change never blocks: waiting polls are answered on a
/// Dispatch worker.
final class ChangeFeed: Sendable {
  /// A change as the store reported it, numbered.
  struct Entry: Sendable {
    var seq: Int
    var change: StoreChange
  }

  private struct Waiter {
    var id: Int
    var since: Int
    var reply: @Sendable ([UInt8]) -> Void
  }

  private struct State {
    var next = 1
    var entries: [Entry] = []
    var waiters: [Waiter] = []
    var waiterIDs = 0
    var closed = false
  }

  let capacity: Int
  let maxWaiters: Int
  private let state = Locked(State())
  /// Called once, at the first poll: starts the recording (until a page asks, the store's writes
  /// do not pay for a feed nobody reads).
  private let subscribe: Locked<(@Sendable (ChangeFeed) -> Void)?>

  init(capacity: Int = 1000, maxWaiters: Int = 256, subscribe: (@Sendable (ChangeFeed) -> Void)? = nil) {
    self.capacity = capacity
    self.maxWaiters = maxWaiters
    self.subscribe = Locked(subscribe)
  }

  /// Polls waiting now.
  var waitingCount: Int { state.withLock { $0.waiters.count } }

  /// The sequence number of the newest change (0 before any).
  var latest: Int { state.withLock { $0.next - 1 } }

  func record(_ change: StoreChange) {
    let woken = state.withLock { state -> [Waiter] in
      state.entries.append(Entry(seq: state.next, change: change))
      state.next += 1
      // Trimmed in batches (up to twice the capacity is kept), so recording stays O(1) amortised.
      if state.entries.count >= 2 * capacity { state.entries.removeFirst(state.entries.count - capacity) }
      guard !state.waiters.isEmpty else { return [] }
      let waiters = state.waiters
      state.waiters = []
      // Every waiter's `since` is at most the previous newest: they all get this change.
      return waiters
    }
    guard !woken.isEmpty else { return }
    DispatchQueue.global().async { [self] in
      for waiter in woken { waiter.reply(answer(since: waiter.since)) }
    }
  }

  /// Answers at once when there are changes after `since` (or `since` is negative: the current
  /// sequence number, no changes), else when one comes or after `timeout` seconds.
  func poll(since: Int, timeout: Double, reply: @escaping @Sendable ([UInt8]) -> Void) {
    if let start = subscribe.withLock({ hook -> (@Sendable (ChangeFeed) -> Void)? in
      defer { hook = nil }
      return hook
    }) {
      start(self)
    }
    let waiting = state.withLock { state -> Int? in
      if since < 0 || state.closed || state.next - 1 > since || state.waiters.count >= maxWaiters { return nil }
      state.waiterIDs += 1
      state.waiters.append(Waiter(id: state.waiterIDs, since: since, reply: reply))
      return state.waiterIDs
    }
    guard let id = waiting else { return reply(answer(since: since)) }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
      let expired = state.withLock { state -> Waiter? in
        guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return state.waiters.remove(at: index)
      }
      if let expired { expired.reply(answer(since: expired.since)) }
    }
  }

  /// Answers every waiting poll and every later one at once (the emulator is stopping).
  func close() {
    let waiters = state.withLock { state -> [Waiter] in
      state.closed = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.reply(answer(since: waiter.since)) }
  }

  /// `{"seq":N,"reload":false,"changes":[{"seq","kind","bucket","name","generation","metageneration"}…]}`
  func answer(since: Int) -> [UInt8] {
    let (latest, reload, entries) = state.withLock { state -> (Int, Bool, [Entry]) in
      let latest = state.next - 1
      guard since >= 0 else { return (latest, false, []) }
      let oldest = state.entries.first?.seq ?? state.next
      return (latest, since + 1 < oldest && since < latest, state.entries.filter { $0.seq > since })
    }
    var json = JSONWriter(capacity: 64 + entries.count * 128)
    json.beginObject()
    json.raw("seq", String(latest))
    json.bool("reload", reload)
    json.beginArray("changes")
    for entry in entries {
      json.beginObject()
      json.raw("seq", String(entry.seq))
      let object = entry.change.object
      json.string("kind", entry.change.kind.rawValue)
      json.string("bucket", object.bucket)
      json.string("name", object.name)
      json.integerString("generation", object.generation)
      json.integerString("metageneration", object.metageneration)
      json.endObject()
    }
    json.endArray()
    json.endObject()
    return json.bytes
  }
}
