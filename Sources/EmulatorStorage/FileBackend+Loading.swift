import EmulatorSupport
import Dispatch

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Start-up: the index from `index.snapshot` plus the journal's names, or from every record, with
/// what interrupted writes left behind removed.
extension FileBackend {
  /// The snapshot of the journal's epoch (its objects decoded on another thread, see
  /// `ObjectBatches`), with every object and bucket the journal names read again from its record;
  /// nil (and a log line) when they cannot be used together.
  func loadFromSnapshot(log: @Sendable (String) -> Void) -> LoadedState? {
    guard FileManager.default.fileExists(atPath: snapshotPath) else { return nil }
    let opened: IndexSnapshot.Opened
    do {
      opened = try IndexSnapshot.open(snapshotPath)
    } catch {
      log("index: index.snapshot is not usable (\(error)); reading every record instead")
      return nil
    }
    guard let journal = matchingJournal(opened.epoch) else {
      log("index: index.journal does not match index.snapshot; reading every record instead")
      return nil
    }
    do {
      try openJournal(lines: journal.lineCount)
    } catch {
      log("index: \(error)")
      return nil
    }
    var state = LoadedState()
    // The snapshot holds names and creation times; settings live in each bucket's record.
    state.buckets = opened.buckets.map { readBucketRecord($0.info.name) ?? $0.info }
    for bucket in opened.buckets { state.expectedCounts[bucket.info.name] = bucket.count }
    damaged.withLock { $0 = Set(opened.damaged) }
    var removedBuckets = Set<String>()
    for bucket in journal.buckets {
      let known = state.buckets.contains { $0.name == bucket }
      let info = readBucketRecord(bucket)
      if info == nil && known {
        state.buckets.removeAll { $0.name == bucket }
        removedBuckets.insert(bucket)
      } else if let info, !known {
        state.buckets.append(info)
      }
    }
    let live = Set(state.buckets.map(\.name))
    for bucket in state.buckets { state.noncurrent += loadNoncurrent(bucket.name, log: log) }
    // Two producers: the snapshot's decoding and the journal's replay run at once, and the
    // store indexes what either hands over.
    let batches = ObjectBatches(producers: 2)
    state.batches = batches
    let journaled = journal.objects
    let replayed = journal.objects.filter { live.contains($0.key.bucket) }.map { ($0.key, $0.value) }
    state.replayCount = replayed.count
    let removed = removedBuckets
    let path = snapshotPath
    let large = opened.buckets.reduce(0) { $0 + $1.count } >= 10_000
    BackgroundThread.start(stackSize: 1 << 20) {
      let began = DispatchTime.now().uptimeNanoseconds
      do {
        try IndexSnapshot.decodeObjects(
          opened,
          skip: { bucket, name in
            removed.contains(bucket) || (!journaled.isEmpty && journaled[.init(bucket: bucket, object: name)] != nil)
          }, deliver: batches.push)
        if large {
          let seconds = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
          batches.report("index: index.snapshot decoded in \(ObjectStore.seconds(seconds))")
        }
        batches.finish()
      } catch {
        // Checksummed yet undecodable: a bug, not damage. Remove it so the retry reads every record.
        unlink(path)
        batches.finish(failure: "index.snapshot could not be decoded (\(error))")
      }
    }
    BackgroundThread.start(stackSize: 1 << 20) { [self] in
      let began = DispatchTime.now().uptimeNanoseconds
      replayJournal(replayed, into: batches)
      if replayed.count >= 1_000 {
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
        batches.report("index: \(replayed.count) records the journal names re-read in \(ObjectStore.seconds(seconds))")
      }
      batches.finish()
    }
    loadKind.withLock { $0 = .snapshot(replayed: journal.objects.count + journal.buckets.count) }
    // A long journal (many names to re-read, or many lines to parse: it grows with every write
    // until a clean stop) is folded into a new snapshot once the store is built.
    // So is one already past the length at which a snapshot is saved while writes go on.
    state.wantsSnapshot =
      journal.objects.count + journal.buckets.count > 10_000 || journal.lineCount > 200_000
      || journal.lineCount >= snapshotLines
    return state
  }

  /// The journal of the snapshot's epoch: `index.journal`, or, when the process was killed
  /// between installing a new snapshot and its journal, `index.journal.next` (installed now). A
  /// leftover `index.journal.next` of an unfinished snapshot is removed: every line in it is in
  /// `index.journal` too.
  private func matchingJournal(_ epoch: UInt64) -> IndexJournal.Contents? {
    if let journal = IndexJournal.read(journalPath), journal.epoch == epoch {
      unlink(nextJournalPath)
      return journal
    }
    guard let next = IndexJournal.read(nextJournalPath), next.epoch == epoch,
      files.calls.rename(nextJournalPath, journalPath) == 0
    else { return nil }
    files.syncDirectory(root.path)
    return next
  }

