import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI

/// The request target of an absolute URL the API returned.
private func path(_ url: String?) -> String {
  guard let url, let range = url.range(of: "localhost:9199") else { return "/missing" }
  return String(url[range.upperBound...])
}

private let multipartPath = "/upload/storage/v1/b/bkt/o?uploadType=multipart"

/// What gcloud (apitools) sends, and the multipart errors each as a 400 that says what was wrong.
@Suite struct GcloudUploadTests {
  let h: APIHarness
  init() throws { h = try APIHarness() }

  @Test func apitoolsMultipartWithReprQuotedBoundaryAndMIMEHeaders() {
    // MultipartBytesGenerator's output, as apitools sends it (bare LF, MIME-Version per part).
    let boundary = "===============5738263679778929715=="
    let body =
      "--\(boundary)\nContent-Type: application/json\nMIME-Version: 1.0\n\n"
      + #"{"name": "dir/small.txt"}"# + "\n--\(boundary)\nContent-Type: text/plain\nMIME-Version: 1.0\n"
      + "Content-Transfer-Encoding: binary\n\nhello\n\n--\(boundary)--"
    let reply = h.call(
      "POST", multipartPath, body, headers: [("content-type", "multipart/related; boundary='\(boundary)'")])
    #expect(reply.status == 200, "\(reply.text)")
    #expect(reply.string("name") == "dir/small.txt")
    #expect(reply.string("contentType") == "text/plain")
    #expect(h.call("GET", "/storage/v1/b/bkt/o/dir%2Fsmall.txt?alt=media").text == "hello\n")
  }

  @Test func goStyleUnquotedBoundaryWithParametersInAnyOrder() {
    let body =
      "--abc123\r\nContent-Type: application/json\r\n\r\n{\"name\":\"g\"}\r\n--abc123\r\n\r\nx\r\n--abc123--\r\n"
    let reply = h.call(
      "POST", multipartPath, body,
      headers: [("content-type", "Multipart/Related ; type=\"application/json\"; BOUNDARY = abc123")])
    #expect(reply.status == 200, "\(reply.text)")
  }

  func error(_ contentType: String, _ body: String = "--b\r\n\r\n{}\r\n--b\r\n\r\nx\r\n--b--\r\n") -> (Int, String) {
    let reply = h.call("POST", multipartPath + "&name=o", body, headers: [("content-type", contentType)])
    return (reply.status, reply.json["error"]?["message"]?.stringValue ?? "")
  }

