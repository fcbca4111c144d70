import Foundation
import Testing

@testable import EmulatorStorage

/// ACLs, storage classes, IAM policies and notification configurations in the store: defaults for
/// new generations, changes, and both kinds of restart (snapshot and full scan).
@Suite struct AccessStoreTests {
  @Test func newGenerationGetsTheBucketsDefaultObjectACLAndStorageClass() throws {
    let store = try ObjectStore(backend: MemoryBackend())
    _ = try store.createBucket("acl-bucket", resource: .object([("storageClass", .string("nearline"))]))
    let public_ = [AccessControl(entity: "allUsers", role: "READER")]
    _ = try store.changeBucket("acl-bucket", bumpsMetageneration: true) { $0.access.defaultObjectAcl = public_ }
    let object = try store.insert(bucket: "acl-bucket", name: "a", data: [1])
    #expect(object.acl == public_)
    #expect(object.storageClass == "NEARLINE")
    // An upload's own class and ACL win over the bucket's.
    var patch = MetadataPatch()
    patch.storageClass = "ARCHIVE"
    patch.acl = AccessControl.projectPrivate
    let own = try store.insert(bucket: "acl-bucket", name: "b", data: [1], upload: .init(patch: patch))
    #expect(own.storageClass == "ARCHIVE")
    #expect(own.acl == AccessControl.projectPrivate)
    // A copy gets the destination bucket's defaults, not the source's ACL.
    _ = try store.createBucket("other-bucket")
    let copy = try store.copy(from: "acl-bucket", "b", to: "other-bucket", "c")
    #expect(copy.storageClass == "STANDARD")
    #expect(copy.acl == AccessControl.projectPrivate)
  }

