import EmulatorHTTP
import EmulatorStorage
import Testing

@testable import EmulatorAPI

/// `RenderCache` on its own: a rendering is reused only for equal metadata, and names are told
/// apart by their bytes (canonically equivalent names are two objects).
@Suite struct RenderCacheTests {
  final class Renders: @unchecked Sendable {
    var count = 0
    func render(_ object: ObjectMetadata) -> [UInt8] {
      count += 1
      return Array("\(object.name)#\(object.metageneration)".utf8)
    }
  }

  private func key(_ name: String, baseURL: String = "http://h") -> RenderCache.Key {
    RenderCache.Key(bucket: "b", name: name, flavour: .gcs, baseURL: baseURL, fields: nil)
  }

  @Test func rendersAnUnchangedObjectOnce() {
    let cache = RenderCache()
    let renders = Renders()
    let object = ObjectMetadata(bucket: "b", name: "a", generation: 1, size: 1, md5: nil, crc32c: 0, now: 5)
    let first = cache.body(for: object, key: key("a"), render: renders.render)
    let second = cache.body(for: object, key: key("a"), render: renders.render)
    #expect(renders.count == 1)
    #expect(first.body == second.body && first.etag == second.etag && first.etag == object.etag)
  }

  @Test func rendersAgainAfterAnyChange() {
    let cache = RenderCache()
    let renders = Renders()
    var object = ObjectMetadata(bucket: "b", name: "a", generation: 1, size: 1, md5: nil, crc32c: 0, now: 5)
    _ = cache.body(for: object, key: key("a"), render: renders.render)
    object.metageneration += 1
    #expect(cache.body(for: object, key: key("a"), render: renders.render).body == Array("a#2".utf8))
    object.contentType = "text/plain"
    _ = cache.body(for: object, key: key("a"), render: renders.render)
    // Another rendering of the same object (links under another host) is another entry.
    _ = cache.body(for: object, key: key("a", baseURL: "http://other"), render: renders.render)
    #expect(renders.count == 4)
  }

  @Test func canonicallyEquivalentNamesAreTwoEntries() {
    let composed = "caf\u{E9}"
    let decomposed = "cafe\u{301}"
    #expect(composed == decomposed, "Swift's String equality merges them")
    #expect(key(composed) != key(decomposed))
    #expect(key("ab") != key("ba") && key("ab") == key("ab"), "same length: compared byte for byte")
    let cache = RenderCache()
    let renders = Renders()
    let one = ObjectMetadata(bucket: "b", name: composed, generation: 1, size: 1, md5: nil, crc32c: 0, now: 5)
    let other = ObjectMetadata(bucket: "b", name: decomposed, generation: 1, size: 1, md5: nil, crc32c: 0, now: 5)
    _ = cache.body(for: one, key: key(composed), render: renders.render)
    _ = cache.body(for: other, key: key(decomposed), render: renders.render)
    #expect(renders.count == 2)
  }

  @Test func startsOverPastItsCapacity() {
    let cache = RenderCache(capacity: 2)
    let renders = Renders()
    let objects = ["a", "b", "c"].map {
      ObjectMetadata(bucket: "b", name: $0, generation: 1, size: 1, md5: nil, crc32c: 0, now: 5)
    }
    for object in objects { _ = cache.body(for: object, key: key(object.name), render: renders.render) }
    _ = cache.body(for: objects[2], key: key("c"), render: renders.render)
    #expect(renders.count == 3, "the newest entry survives the reset")
    _ = cache.body(for: objects[0], key: key("a"), render: renders.render)
    #expect(renders.count == 4)
  }

  /// Through the API: the links of a metadata GET follow each request's own `Host`, whichever
  /// host came before (the base URL of the last `Host` is kept, the rendering is cached by host).
  @Test func linksFollowEachRequestsHost() throws {
    let h = try APIHarness()
    #expect(h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=a", "x").status == 200)
    func selfLink(host: String) -> String? {
      let head = HTTPRequestHead(method: "GET", target: "/storage/v1/b/bkt/o/a", headers: ["host": host])
      return Reply(h.api.answer(HTTPRequest(head: head))).string("selfLink")
    }
    for host in ["one.test:1", "two.test:2", "one.test:1", "one.test:1", "two.test:2"] {
      #expect(selfLink(host: host) == "http://\(host)/storage/v1/b/bkt/o/a")
    }
  }
}
