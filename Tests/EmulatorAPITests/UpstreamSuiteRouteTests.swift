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

  /// The same fixture with `--discard-noncurrent` (fake-gcs-server's behaviour):
  /// the delete succeeds and the bucket made again under the name has no old generation.
  @Test func gcsfsVersionedFixtureDeletesAndRecreatesTheBucketWhenDiscarding() throws {
    var limits = APILimits()
    limits.discardNoncurrentOnBucketDelete = true
    let h = try APIHarness(limits: limits)
    let create = #"{"name":"gcsfs_test_versioned","versioning":{"enabled":true}}"#
    #expect(h.call("POST", "/storage/v1/b", create).status == 200)
    #expect(h.call("POST", "/upload/storage/v1/b/gcsfs_test_versioned/o?uploadType=media&name=a", "1").status == 200)
    #expect(h.call("POST", "/upload/storage/v1/b/gcsfs_test_versioned/o?uploadType=media&name=a", "2").status == 200)
    #expect(h.call("DELETE", "/storage/v1/b/gcsfs_test_versioned/o/a").status == 204)
    let deleted = h.call("DELETE", "/storage/v1/b/gcsfs_test_versioned")
    #expect(deleted.status == 204, "\(deleted.text)")
    #expect(h.call("POST", "/storage/v1/b", create).status == 200)
    let listing = h.call("GET", "/storage/v1/b/gcsfs_test_versioned/o?versions=true")
    #expect(listing.status == 200)
    #expect(listing.json["items"] == nil || listing.json["items"] == .array([]), "\(listing.text)")
    // A live object still keeps the bucket.
    #expect(h.call("POST", "/upload/storage/v1/b/gcsfs_test_versioned/o?uploadType=media&name=b", "3").status == 200)
    #expect(h.call("DELETE", "/storage/v1/b/gcsfs_test_versioned").status == 409)
  }
}