  @Test func changeBucketRaisesMetagenerationOnlyWhenSomethingChanged() throws {
    let store = try ObjectStore(backend: MemoryBackend())
    _ = try store.createBucket("meta-bucket")
    let (same, _) = try store.changeBucket("meta-bucket", bumpsMetageneration: true) { _ in }
    #expect(same.metageneration == 1)
    let (changed, _) = try store.changeBucket("meta-bucket", bumpsMetageneration: true) {
      $0.access.acl = [AccessControl(entity: "allUsers", role: "READER")]
    }
    #expect(changed.metageneration == 2)
    // A throwing change saves nothing.
    #expect(throws: StorageError.invalid("no")) {
      try store.changeBucket("meta-bucket", bumpsMetageneration: true) { info throws(StorageError) in
        info.access.acl = []
        throw StorageError.invalid("no")
      }
    }
    #expect(try store.bucket("meta-bucket").access.acl == changed.access.acl)
    #expect(throws: StorageError.bucketNotFound(bucket: "missing")) {
      try store.changeBucket("missing", bumpsMetageneration: false) { _ in }
    }
  }

  @Test(arguments: [true, false])
  func accessSurvivesRestart(cleanStop: Bool) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let objectACL = [AccessControl(entity: "user-a@example.com", role: "OWNER")]
    let bucketACL = [AccessControl(entity: "group-g@example.com", role: "WRITER")]
    let notification = JSONValue.object([("id", .string("1")), ("topic", .string("//pubsub.googleapis.com/projects/p/topics/t"))])
    do {
      let store = try ObjectStore(backend: FileBackend(root: root))
      _ = try store.createBucket("keep-bucket")
      _ = try store.changeBucket("keep-bucket", bumpsMetageneration: true) { info in
        info.access.acl = bucketACL
        info.access.iamRevision = 7
        info.access.notifications = [notification]
        info.access.nextNotificationID = 2
      }
      var patch = MetadataPatch()
      patch.storageClass = "COLDLINE"
      _ = try store.insert(bucket: "keep-bucket", name: "dir/ü", data: [1, 2], upload: .init(patch: patch))
      var aclPatch = MetadataPatch()
      aclPatch.acl = objectACL
      _ = try store.update(bucket: "keep-bucket", name: "dir/ü", patch: aclPatch)
      if cleanStop { #expect(try store.close()) }
    }
    if !cleanStop { try? FileManager.default.removeItem(at: root.appendingPathComponent("index.snapshot")) }
    let backend = try FileBackend(root: root)
    let store = try ObjectStore(backend: backend)
    #expect(backend.loadedFrom == (cleanStop ? .snapshot(replayed: 0) : .scan))
    let object = try store.metadata(bucket: "keep-bucket", name: "dir/ü")
    #expect(object.acl == objectACL)
    #expect(object.storageClass == "COLDLINE")
    let bucket = try store.bucket("keep-bucket")
    #expect(bucket.access.acl == bucketACL)
    #expect(bucket.access.defaultObjectAcl == AccessControl.projectPrivate)
    #expect(bucket.access.iamRevision == 7)
    #expect(bucket.access.notifications == [notification])
    #expect(bucket.access.nextNotificationID == 2)
  }

  @Test func recordsWithoutAccessReadAsDefaults() throws {
    let access = BucketAccess(record: .object([]))
    #expect(access == BucketAccess())
    let object = try ObjectMetadata(
      record: Array(
        #"{"format":1,"bucket":"b","name":"n","generation":"1","metageneration":"1","size":"0","crc32c":0,"timeCreated":"1","updated":"1"}"#
          .utf8))
    #expect(object.acl.isEmpty)
    #expect(object.storageClass == nil)
  }

  @Test func aclEntriesAreChecked() throws {
    #expect(throws: StorageError.self) { try AccessControl.validate(entity: "everyone") }
    #expect(throws: StorageError.self) { try AccessControl.validate(entity: "user-") }
    #expect(throws: StorageError.self) { try AccessControl.validate(entity: "user-a/b") }
    #expect(throws: StorageError.self) { try AccessControl.validate(entity: String(repeating: "x", count: 300)) }
    try AccessControl.validate(entity: "project-viewers-123")
    #expect(throws: StorageError.self) { try AccessControl.validate(role: "WRITER", scope: .object) }
    #expect(try AccessControl.validate(role: "writer", scope: .bucket) == "WRITER")
    let tooMany = JSONValue.array(
      (0...AccessControl.maxEntries).map { .object([("entity", .string("user-\($0)@x")), ("role", .string("READER"))]) })
    #expect(throws: StorageError.self) { try AccessControl.list(json: tooMany, scope: .object) }
    #expect(try AccessControl.predefined("publicRead", scope: .object).contains { $0.entity == "allUsers" })
    #expect(throws: StorageError.self) { try AccessControl.predefined("publicReadWrite", scope: .object) }
  }

  @Test func iamPoliciesAreChecked() throws {
    let good = try JSONValue.parse(
      Array(#"{"version":3,"bindings":[{"role":"roles/storage.objectViewer","members":["allUsers"],"condition":{"expression":"true"}}]}"#.utf8))
    let (bindings, version) = try IAMPolicy.check(good)
    #expect(version == 3)
    guard case .array(let items) = bindings else { Issue.record("bindings are not an array"); return }
    #expect(items.first?["condition"]?["expression"] == .string("true"))
    #expect(items.first?["members"] == .array([.string("allUsers")]))
    for bad in [
      #"{"bindings":[{"role":"roles/x","members":["allUsers"],"condition":{"expression":"true"}}]}"#,
      #"{"bindings":[{"role":"viewer","members":["allUsers"]}]}"#,
      #"{"bindings":[{"role":"roles/x","members":["nobody"]}]}"#,
      #"{"bindings":[{"role":"roles/x"}]}"#,
      #"{"version":2}"#,
      #"{"bindings":{}}"#,
    ] {
      #expect(throws: StorageError.self) { try IAMPolicy.check(try JSONValue.parse(Array(bad.utf8))) }
    }
    let members = JSONValue.array((0...IAMPolicy.maxMembers).map { .string("user:\($0)@x") })
    #expect(throws: StorageError.self) {
      try IAMPolicy.check(.object([("bindings", .array([.object([("role", .string("roles/x")), ("members", members)])]))]))
    }
    #expect(IAMPolicy.etag(revision: 1) == "CAE=")
  }
}
