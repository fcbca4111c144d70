import EmulatorSupport
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Snapshots saved while writes go on, so that after a crash start-up replays only the log
/// written since the last one (see `FileBackend+Snapshots`), and compaction of the log after each.
///
/// A snapshot must hold every change in the log before its epoch. A write appends to the log
/// before it is published in the index: so once the backend has rolled the log, the store waits
/// until every write that began before that moment has ended (writes are counted by phase, and
/// the phase flips right after the roll), and only then copies the index. Later writes may or may
/// not be in the copy; they are in the replayed log either way. Nothing waits on the snapshot: it
/// is written on its own thread.
extension ObjectStore {
  /// Objects from which the snapshot a start-up asks for is saved in the background (below, it
  /// takes milliseconds).
  static let backgroundSnapshotAbove = 50_000

  struct WriteCounts {
    /// Writes in progress, by the phase they began in.
    var active = [0, 0]
    var phase = 0
    var closed = false
    /// A background snapshot is being saved.
    var snapshotting = false
  }

  /// Ends the writes of these metadata changes.
  func endWrites(_ tickets: [WriteStripe.Ticket]) {
    let old = tickets.count { $0.phase == 0 }
    if old > 0 { endWrite(0, count: old) }
    if old < tickets.count { endWrite(1, count: tickets.count - old) }
  }

  /// Starts a background snapshot unless one is running or the store is closing. `begun`: the
  /// epoch when the caller has already called `beginSnapshot`.
  func startSnapshot(begun: UInt64? = nil) {
    let start = writes.withLock { state -> Bool in
      guard !state.closed, !state.snapshotting else { return false }
      state.snapshotting = true
      return true
    }
    guard start else { return }
    BackgroundThread.start(name: "storage-emulator.snapshot", stackSize: 1 << 20) { [self] in
      // The whole snapshot yields to requests (see `saveSnapshotWhileWriting`).
      BackgroundThread.lowerCurrentThreadPriority()
      saveSnapshotWhileWriting(begun: begun)
      writes.withLock { $0.snapshotting = false }
    }
  }

  private func saveSnapshotWhileWriting(begun: UInt64?) {
    do {
      let epoch = try begun ?? backend.beginSnapshot()
      let previous = writes.withLock { state -> Int in
        let previous = state.phase
        state.phase = 1 - previous
        return previous
      }
      while writes.withLock({ $0.active[previous] }) > 0 { usleep(500) }
      // All of a snapshot (the copy, the encoding and writing, the compaction after it) runs at
      // a lower priority than requests. At the same priority, on a machine whose cores the
      // requests keep busy, the copy (~0.7 µs an object) took its share of the cores and every
      // request waited its turn behind it: with a snapshot of a few hundred thousand objects
      // during a run, upload p99s went from 5 to 8-78 ms (session 11, BENCHMARKS.md). The copy
      // and the compaction take the index lock, so a lowered thread can be preempted while it
      // holds it; batches of 64 names keep each hold to tens of microseconds.
      let state = snapshotState(batch: 64, pausing: true)
      try backend.finishSnapshot(state, epoch: epoch)
    } catch {
      log("index: no snapshot saved in the background (\(error)); the log still holds every change")
      return
    }
    compactWhileDue()
  }

  /// Compacts the log's oldest segments while the backend asks for it (after a snapshot, on the
  /// snapshot's thread). A record is kept when it is the live version, checked under the object's
  /// stripe lock: a delete or a new generation holds that lock from its append to its publish, so
  /// a record found live here has no tombstone or newer generation appended yet. (The backend
  /// drops the records of deleted buckets itself.)
  func compactWhileDue() {
    while backend.compactionDue && !writes.withLock({ $0.closed }) {
      do {
        let compacted = try backend.compactOldestSegment { bucket, name, version, keep throws(StorageError) in
          let key = WriteStripe.Key(bucket: bucket, name: name)
          let lock = stripe(key)
          lock.lock()
          defer { lock.unlock() }
          let live = index.withLock { buckets -> ObjectMetadata?? in
            guard let objects = buckets[bucket]?.objects else { return .none }
            return .some(objects[name])
          }
          switch live {
          case .none:
            // A bucket the index does not hold but whose folder is there (its record was found
            // damaged at start-up): its objects are kept for when it is repaired.
            _ = try keep()
          case .some(let object?) where object.generation == version.generation
            && object.metageneration == version.metageneration:
            guard let moved = try keep() else { break }
            // Its bytes moved with the record: readers and a metadata change in progress must
            // look in the copy (the old segment is removed once every record is copied).
            index.withLock { $0[bucket]?.objects.moveBody(forKey: name, to: moved) }
            if let group = lock.groups[key] {
              group.published.body = moved
              group.latest.body = moved
            }
          default:
            break
          }
        }
        if !compacted { return }
      } catch {
        log("index: log compaction stopped (\(error))")
        return
      }
    }
  }

  func waitForSnapshot() {
    while writes.withLock({ $0.snapshotting }) { usleep(1000) }
  }

  /// Everything in the index, bucket by bucket in name order, copied `batch` names at a time
  /// under the index lock. (Taking each bucket's tables whole, copy-on-write, made the first
  /// write after it copy the tables of its bucket while holding the lock: a pause of every
  /// request, as long as the bucket is large.) A write between two batches may or may not be in
  /// the copy; it is in the log the snapshot's start-up replays either way. `pausing`: while
  /// writes go on, a short pause after each batch lets a waiting writer have the lock.
  func snapshotState(batch: Int = 256, pausing: Bool = false) -> LoadedState {
    let (infos, total) = index.withLock { buckets in
      (buckets.values.map(\.info).sorted { $0.name < $1.name }, buckets.values.reduce(0) { $0 + $1.keys.count })
    }
    var state = LoadedState()
    // Every generation made so far is at most this (writes begun before have ended).
    state.highestGeneration = lastGeneration.load(ordering: .relaxed)
    state.objects.reserveCapacity(total)
    for info in infos {
      state.buckets.append(info)
      var after: ObjectKey?
      repeat {
        after = index.withLock { buckets -> ObjectKey? in
          guard let bucket = buckets[info.name] else { return nil }
          var position = after.map { bucket.keys.position(after: $0) } ?? bucket.keys.startIndex
          var last: ObjectKey?
          for _ in 0..<batch where position < bucket.keys.endIndex {
            last = bucket.keys[position]
            if let object = bucket.objects[last!] { state.objects.append(object) }
            position = bucket.keys.index(after: position)
          }
          return last
        }
        // A mutex is not fair: taken again at once, the lock would go back to this thread
        // before a woken writer ran, and writers would wait for the whole copy.
        if pausing && after != nil { usleep(50) }
      } while after != nil
    }
    return state
  }
}
