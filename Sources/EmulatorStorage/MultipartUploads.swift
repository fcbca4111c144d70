import EmulatorSupport
import Foundation
import Synchronization

/// XML API multipart uploads: an upload has an id, the metadata of its initiate request, and
/// numbered parts kept as files in a folder of its own until it is completed (the parts are
/// concatenated into one file the store then takes) or aborted. Uploads live in memory and
/// on disk only for the life of the process: a restart forgets them and removes their folders.
public final class MultipartUploads: Sendable {
  public struct Upload: Sendable {
    public var id: String
    public var bucket: String
    public var name: String
    /// The initiate request's metadata (content type, custom metadata…).
    public var patch: MetadataPatch
    public var initiated: Int64
    /// Part number → its size and MD5.
    public var parts: [Int: PartInfo] = [:]
  }

  public struct PartInfo: Sendable, Equatable {
    public var size: Int64
    public var md5: [UInt8]
    public var modified: Int64
  }

  public static let maxParts = 10_000
  public static let defaultMaxUploads = 1000
  public let directory: String
  /// Uploads in progress at once; more: refused.
  public let maxUploads: Int
  /// Bytes of all of one upload's parts together.
  public let maxBytes: Int64
  private let uploads = Mutex<[String: Upload]>([:])

  public init(directory: URL, maxUploads: Int = MultipartUploads.defaultMaxUploads, maxBytes: Int64)
    throws(StorageError)
  {
    self.directory = directory.path
    self.maxUploads = maxUploads
    self.maxBytes = maxBytes
    try? FileManager.default.removeItem(at: directory)
    do {
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    } catch {
      throw StorageError.io("Cannot create the multipart folder \(directory.path): \(error)")
    }
  }

  public func initiate(bucket: String, name: String, patch: MetadataPatch) throws(StorageError) -> Upload {
    try Naming.validateObjectName(name)
    let id = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    let upload = Upload(id: id, bucket: bucket, name: name, patch: patch, initiated: Timestamp.nowMilliseconds())
    let full = uploads.withLock { all -> Bool in
      if all.count >= maxUploads { return true }
      all[id] = upload
      return false
    }
    // 429 with Retry-After, as for resumable sessions: the client's own unfinished uploads fill it.
    if full { throw StorageError.tooManyUploadSessions(limit: maxUploads, retryAfterSeconds: 60) }
    do {
      try FileManager.default.createDirectory(atPath: folder(id), withIntermediateDirectories: false)
    } catch {
      _ = uploads.withLock { $0.removeValue(forKey: id) }
      throw StorageError.io("Cannot create the folder of multipart upload \(id): \(error)")
    }
    return upload
  }

  public func upload(_ id: String, bucket: String, name: String) throws(StorageError) -> Upload {
    guard let upload = uploads.withLock({ $0[id] }), upload.bucket == bucket, upload.name == name else {
      throw StorageError.uploadNotFound(id)
    }
    return upload
  }

  /// Stores one part (replacing an earlier part of that number). `file`: a spooled body this
  /// takes over; else `bytes`.
  public func putPart(
    _ id: String, bucket: String, name: String, number: Int, bytes: [UInt8], file: String?
  ) throws(StorageError) -> PartInfo {
    defer { if let file { unlink(file) } }
    guard (1...Self.maxParts).contains(number) else {
      throw StorageError.invalid("partNumber must be 1 to \(Self.maxParts), got \(number).")
    }
    let upload = try upload(id, bucket: bucket, name: name)
    let target = folder(id) + "/\(number)"
    let digest: (md5: [UInt8], crc32c: UInt32)
    let size: Int64
    if let file {
      (digest, size) = try Self.digest(file: file)
      if SystemCall.retrying({ rename(file, target) }) != 0 {
        // Another file system: copy.
        do {
          try FileManager.default.copyItem(atPath: file, toPath: target)
        } catch {
          throw StorageError.io("Cannot store part \(number) of upload \(id): \(error)")
        }
      }
    } else {
      digest = Digester.digest(bytes)
      size = Int64(bytes.count)
      guard FileManager.default.createFile(atPath: target, contents: Data(bytes)) else {
        throw StorageError.io("Cannot store part \(number) of upload \(id).")
      }
    }
    let info = PartInfo(size: size, md5: digest.md5, modified: Timestamp.nowMilliseconds())
    let total = upload.parts.filter { $0.key != number }.values.reduce(size) { $0 + $1.size }
    if total > maxBytes {
      unlink(target)
      throw StorageError.tooLarge("The parts of upload \(id) would exceed \(maxBytes) bytes.")
    }
    let stillThere = uploads.withLock { all -> Bool in
      guard all[id] != nil else { return false }
      all[id]?.parts[number] = info
      return true
    }
    guard stillThere else { throw StorageError.uploadNotFound(id) }
    return info
  }