  func readBucketRecord(_ bucket: String) -> BucketInfo? {
    guard let bytes = FileManager.default.contents(atPath: bucketDir(bucket) + "/bucket.json").map(Array.init),
      let document = try? JSONValue.parse(bytes), let name = document["name"]?.stringValue,
      let created = document["timeCreated"]?.stringValue.flatMap({ Int64($0) }), name == bucket
    else { return nil }
    // Records written before buckets had settings hold only the name and creation time.
    var info = BucketInfo(name: name, timeCreated: created, settings: document["settings"])
    if let updated = document["updated"]?.stringValue.flatMap({ Int64($0) }) { info.updated = updated }
    if let metageneration = document["metageneration"]?.stringValue.flatMap({ Int64($0) }) {
      info.metageneration = metageneration
    }
    if let access = document["access"] { info.access = BucketAccess(record: access) }
    return info
  }

  /// Re-reads the records the journal names (each a few system calls and a parse) on several
  /// threads, handing them over as they come.
  private func replayJournal(_ names: [(IndexJournal.Key, IndexJournal.DataFiles)], into batches: ObjectBatches) {
    let parts = min(names.count, Self.readThreads)
    Self.onThreads(parts) { [self] part in
      var objects: [ObjectMetadata] = []
      for position in stride(from: part, to: names.count, by: parts) {
        let (key, files) = names[position]
        if let object = recoverObject(bucket: key.bucket, name: key.object, files: files, log: batches.report) {
          objects.append(object)
        }
        if objects.count == 4096 {
          batches.push(ObjectBatch(unordered: objects))
          objects.removeAll(keepingCapacity: true)
        }
      }
      if !objects.isEmpty { batches.push(ObjectBatch(unordered: objects)) }
    }
  }

  /// The record at `path` of the object `name` in `bucket`, checked against both and against its
  /// data file.
  private func readRecord(
    _ path: String, bucket: String, name: ObjectKey, base: (dir: String, stem: String)
  ) throws(StorageError) -> ObjectMetadata {
    guard let bytes = IndexSnapshot.readFile(path) else { throw StorageError.io("unreadable") }
    var object = try ObjectMetadata(record: bytes)
    guard object.bucket == bucket, object.name.utf8.elementsEqual(name.bytes) else {
      throw StorageError.io("the record names another object")
    }
    object.bucket = bucket  // one string for the bucket's objects
    guard exists(base.dir + "/" + base.stem + "." + String(object.generation) + ".data") else {
      throw StorageError.io("its data file is missing")
    }
    return object
  }

  private func exists(_ path: String) -> Bool { SystemCall.retrying { access(path, F_OK) } == 0 }

  /// One object's state from the folder, as a full scan would find it (damaged records noted,
  /// data files of unfinished writes removed).
  private func recoverObject(
    bucket: String, name: ObjectKey, files: IndexJournal.DataFiles, log: @Sendable (String) -> Void
  ) -> ObjectMetadata? {
    let base = objectBase(bucket: bucket, name: name.name)
    let path = base.dir + "/" + base.stem + ".json"
    var keep: String?
    var object: ObjectMetadata?
    damaged.withLock { _ = $0.remove(path) }
    if exists(path) {
      do {
        let found = try readRecord(path, bucket: bucket, name: name, base: base)
        keep = base.stem + "." + String(found.generation) + ".data"
        object = found
      } catch {
        log("recovery: skipped the damaged record \(path.dropFirst(root.path.count + 1)): \(error)")
        damaged.withLock { _ = $0.insert(path) }
        return nil
      }
    }
    // The data files the journaled changes created or dropped, or (`*`) every one of this name.
    let candidates =
      files.all
      ? ((try? FileManager.default.contentsOfDirectory(atPath: base.dir)) ?? []).filter {
        $0.hasPrefix(base.stem + ".") && $0.hasSuffix(".data")
      }
      : files.generations.map { base.stem + ".\($0).data" }
    for file in candidates where file != keep && exists(base.dir + "/" + file) {
      try? FileManager.default.removeItem(atPath: base.dir + "/" + file)
      log(
        "recovery: removed \(base.dir.dropFirst(root.path.count + 1))/\(file), data of an unfinished or replaced write")
    }
    return object
  }
}
