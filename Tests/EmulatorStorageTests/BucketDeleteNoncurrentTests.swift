import Foundation
import Testing

@testable import EmulatorStorage

/// Deleting a versioned bucket whose live objects are gone but whose noncurrent generations stay:
/// 409 as on GCS, or (`discardingNoncurrent`, fake-gcs-server's behaviour) gone with the bucket.
@Suite struct BucketDeleteNoncurrentTests {
  func bucketWithOnlyNoncurrent(_ store: ObjectStore) throws {
    _ = try store.createBucket("ver-gone", resource: .object([("versioning", .object([("enabled", .bool(true))]))]))
    _ = try store.insert(bucket: "ver-gone", name: "a", data: Array("one".utf8))
    _ = try store.insert(bucket: "ver-gone", name: "a", data: Array("two".utf8))
    try store.delete(bucket: "ver-gone", name: "a")
  }

  func generations(_ store: ObjectStore) throws -> Int {
    var query = ListQuery()
    query.versions = true
    return try store.list(bucket: "ver-gone", query: query).items.count
  }

  @Test(arguments: BackendKind.allCases)
  func noncurrentGenerationsKeepTheBucketByDefault(_ kind: BackendKind) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let store = try ObjectStore(backend: kind.makeBackend(in: folder))
    try bucketWithOnlyNoncurrent(store)
    #expect(throws: StorageError.bucketNotEmpty(bucket: "ver-gone")) { try store.deleteBucket("ver-gone") }
    #expect(try generations(store) == 2)
  }

  @Test(arguments: BackendKind.allCases)
  func discardingNoncurrentDeletesThemWithTheBucket(_ kind: BackendKind) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let store = try ObjectStore(backend: kind.makeBackend(in: folder))
    try bucketWithOnlyNoncurrent(store)
    try store.deleteBucket("ver-gone", discardingNoncurrent: true)
    #expect(throws: StorageError.bucketNotFound(bucket: "ver-gone")) { try store.bucket("ver-gone") }
    // A bucket made again under the name starts empty.
    _ = try store.createBucket("ver-gone", resource: .object([("versioning", .object([("enabled", .bool(true))]))]))
    #expect(try generations(store) == 0)
  }

  @Test func discardedGenerationsDoNotComeBackAfterARestart() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    do {
      let store = try ObjectStore(backend: FileBackend(root: root))
      try bucketWithOnlyNoncurrent(store)
      try store.deleteBucket("ver-gone", discardingNoncurrent: true)
      _ = try store.createBucket("ver-gone")
    }
    let store = try ObjectStore(backend: FileBackend(root: root))
    #expect(try generations(store) == 0)
  }

  @Test func aLiveObjectStillKeepsTheBucket() throws {
    let store = try ObjectStore(backend: MemoryBackend())
    try bucketWithOnlyNoncurrent(store)
    _ = try store.insert(bucket: "ver-gone", name: "live", data: Array("x".utf8))
    #expect(throws: StorageError.bucketNotEmpty(bucket: "ver-gone")) {
      try store.deleteBucket("ver-gone", discardingNoncurrent: true)
    }
  }
}
