import EmulatorHTTP
import Testing

@testable import EmulatorAPI

@Suite struct RouteTests {
  func route(_ path: String) throws -> Route? { try Route.match(rawPath: path[...]) }

  @Test func matchesEverySurface() throws {
    #expect(try route("/v0/b/bkt/o/a%2Fb") == Route(surface: .firebase, resource: .object(bucket: "bkt", name: "a/b")))
    #expect(try route("/b/bkt/o/a/b") == Route(surface: .bare, resource: .object(bucket: "bkt", name: "a/b")))
    #expect(
      try route("/storage/v1/b/bkt/o/a%252Fb") == Route(surface: .json, resource: .object(bucket: "bkt", name: "a%2Fb"))
    )
    #expect(
      try route("/download/storage/v1/b/bkt/o/x")
        == Route(surface: .download, resource: .object(bucket: "bkt", name: "x")))
    #expect(try route("/upload/storage/v1/b/bkt/o") == Route(surface: .upload, resource: .objects(bucket: "bkt")))
    #expect(try route("/v0/b/bkt/o") == Route(surface: .firebase, resource: .objects(bucket: "bkt")))
    #expect(try route("/storage/v1/b") == Route(surface: .json, resource: .buckets))
    #expect(try route("/b/bkt") == Route(surface: .bare, resource: .bucket("bkt")))
    #expect(
      try route("/storage/v1/b/bkt/o/%E6%97%A5%20x+y")
        == Route(surface: .json, resource: .object(bucket: "bkt", name: "日 x+y")))
  }

  @Test func unknownPathsAreNil() throws {
    #expect(try route("/") == nil)
    #expect(try route("/v1/b/x") == nil)
    #expect(try route("/bx") == nil)
    #expect(try route("/v0/b") == nil)
    #expect(try route("/b/bkt/x") == nil)
  }

  /// Objects are matched before the bucket subresources, and the ACL and action searches run
  /// only for a name part with a raw `/`: every case either shortcut could get wrong.
  @Test func objectsSubresourcesAndActionsStayApart() throws {
    #expect(try route("/storage/v1/b/bkt/o/storageLayout") == Route(surface: .json, resource: .object(bucket: "bkt", name: "storageLayout")))
    #expect(try route("/storage/v1/b/bkt/storageLayout") == Route(surface: .json, resource: .storageLayout("bkt")))
    #expect(try route("/b/bkt/managedFolders") == Route(surface: .bare, resource: .managedFolders("bkt")))
    #expect(try route("/storage/v1/b/bkt/o/acl") == Route(surface: .json, resource: .object(bucket: "bkt", name: "acl")))
    #expect(try route("/storage/v1/b/bkt/o/a%2Facl") == Route(surface: .json, resource: .object(bucket: "bkt", name: "a/acl")))
    #expect(
      try route("/storage/v1/b/bkt/o/a/acl") == Route(surface: .json, resource: .client(.objectACL(bucket: "bkt", name: "a", entity: nil))))
    #expect(try route("/storage/v1/b/bkt/o/a%2Fcompose")?.action == nil)
    #expect(try route("/storage/v1/b/bkt/o/a/compose")?.action == .compose(destination: "a"))
    #expect(
      try route("/storage/v1/b/s/o/x%2Fy/copyTo/b/d/o/z")?.action == .copyTo(source: "x/y", bucket: "d", name: "z"))
    // Other surfaces never have actions or ACLs: the whole name is the object's.
    #expect(try route("/upload/storage/v1/b/bkt/o/a/acl") == Route(surface: .upload, resource: .object(bucket: "bkt", name: "a/acl")))
    #expect(try route("/v0/b/bkt/o/a/compose")?.action == nil)
    #expect(throws: APIError.self) { try route("/storage/v1/b/bkt/o/a/copyTo/b/%zz/o/z") }
  }

  @Test func malformedEscapesAreA400() {
    #expect(throws: APIError.self) { try route("/b/bkt/o/%zz") }
    #expect(throws: APIError.self) { try route("/b/bkt/o/%C3") }
  }
}
