import Crypto
import Dispatch
import EmulatorSupport

/// Format 1's records, read once to migrate a folder (`FileBackend+Migration`): every record is
/// read, the shard folders several at a time (`readThreads`), cleaning up what interrupted writes
/// left.
extension FileBackend {
  /// What one shard folder holds.
  private struct ShardScan {
    var objects: [ObjectMetadata] = []
    var damaged: [String] = []
    var log: [String] = []
  }

  func scanRecords(log: @Sendable (String) -> Void) -> LoadedState {
    let fm = FileManager.default
    var state = LoadedState()
    damaged.withLock { $0 = [] }
    var shards: [(bucket: String, path: String, name: String)] = []
    for bucket in ((try? fm.contentsOfDirectory(atPath: bucketsDir.path)) ?? []).sorted() {
      guard let info = readBucketRecord(bucket) else {
        log("recovery: skipped buckets/\(bucket): its bucket.json is missing or damaged")
        continue
      }
      state.buckets.append(info)
      state.noncurrent += loadNoncurrent(bucket, log: log)
      let objectsDir = bucketDir(bucket) + "/objects"
      for shard in ((try? fm.contentsOfDirectory(atPath: objectsDir)) ?? []).sorted() {
        shards.append((bucket, objectsDir + "/" + shard, shard))
      }
    }
    let results = Locked<[Int: ShardScan]>([:])
    let work = shards
    let threads = min(shards.count, Self.readThreads)
    Self.onThreads(threads) { [self] worker in
      for index in stride(from: worker, to: work.count, by: threads) {
        let shard = work[index]
        let scanned = scanShard(bucket: shard.bucket, path: shard.path, name: shard.name)
        results.withLock { $0[index] = scanned }
      }
    }
    let scanned = results.withLock { $0 }
    state.objects.reserveCapacity(scanned.values.reduce(0) { $0 + $1.objects.count })
    for index in shards.indices {
      guard let shard = scanned[index] else { continue }
      state.objects += shard.objects
      for line in shard.log { log(line) }
      damaged.withLock { $0.formUnion(shard.damaged) }
    }
    return state
  }

  /// Reads one shard folder's records. A record names its data file, which the folder's listing
  /// must hold (no `stat` per object); data files no record names are leftovers and removed.
  private func scanShard(bucket: String, path: String, name shard: String) -> ShardScan {
    var scan = ShardScan()
    let files = Self.names(in: path) ?? []
    let present = Set(files)
    var live = Set<String>()
    for file in files where file.hasSuffix(".json") {
      let stem = String(file.dropLast(5))
      do throws(StorageError) {
        guard let bytes = IndexSnapshot.readFile(path + "/" + file) else { throw StorageError.io("unreadable") }
        var object = try ObjectMetadata(record: bytes)
        guard object.bucket == bucket, stem.hasPrefix(shard),
          Hex.encode(SHA256.hash(data: Array(object.name.utf8))) == stem
        else {
          throw StorageError.io("the record names another object")
        }
        let data = stem + "." + String(object.generation) + ".data"
        guard present.contains(data) else { throw StorageError.io("its data file is missing") }
        live.insert(data)
        object.bucket = bucket  // one string for the bucket's objects
        scan.objects.append(object)
      } catch {
        scan.log.append("recovery: skipped the damaged record buckets/\(bucket)/objects/\(shard)/\(file): \(error)")
        live.insert(stem)  // keep its data for inspection
        scan.damaged.append(path + "/" + file)
      }
    }
    for file in files where file.hasSuffix(".data") && !live.contains(file) {
      if live.contains(String(file.prefix { $0 != "." })) { continue }
      try? FileManager.default.removeItem(atPath: path + "/" + file)
      scan.log.append(
        "recovery: removed buckets/\(bucket)/objects/\(shard)/\(file), data of an unfinished or replaced write")
    }
    return scan
  }
}
