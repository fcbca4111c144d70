import EmulatorStorage
import Testing

@testable import EmulatorAPI

/// Requests the clients' own upstream suites (scripts/upstream-suites) make, by route.
@Suite struct UpstreamSuiteRouteTests {
  let h: APIHarness
  init() throws { h = try APIHarness() }

  /// gcsfs's `mkdir(bucket, enable_hierarchical_namespace=True)` (its HNS tests' fixture).
  @Test func gcsfsMkdirWithHierarchicalNamespaceCreatesTheBucket() {
    let body =
      #"{"name":"gcsfs_hns_test","hierarchicalNamespace":{"enabled":true},"#
      + #""iamConfiguration":{"uniformBucketLevelAccess":{"enabled":true}}}"#
    let created = h.call("POST", "/storage/v1/b?project=p", body)
    #expect(created.status == 200, "\(created.text)")
    #expect(created.json["hierarchicalNamespace"]?["enabled"] == .bool(true))
    #expect(h.call("GET", "/storage/v1/b/gcsfs_hns_test").json["hierarchicalNamespace"]?["enabled"] == .bool(true))
    let layout = h.call("GET", "/storage/v1/b/gcsfs_hns_test/storageLayout")
    #expect(layout.json["hierarchicalNamespace"]?["enabled"] == .bool(true))
    let turnedOff = h.call("PATCH", "/storage/v1/b/gcsfs_hns_test", #"{"hierarchicalNamespace":{"enabled":false}}"#)
    #expect(turnedOff.status == 400)
    #expect(turnedOff.text.contains("cannot be changed"), "\(turnedOff.text)")
  }

  /// gcsfs's versioned-bucket fixture deletes the bucket after removing only the live objects;
  /// the noncurrent generations left make that a 409, as on GCS.
  @Test func gcsfsBucketDeleteWithNoncurrentGenerationsIs409() {
    #expect(h.call("POST", "/storage/v1/b", #"{"name":"versioned","versioning":{"enabled":true}}"#).status == 200)
    #expect(h.call("POST", "/upload/storage/v1/b/versioned/o?uploadType=media&name=a", "one").status == 200)
    #expect(h.call("DELETE", "/storage/v1/b/versioned/o/a").status == 204)
    let refused = h.call("DELETE", "/storage/v1/b/versioned")
    #expect(refused.status == 409)
    #expect(refused.text.contains("not empty"), "\(refused.text)")
  }
}