  /// Concatenates the listed parts (ascending numbers, each present with the given MD5 when one
  /// is given) into a new file and forgets the upload; the caller owns the file.
  public func assemble(_ id: String, bucket: String, name: String, parts: [(number: Int, md5: [UInt8]?)])
    throws(StorageError) -> (upload: Upload, path: String)
  {
    let upload = try upload(id, bucket: bucket, name: name)
    guard !parts.isEmpty else { throw StorageError.invalid("A CompleteMultipartUpload needs at least one part.") }
    var previous = 0
    for part in parts {
      guard part.number > previous else {
        throw StorageError.invalid("InvalidPartOrder: the parts must be listed in ascending order of their numbers.")
      }
      previous = part.number
      guard let info = upload.parts[part.number] else {
        throw StorageError.invalid("InvalidPart: part \(part.number) was not uploaded.")
      }
      if let md5 = part.md5, md5 != info.md5 {
        throw StorageError.invalid("InvalidPart: the ETag given for part \(part.number) is not the part's.")
      }
    }
    let output = folder(id) + "/assembled"
    guard
      let out = FileHandle(forWritingAtPath: output)
        ?? {
          FileManager.default.createFile(atPath: output, contents: nil) ? FileHandle(forWritingAtPath: output) : nil
        }()
    else { throw StorageError.io("Cannot assemble upload \(id).") }
    do {
      defer { try? out.close() }
      for part in parts {
        guard let input = FileHandle(forReadingAtPath: folder(id) + "/\(part.number)") else {
          throw StorageError.io("Part \(part.number) of upload \(id) is missing on disk.")
        }
        defer { try? input.close() }
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty { try out.write(contentsOf: chunk) }
      }
    } catch let error as StorageError {
      throw error
    } catch {
      throw StorageError.io("Cannot assemble upload \(id): \(error)")
    }
    let taken = Self.moveAside(output, in: directory, id: id)
    abort(id)
    return (upload, taken)
  }

  /// Forgets an upload and removes its parts.
  @discardableResult
  public func abort(_ id: String) -> Bool {
    let existed = uploads.withLock { $0.removeValue(forKey: id) } != nil
    try? FileManager.default.removeItem(atPath: folder(id))
    return existed
  }

  private func folder(_ id: String) -> String { directory + "/" + id }

  private static func moveAside(_ path: String, in directory: String, id: String) -> String {
    let target = directory + "/" + id + ".assembled"
    return SystemCall.retrying({ rename(path, target) }) == 0 ? target : path
  }

  private static func digest(file: String) throws(StorageError) -> ((md5: [UInt8], crc32c: UInt32), Int64) {
    guard let input = FileHandle(forReadingAtPath: file) else { throw StorageError.io("Cannot read a part.") }
    defer { try? input.close() }
    var digester = Digester()
    var size: Int64 = 0
    do {
      while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
        chunk.withUnsafeBytes { digester.update($0) }
        size += Int64(chunk.count)
      }
    } catch {
      throw StorageError.io("Cannot read a part: \(error)")
    }
    return (digester.finalize(), size)
  }
}