  @Test func unterminatedQuoteIs400() {
    let (status, message) = error(#"multipart/related; boundary="b"#)
    #expect(status == 400)
    #expect(message.contains("no closing quote"), "\(message)")
  }

  @Test func emptyBoundaryIs400() {
    let (status, message) = error(#"multipart/related; boundary="""#)
    #expect(status == 400)
    #expect(message.contains("boundary is empty"), "\(message)")
  }

  @Test func boundaryOver70CharactersIs400() {
    let (status, message) = error("multipart/related; boundary=\(String(repeating: "b", count: 71))")
    #expect(status == 400)
    #expect(message.contains("at most 70"), "\(message)")
  }

  @Test func boundaryAbsentFromTheBodyIs400() {
    let (status, message) = error("multipart/related; boundary=other")
    #expect(status == 400)
    #expect(message.contains("does not contain its boundary"), "\(message)")
  }

  @Test func missingClosingDelimiterIs400() {
    let (status, message) = error("multipart/related; boundary=b", "--b\r\n\r\n{}\r\n--b\r\n\r\nx\r\n")
    #expect(status == 400)
    #expect(message.contains("not closed"), "\(message)")
  }

  @Test func notMultipartIs400() {
    let (status, message) = error("application/json")
    #expect(status == 400)
    #expect(message.contains("multipart/related"), "\(message)")
  }

  @Test func malformedPartAndUploadContentTypesAre400() {
    let body = "--b\r\nContent-Type: application/json; charset=\"utf-8\r\n\r\n{}\r\n--b\r\n\r\nx\r\n--b--\r\n"
    let (status, message) = error("multipart/related; boundary=b", body)
    #expect(status == 400)
    #expect(message.contains("Content-Type of part 1"), "\(message)")
    let media = h.call(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=m", "x",
      headers: [("content-type", "text/plain; charset=\"utf-8")])
    #expect(media.status == 400)
    let resumable = h.call(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=r", "{}",
      headers: [("x-upload-content-type", "text/plain; a=1; a=2")])
    #expect(resumable.status == 400)
    #expect(resumable.text.contains("given twice"))
  }

  @Test(arguments: ["media", "multipart", "resumable"])
  func resumablePrefixServesEveryUploadType(_ type: String) throws {
    let prefix = "/resumable/upload/storage/v1/b/bkt/o?uploadType=\(type)&name=r-\(type)"
    switch type {
    case "media":
      #expect(h.call("POST", prefix, "data").status == 200)
    case "multipart":
      let body = "--b\r\n\r\n{}\r\n--b\r\n\r\ndata\r\n--b--\r\n"
      #expect(h.call("POST", prefix, body, headers: [("content-type", "multipart/related; boundary=b")]).status == 200)
    default:
      let start = h.call("POST", prefix, "{}", headers: [("x-upload-content-type", "text/plain")])
      #expect(start.status == 200)
      let session = path(start.header("location"))
      let chunk = h.call("PUT", session, "da", headers: [("content-range", "bytes 0-1/*")])
      #expect(chunk.status == 308)
      #expect(chunk.header("range") == "bytes=0-1")
      let status = h.call("PUT", session, "", headers: [("content-range", "bytes */*")])
      #expect(status.status == 308)
      #expect(h.call("PUT", session, "ta", headers: [("content-range", "bytes 2-3/4")]).status == 200)
      let cancelled = h.call("POST", prefix.replacingOccurrences(of: "r-resumable", with: "c"), "{}")
      let cancelURL = path(cancelled.header("location"))
      #expect(h.call("DELETE", cancelURL).status == 204)
      #expect(h.call("PUT", cancelURL, "x").status == 404)
    }
    #expect(h.call("GET", "/storage/v1/b/bkt/o/r-\(type)?alt=media").text == "data")
  }
}

/// `storageLayout` and the bucket resource as gcloud creates, reads and updates it.
@Suite struct GcloudBucketTests {
  let h: APIHarness
  init() throws { h = try APIHarness() }

  @Test func storageLayoutAsGCSAnswersIt() {
    #expect(h.call("POST", "/storage/v1/b?project=p", #"{"name":"lay-out","location":"europe-west1"}"#).status == 200)
    let reply = h.call("GET", "/storage/v1/b/lay-out/storageLayout?alt=json")
    #expect(reply.status == 200)
    #expect(reply.string("kind") == "storage#storageLayout")
    #expect(reply.string("bucket") == "lay-out")
    #expect(reply.string("location") == "EUROPE-WEST1")
    #expect(reply.string("locationType") == "region")
    #expect(reply.json["hierarchicalNamespace"]?["enabled"] == .bool(false))
    #expect(h.call("GET", "/storage/v1/b/missing-bucket/storageLayout").status == 404)
  }

  @Test func insertKeepsEveryWritableField() {
    let body = #"""
      {"name":"full-bucket","location":"us-east1","storageClass":"nearline",
       "iamConfiguration":{"uniformBucketLevelAccess":{"enabled":true},"publicAccessPrevention":"enforced"},
       "labels":{"team":"storage","env":"dev"},"versioning":{"enabled":true},
       "lifecycle":{"rule":[{"action":{"type":"Delete"},"condition":{"age":30}}]},
       "cors":[{"origin":["*"],"method":["GET"],"responseHeader":["Content-Type"],"maxAgeSeconds":3600}],
       "retentionPolicy":{"retentionPeriod":"86400"},"defaultEventBasedHold":true,
       "softDeletePolicy":{"retentionDurationSeconds":"0"},"hierarchicalNamespace":{"enabled":false}}
      """#
    let created = h.call("POST", "/storage/v1/b?project=p", body)
    #expect(created.status == 200, "\(created.text)")
    for reply in [created, h.call("GET", "/storage/v1/b/full-bucket")] {
      let json = reply.json
      #expect(json["location"] == .string("US-EAST1"))
      #expect(json["locationType"] == .string("region"))
      #expect(json["storageClass"] == .string("NEARLINE"))
      #expect(json["iamConfiguration"]?["uniformBucketLevelAccess"]?["enabled"] == .bool(true))
      #expect(json["iamConfiguration"]?["bucketPolicyOnly"]?["enabled"] == .bool(true))
      #expect(json["iamConfiguration"]?["uniformBucketLevelAccess"]?["lockedTime"]?.stringValue != nil)
      #expect(json["iamConfiguration"]?["publicAccessPrevention"] == .string("enforced"))
      #expect(json["labels"]?["team"] == .string("storage"))
      #expect(json["versioning"]?["enabled"] == .bool(true))
      #expect(json["lifecycle"]?["rule"] != nil)
      #expect(json["cors"] != nil)
      #expect(json["retentionPolicy"]?["retentionPeriod"] == .string("86400"))
      #expect(json["retentionPolicy"]?["effectiveTime"]?.stringValue != nil)
      #expect(json["defaultEventBasedHold"] == .bool(true))
      #expect(json["softDeletePolicy"]?["retentionDurationSeconds"] == .string("0"))
      #expect(json["hierarchicalNamespace"]?["enabled"] == .bool(false))
    }
    let dual = h.call("POST", "/storage/v1/b", #"{"name":"dual-bucket","location":"nam4"}"#)
    #expect(dual.string("locationType") == "dual-region")
    let plain = h.call("POST", "/storage/v1/b", #"{"name":"plain-bucket"}"#)
    #expect(plain.string("location") == "US")
    #expect(plain.string("locationType") == "multi-region")
    #expect(plain.string("storageClass") == "STANDARD")
    #expect(plain.json["iamConfiguration"]?["uniformBucketLevelAccess"]?["enabled"] == .bool(false))
  }

  @Test(arguments: [
    (#"{"name":"bad-one","location":"moon-base1x"}"#, "location constraint is not valid"),
    (#"{"name":"bad-one","storageClass":"FROZEN"}"#, "storage class is not valid"),
    (#"{"name":"bad-one","labels":{"Team":"x"}}"#, "Label key 'Team' is not valid"),
    (#"{"name":"bad-one","versioning":{"enabled":"yes"}}"#, "versioning must be"),
    (#"{"name":"bad-one","softDeletePolicy":{"retentionDurationSeconds":"86400"}}"#, "softDeletePolicy"),
    (#"{"name":"bad-one","retentionPolicy":{"retentionPeriod":"0"}}"#, "retentionPolicy"),
    (#"{"name":"bad-one","lifecycle":{"rule":[{"action":{"type":"Explode"},"condition":{"age":1}}]}}"#, "Explode"),
    (#"{"name":"bad-one","hierarchicalNamespace":{"enabled":true}}"#, "requires uniform bucket-level access"),
    (#"{"name":"bad-one","website":{"mainPageSuffix":"index.html"}}"#, "not emulated"),
    (#"{"name":"bad-one","acl":[{"entity":"everyone","role":"READER"}]}"#, "Invalid ACL entity"),
  ])
  func refusedValuesAre400AndCreateNothing(_ body: String, _ message: String) {
    let reply = h.call("POST", "/storage/v1/b", body)
    #expect(reply.status == 400)
    #expect(reply.text.contains(message), "\(reply.text)")
    #expect(h.call("GET", "/storage/v1/b/bad-one").status == 404)
  }

  @Test func patchAndPutChangeFieldsAndRaiseMetageneration() {
    h.call("POST", "/storage/v1/b", #"{"name":"patch-me","location":"EU","labels":{"a":"1","b":"2"}}"#)
    let patched = h.call(
      "PATCH", "/storage/v1/b/patch-me?ifMetagenerationMatch=1",
      #"{"versioning":{"enabled":true},"labels":{"a":null,"c":"3"},"storageClass":"coldline"}"#)
    #expect(patched.status == 200, "\(patched.text)")
    #expect(patched.string("metageneration") == "2")
    #expect(patched.json["versioning"]?["enabled"] == .bool(true))
    #expect(patched.json["labels"] == .object([("b", .string("2")), ("c", .string("3"))]))
    #expect(patched.string("storageClass") == "COLDLINE")
    #expect(patched.string("location") == "EU")
    #expect(patched.string("etag") == "CAI=")
    #expect(h.call("PATCH", "/storage/v1/b/patch-me?ifMetagenerationMatch=1", "{}").status == 412)
    let moved = h.call("PATCH", "/storage/v1/b/patch-me", #"{"location":"US"}"#)
    #expect(moved.status == 400)
    #expect(moved.text.contains("cannot be changed"))
    let replaced = h.call("PUT", "/storage/v1/b/patch-me", #"{"labels":{"z":"9"}}"#)
    #expect(replaced.status == 200)
    #expect(replaced.string("metageneration") == "3")
    #expect(replaced.json["versioning"] == nil)
    #expect(replaced.json["labels"] == .object([("z", .string("9"))]))
    #expect(replaced.string("storageClass") == "STANDARD")
    #expect(replaced.string("location") == "EU")
    #expect(h.call("PATCH", "/storage/v1/b/no-such-bucket", "{}").status == 404)
  }
}

/// Object versioning as `gcloud storage buckets update --versioning` then `ls -a` use it.
@Suite struct VersioningRouteTests {
  let h: APIHarness
  init() throws { h = try APIHarness() }

  func upload(_ name: String, _ data: String) -> String {
    h.call("POST", "/upload/storage/v1/b/ver-bucket/o?uploadType=media&name=\(name)", data).string("generation") ?? ""
  }

  @Test func overwriteKeepsNoncurrentGenerationReadableListableDeletable() throws {
    h.call("POST", "/storage/v1/b", #"{"name":"ver-bucket"}"#)
    let unversioned = upload("plain", "p1")
    _ = upload("plain", "p2")
    #expect(h.call("GET", "/storage/v1/b/ver-bucket/o/plain?generation=\(unversioned)").status == 404)
    h.call("PATCH", "/storage/v1/b/ver-bucket", #"{"versioning":{"enabled":true}}"#)
    let first = upload("v.txt", "one")
    let second = upload("v.txt", "two")
    #expect(first != second)
    let listed = h.call("GET", "/storage/v1/b/ver-bucket/o?versions=True&prefix=v.txt")
    guard case .array(let items)? = listed.json["items"] else {
      Issue.record("no items: \(listed.text)")
      return
    }
    #expect(items.map { $0["generation"]?.stringValue ?? "" } == [first, second])
    #expect(items[0]["timeDeleted"]?.stringValue != nil)
    #expect(items[1]["timeDeleted"] == nil)
    guard case .array(let current)? = h.call("GET", "/storage/v1/b/ver-bucket/o?prefix=v.txt").json["items"] else {
      Issue.record("no items")
      return
    }
    #expect(current.count == 1)
    let old = h.call("GET", "/storage/v1/b/ver-bucket/o/v.txt?generation=\(first)")
    #expect(old.status == 200)
    #expect(old.string("timeDeleted") != nil)
    #expect(h.call("GET", "/storage/v1/b/ver-bucket/o/v.txt?generation=\(first)&alt=media").text == "one")
    #expect(h.call("GET", "/download/storage/v1/b/ver-bucket/o/v.txt?generation=\(second)&alt=media").text == "two")
    // A plain delete makes the live generation noncurrent; deleting by generation is for good.
    #expect(h.call("DELETE", "/storage/v1/b/ver-bucket/o/v.txt").status == 204)
    #expect(h.call("GET", "/storage/v1/b/ver-bucket/o/v.txt").status == 404)
    #expect(h.call("GET", "/storage/v1/b/ver-bucket/o/v.txt?generation=\(second)&alt=media").text == "two")
    #expect(h.call("DELETE", "/storage/v1/b/ver-bucket/o/v.txt?generation=\(first)").status == 204)
    #expect(h.call("GET", "/storage/v1/b/ver-bucket/o/v.txt?generation=\(first)").status == 404)
    #expect(h.call("DELETE", "/storage/v1/b/ver-bucket/o/v.txt?generation=\(first)").status == 404)
    guard case .array(let left)? = h.call("GET", "/storage/v1/b/ver-bucket/o?versions=true&prefix=v").json["items"]
    else {
      Issue.record("no items")
      return
    }
    #expect(left.map { $0["generation"]?.stringValue ?? "" } == [second])
    // Noncurrent generations keep the bucket from being deleted.
    #expect(h.call("DELETE", "/storage/v1/b/ver-bucket/o/plain").status == 204)
    #expect(h.call("DELETE", "/storage/v1/b/ver-bucket/o/plain?generation=0").status == 404)
    #expect(h.call("DELETE", "/storage/v1/b/ver-bucket").status == 409)
  }
}

/// The other calls gcloud makes on the way: managed folders before `rm -r` of a bucket, and
/// `metadata: {}` for `--clear-custom-metadata`.
@Suite struct GcloudOtherCallsTests {
  let h: APIHarness
  init() throws { h = try APIHarness() }

  @Test func managedFoldersListIsEmptyAndMissingBucketIs404() {
    h.call("POST", "/storage/v1/b", #"{"name":"folders-bucket"}"#)
    let reply = h.call("GET", "/storage/v1/b/folders-bucket/managedFolders?alt=json&pageSize=1000")
    #expect(reply.status == 200)
    #expect(reply.json == .object([("kind", .string("storage#managedFolders"))]))
    #expect(h.call("GET", "/storage/v1/b/no-such-bucket/managedFolders").status == 404)
    #expect(h.call("POST", "/storage/v1/b/folders-bucket/managedFolders", #"{"name":"f/"}"#).status == 400)
  }

  @Test func emptyMetadataObjectClearsCustomMetadataOnGCSOnly() {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=m", "x")
    h.call("PATCH", "/storage/v1/b/bkt/o/m", #"{"metadata":{"k1":"v1","k2":"v2"}}"#)
    let cleared = h.call("PATCH", "/storage/v1/b/bkt/o/m", #"{"bucket":"bkt","metadata":{},"name":"m"}"#)
    #expect(cleared.status == 200)
    #expect(cleared.json["metadata"] == nil)
    h.call("PATCH", "/v0/b/bkt/o/m", #"{"metadata":{"k":"v"}}"#)
    let firebase = h.call("PATCH", "/v0/b/bkt/o/m", #"{"metadata":{}}"#)
    #expect(firebase.json["metadata"]?["k"] == .string("v"))
  }
}

extension VersioningRouteTests {
  @Test func turningVersioningOffKeepsNoncurrentGenerationsAndStopsMakingThem() {
    h.call("POST", "/storage/v1/b", #"{"name":"ver-bucket","versioning":{"enabled":true}}"#)
    _ = upload("o", "1")
    _ = upload("o", "2")
    let off = h.call("PATCH", "/storage/v1/b/ver-bucket", #"{"versioning":{"enabled":false}}"#)
    #expect(off.json["versioning"]?["enabled"] == .bool(false))
    _ = upload("o", "3")
    guard case .array(let items)? = h.call("GET", "/storage/v1/b/ver-bucket/o?versions=true").json["items"] else {
      Issue.record("no items")
      return
    }
    // "1" stays noncurrent; "2" was replaced without versioning, so it is gone.
    #expect(items.count == 2)
    #expect(items.last?["timeDeleted"] == nil)
  }
}

extension GcloudBucketTests {
  /// gcloud echoes the whole bucket back in its PATCH, old `bucketPolicyOnly` included.
  @Test func uniformBucketLevelAccessWinsOverAnEchoedBucketPolicyOnly() {
    h.call("POST", "/storage/v1/b", #"{"name":"echo-bucket"}"#)
    let patched = h.call(
      "PATCH", "/storage/v1/b/echo-bucket",
      #"{"iamConfiguration":{"bucketPolicyOnly":{"enabled":false},"uniformBucketLevelAccess":{"enabled":true}},"etag":"CAE=","id":"echo-bucket","selfLink":"x","timeCreated":"2020-01-01T00:00:00Z"}"#
    )
    #expect(patched.status == 200)
    #expect(patched.json["iamConfiguration"]?["uniformBucketLevelAccess"]?["enabled"] == .bool(true))
    #expect(patched.json["iamConfiguration"]?["bucketPolicyOnly"]?["enabled"] == .bool(true))
    #expect(patched.string("id") == "echo-bucket")
  }

  @Test func anEchoedUnchangedRetentionPolicyKeepsItsEffectiveTime() throws {
    let created = h.call("POST", "/storage/v1/b", #"{"name":"keep-time","retentionPolicy":{"retentionPeriod":"60"}}"#)
    let time = try #require(created.json["retentionPolicy"]?["effectiveTime"]?.stringValue)
    Thread.sleep(forTimeInterval: 0.01)
    let echoed = h.call(
      "PATCH", "/storage/v1/b/keep-time", #"{"retentionPolicy":{"retentionPeriod":60,"effectiveTime":"x"}}"#)
    #expect(echoed.json["retentionPolicy"]?["effectiveTime"]?.stringValue == time)
    let changed = h.call("PATCH", "/storage/v1/b/keep-time", #"{"retentionPolicy":{"retentionPeriod":"120"}}"#)
    #expect(changed.json["retentionPolicy"]?["retentionPeriod"] == .string("120"))
    #expect(h.call("PATCH", "/storage/v1/b/keep-time", #"{"retentionPolicy":null}"#).json["retentionPolicy"] == nil)
  }
}

extension VersioningRouteTests {
  /// `gcloud storage cp gs://b/o#G gs://b/o` restores an old generation (a rewrite from it).
  @Test func copyRewriteAndComposeReadANoncurrentGeneration() {
    h.call("POST", "/storage/v1/b", #"{"name":"ver-bucket","versioning":{"enabled":true}}"#)
    let old = upload("o", "old")
    _ = upload("o", "new")
    let restored = h.call("POST", "/storage/v1/b/ver-bucket/o/o/rewriteTo/b/ver-bucket/o/o?sourceGeneration=\(old)", "")
    #expect(restored.status == 200)
    #expect(h.call("GET", "/storage/v1/b/ver-bucket/o/o?alt=media").text == "old")
    let copied = h.call("POST", "/storage/v1/b/ver-bucket/o/o/copyTo/b/ver-bucket/o/copy?sourceGeneration=\(old)", "")
    #expect(copied.status == 200)
    let composed = h.call(
      "POST", "/storage/v1/b/ver-bucket/o/both/compose",
      #"{"sourceObjects":[{"name":"o","generation":"\#(old)"},{"name":"copy"}]}"#)
    #expect(composed.status == 200)
    #expect(h.call("GET", "/storage/v1/b/ver-bucket/o/both?alt=media").text == "oldold")
    #expect(h.call("POST", "/storage/v1/b/ver-bucket/o/o/copyTo/b/ver-bucket/o/x?sourceGeneration=1", "").status == 404)
    guard case .array(let items)? = h.call("GET", "/storage/v1/b/ver-bucket/o?versions=true&prefix=o").json["items"]
    else {
      Issue.record("no items")
      return
    }
    #expect(items.count == 3)  // old, new (both noncurrent now) and the restored live one
  }
}
