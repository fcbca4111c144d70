import EmulatorSupport

extension MultipartUploads {
  /// Reads the uploads kept in the space: damaged and expired uploads are removed with their
  /// parts; so are parts without an upload, and temporary entries of interrupted writes. Each
  /// part's size and MD5 are read from its bytes, its time from the entry.
  func load(now: Int64) {
    let cutoff = now - Int64(ttlSeconds) * 1000
    var found: [String: Upload] = [:]
    var parts: [String: [(number: Int, name: String)]] = [:]
    var damaged: Set<String> = []
    for name in space.names() {
      switch Self.parse(name: name) {
      case .record(let id):
        if let bytes = space.contents(name), let upload = Upload(record: bytes), upload.id == id {
          found[id] = upload
        } else {
          damaged.insert(id)
        }
      case .part(let id, let number):
        parts[id, default: []].append((number, name))
      case .leftover:
        space.remove(name)
      }
    }
    for id in damaged {
      space.remove(Self.recordName(id))
      log("multipart: removed the damaged upload \(id)")
    }
    for (id, list) in parts where found[id] == nil {
      for part in list { space.remove(part.name) }
    }
    for (id, var upload) in found {
      upload.touched = max(upload.initiated, space.info(Self.recordName(id))?.modified ?? 0)
      for part in parts[id] ?? [] {
        guard let digest = try? space.digest(part.name), let modified = space.info(part.name)?.modified else {
          space.remove(part.name)
          continue
        }
        upload.parts[part.number] = PartInfo(size: digest.size, md5: digest.md5, modified: modified)
        upload.touched = max(upload.touched, modified)
      }
      guard upload.touched >= cutoff else {
        removeEntries(id, parts: upload.parts.keys)
        log("multipart: removed the expired upload \(id)")
        found[id] = nil
        continue
      }
      found[id] = upload
    }
    uploads.withLock { $0 = found }
  }

  /// Removes every upload untouched for `ttlSeconds` before `now`, with its parts; returns how
  /// many.
  @discardableResult
  public func sweep(now: Int64 = Timestamp.nowMilliseconds()) -> Int {
    let cutoff = now - Int64(ttlSeconds) * 1000
    let expired = uploads.withLock { all -> [Upload] in
      let old = all.values.filter { $0.touched < cutoff }
      for upload in old { all.removeValue(forKey: upload.id) }
      return old
    }
    for upload in expired {
      removeEntries(upload.id, parts: upload.parts.keys)
      log("multipart: removed the expired upload \(upload.id)")
    }
    return expired.count
  }

  /// Sweeps every `interval` seconds (default: a tenth of `ttlSeconds`, 1 s to 10 min) until
  /// `stopSweeping`.
  public func startSweeping(interval: Double? = nil) {
    sweeper.start(every: interval ?? PeriodicSweep.interval(ttlSeconds: ttlSeconds)) { [weak self] in
      self?.sweep()
    }
  }

  public func stopSweeping() { sweeper.stop() }

  /// Forgets every upload and removes its parts (`POST /internal/reset`); returns how many.
  @discardableResult
  public func removeAll() -> Int {
    let all = uploads.withLock { all in
      defer { all = [:] }
      return Array(all.values)
    }
    for upload in all { removeEntries(upload.id, parts: upload.parts.keys) }
    return all.count
  }
}
