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

  @Test func malformedEscapesAreA400() {
    #expect(throws: APIError.self) { try route("/b/bkt/o/%zz") }
    #expect(throws: APIError.self) { try route("/b/bkt/o/%C3") }
  }
}
