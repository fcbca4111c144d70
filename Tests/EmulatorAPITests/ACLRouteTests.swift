import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI

/// ACLs, IAM and storage classes through the routes, without sockets.
@Suite struct ACLRouteTests {
  let h: APIHarness

  init() throws {
    h = try APIHarness(lenientBuckets: false)
    #expect(h.call("POST", "/storage/v1/b", #"{"name":"acl-bkt"}"#).status == 200)
    #expect(h.call("POST", "/upload/storage/v1/b/acl-bkt/o?uploadType=media&name=dir%2Fa.txt", "hi").status == 200)
  }

  func entities(_ reply: Reply) -> [String] {
    guard case .array(let items)? = reply.json["items"] ?? reply.json["acl"] else { return [] }
    return items.compactMap { $0["entity"]?.stringValue }
  }

  @Test func objectACLListGetInsertPatchDelete() {
    let base = "/storage/v1/b/acl-bkt/o/dir%2Fa.txt/acl"
    let list = h.call("GET", base)
    #expect(list.status == 200)
    #expect(list.string("kind") == "storage#objectAccessControls")
    #expect(entities(list) == ["project-owners-0", "project-editors-0", "project-viewers-0"])
    let inserted = h.call("POST", base, #"{"entity":"user-ann@example.com","role":"READER"}"#)
    #expect(inserted.status == 200)
    #expect(inserted.string("kind") == "storage#objectAccessControl")
    #expect(inserted.string("object") == "dir/a.txt")
    #expect(inserted.string("email") == "ann@example.com")
    #expect(inserted.string("id")?.hasSuffix("/user-ann@example.com") == true)
    let patched = h.call("PATCH", base + "/user-ann%40example.com", #"{"role":"OWNER"}"#)
    #expect(patched.status == 200)
    #expect(patched.string("role") == "OWNER")
    #expect(h.call("GET", base + "/user-ann@example.com").string("role") == "OWNER")
    // Each change is a metadata change of the object.
    let object = h.call("GET", "/storage/v1/b/acl-bkt/o/dir%2Fa.txt?projection=full")
    #expect(object.string("metageneration") == "3")
    #expect(entities(object).contains("user-ann@example.com"))
    #expect(object.json["owner"]?["entity"] == .string("project-owners-0"))
    #expect(h.call("GET", "/storage/v1/b/acl-bkt/o/dir%2Fa.txt").json["acl"] == nil)
    #expect(h.call("DELETE", base + "/user-ann@example.com").status == 204)
    #expect(h.call("GET", base + "/user-ann@example.com").status == 404)
    #expect(h.call("DELETE", base + "/user-ann@example.com").status == 404)
  }

  @Test func badACLEntriesAreClear400s() {
    let base = "/storage/v1/b/acl-bkt/o/dir%2Fa.txt/acl"
    for body in [
      #"{"entity":"everyone","role":"READER"}"#, #"{"entity":"allUsers","role":"WRITER"}"#, #"{"role":"READER"}"#,
      "[1]", "{",
    ] {
      let reply = h.call("POST", base, body)
      #expect(reply.status == 400, "\(body)")
      #expect(reply.json["error"]?["message"]?.stringValue?.isEmpty == false)
    }
    #expect(h.call("PUT", base, "{}").status == 405)
    #expect(h.call("GET", "/storage/v1/b/acl-bkt/o/missing/acl").status == 404)
    #expect(h.call("GET", "/storage/v1/b/nobucket/acl").status == 404)
  }

  @Test func bucketAndDefaultObjectACLs() {
    let added = h.call("POST", "/storage/v1/b/acl-bkt/acl", #"{"entity":"group-team@example.com","role":"WRITER"}"#)
    #expect(added.status == 200)
    #expect(added.string("kind") == "storage#bucketAccessControl")
    #expect(h.call("GET", "/storage/v1/b/acl-bkt").string("metageneration") == "2")
    let defaults = h.call("PUT", "/storage/v1/b/acl-bkt/defaultObjectAcl/project-viewers-0", #"{"role":"OWNER"}"#)
    #expect(defaults.status == 200)
    #expect(defaults.string("kind") == "storage#objectAccessControl")
    // The next object takes the new default.
    #expect(h.call("POST", "/upload/storage/v1/b/acl-bkt/o?uploadType=media&name=b", "x").status == 200)
    let acl = h.call("GET", "/storage/v1/b/acl-bkt/o/b/acl").json["items"]
    #expect(acl.map { "\($0)" }?.contains("OWNER") == true)
    guard case .array(let items)? = acl else { Issue.record("no items"); return }
    #expect(items.first { $0["entity"] == .string("project-viewers-0") }?["role"] == .string("OWNER"))
    let full = h.call("GET", "/storage/v1/b/acl-bkt?projection=full")
    #expect(entities(full).contains("group-team@example.com"))
    #expect(full.json["defaultObjectAcl"] != nil)
    #expect(h.call("GET", "/storage/v1/b/acl-bkt").json["acl"] == nil)
  }

  @Test func predefinedACLsOnInsertsAndPatches() {
    let bucket = h.call(
      "POST", "/storage/v1/b?predefinedAcl=publicRead&predefinedDefaultObjectAcl=authenticatedRead&projection=full",
      #"{"name":"pre-bkt"}"#)
    #expect(bucket.status == 200)
    #expect(entities(bucket).contains("allUsers"))
    let object = h.call("POST", "/upload/storage/v1/b/pre-bkt/o?uploadType=media&name=x&predefinedAcl=publicRead", "x")
    #expect(object.status == 200)
    #expect(entities(h.call("GET", "/storage/v1/b/pre-bkt/o/x/acl")).contains("allUsers"))
    let other = h.call("POST", "/upload/storage/v1/b/pre-bkt/o?uploadType=media&name=y", "y")
    #expect(other.status == 200)
    #expect(entities(h.call("GET", "/storage/v1/b/pre-bkt/o/y/acl")).contains("allAuthenticatedUsers"))
    #expect(h.call("PATCH", "/storage/v1/b/pre-bkt/o/y?predefinedAcl=private", "{}").status == 200)
    #expect(entities(h.call("GET", "/storage/v1/b/pre-bkt/o/y/acl")) == ["project-owners-0"])
    #expect(h.call("POST", "/upload/storage/v1/b/pre-bkt/o?uploadType=media&name=z&predefinedAcl=bogus", "z").status == 400)
    #expect(h.call("GET", "/storage/v1/b/pre-bkt/o/z").status == 404)
  }

  @Test func resumableUploadKeepsTheStartsPredefinedACL() {
    let start = h.call("POST", "/upload/storage/v1/b/acl-bkt/o?uploadType=resumable&name=r&predefinedAcl=publicRead", "{}")
    #expect(start.status == 200)
    let location = start.header("location") ?? ""
    let path = location.replacingOccurrences(of: "http://localhost:9199", with: "")
    #expect(!path.contains("predefinedAcl"))
    #expect(h.call("PUT", path, "data").status == 200)
    #expect(entities(h.call("GET", "/storage/v1/b/acl-bkt/o/r/acl")).contains("allUsers"))
    #expect(h.call("POST", "/upload/storage/v1/b/acl-bkt/o?uploadType=resumable&name=r2&predefinedAcl=nope", "{}").status == 400)
  }

  @Test func uniformBucketLevelAccessRefusesACLCalls() {
    let body = #"{"name":"ubla-bkt","iamConfiguration":{"uniformBucketLevelAccess":{"enabled":true}}}"#
    #expect(h.call("POST", "/storage/v1/b", body).status == 200)
    #expect(h.call("POST", "/upload/storage/v1/b/ubla-bkt/o?uploadType=media&name=a", "a").status == 200)
    for (method, path) in [
      ("GET", "/storage/v1/b/ubla-bkt/acl"), ("GET", "/storage/v1/b/ubla-bkt/defaultObjectAcl"),
      ("GET", "/storage/v1/b/ubla-bkt/o/a/acl"), ("DELETE", "/storage/v1/b/ubla-bkt/acl/allUsers"),
    ] {
      let reply = h.call(method, path)
      #expect(reply.status == 400, "\(method) \(path)")
      #expect(reply.text.contains("uniform bucket-level access"))
    }
    #expect(h.call("PATCH", "/storage/v1/b/ubla-bkt?predefinedAcl=publicRead", "{}").status == 400)
  }

  @Test func storageClassIsSetOnInsertKeptAndChangedByRewrite() {
    #expect(h.call("POST", "/storage/v1/b", #"{"name":"cold-bkt","storageClass":"COLDLINE"}"#).status == 200)
    #expect(h.call("POST", "/upload/storage/v1/b/cold-bkt/o?uploadType=media&name=d", "d").string("storageClass") == "COLDLINE")
    let multipart = "--b\r\ncontent-type: application/json\r\n\r\n{\"name\":\"n\",\"storageClass\":\"archive\"}\r\n--b\r\n\r\nxx\r\n--b--\r\n"
    let uploaded = h.call(
      "POST", "/upload/storage/v1/b/cold-bkt/o?uploadType=multipart", multipart,
      headers: [("content-type", "multipart/related; boundary=b")])
    #expect(uploaded.string("storageClass") == "ARCHIVE")
    let rewritten = h.call("POST", "/storage/v1/b/cold-bkt/o/n/rewriteTo/b/acl-bkt/o/n2", #"{"storageClass":"NEARLINE"}"#)
    #expect(rewritten.status == 200)
    #expect(rewritten.json["resource"]?["storageClass"] == .string("NEARLINE"))
    // A metadata update cannot change it (a rewrite does); download headers carry it.
    #expect(h.call("PATCH", "/storage/v1/b/cold-bkt/o/n", #"{"storageClass":"STANDARD"}"#).string("storageClass") == "ARCHIVE")
    #expect(h.call("GET", "/storage/v1/b/cold-bkt/o/n?alt=media").header("x-goog-storage-class") == "ARCHIVE")
    #expect(h.call("POST", "/upload/storage/v1/b/cold-bkt/o?uploadType=multipart", multipart.replacingOccurrences(of: "archive", with: "hot"),
      headers: [("content-type", "multipart/related; boundary=b")]).status == 400)
  }

  @Test func xmlStorageClassAndCannedACLHeaders() {
    let put = h.call(
      "PUT", "/acl-bkt/xml.txt", "xml", headers: [("x-goog-storage-class", "nearline"), ("x-goog-acl", "public-read")])
    #expect(put.status == 200)
    #expect(put.header("x-goog-storage-class") == "NEARLINE")
    #expect(h.call("HEAD", "/acl-bkt/xml.txt").header("x-goog-storage-class") == "NEARLINE")
    #expect(entities(h.call("GET", "/storage/v1/b/acl-bkt/o/xml.txt/acl")).contains("allUsers"))
    #expect(h.call("PUT", "/acl-bkt/bad.txt", "x", headers: [("x-goog-storage-class", "FROZEN")]).status == 400)
    #expect(h.call("PUT", "/acl-bkt/bad.txt", "x", headers: [("x-goog-acl", "everyone-writes")]).status == 400)
    #expect(h.call("HEAD", "/acl-bkt/bad.txt").status == 404)
  }

  @Test func iamPolicyGetSetWithEtag() {
    let policy = h.call("GET", "/storage/v1/b/acl-bkt/iam")
    #expect(policy.status == 200)
    #expect(policy.string("kind") == "storage#policy")
    #expect(policy.string("resourceId") == "projects/_/buckets/acl-bkt")
    let etag = policy.string("etag") ?? ""
    let body = #"{"bindings":[{"role":"roles/storage.objectViewer","members":["allUsers"]}],"etag":"\#(etag)"}"#
    let set = h.call("PUT", "/storage/v1/b/acl-bkt/iam", body)
    #expect(set.status == 200)
    #expect(set.string("etag") != etag)
    #expect(h.call("GET", "/storage/v1/b/acl-bkt/iam").text.contains("roles/storage.objectViewer"))
    // The old etag no longer matches: 412, and the policy is unchanged.
    let stale = h.call("PUT", "/storage/v1/b/acl-bkt/iam", body.replacingOccurrences(of: "allUsers", with: "allAuthenticatedUsers"))
    #expect(stale.status == 412)
    #expect(!h.call("GET", "/storage/v1/b/acl-bkt/iam").text.contains("allAuthenticatedUsers"))
    #expect(h.call("PUT", "/storage/v1/b/acl-bkt/iam", #"{"bindings":[{"role":"x","members":[]}]}"#).status == 400)
    #expect(h.call("PUT", "/storage/v1/b/nobucket/iam", "{}").status == 404)
    // Conditions need version 3, and reading them needs optionsRequestedPolicyVersion=3.
    let conditional = #"{"version":3,"bindings":[{"role":"roles/storage.objectViewer","members":["allUsers"],"condition":{"title":"t","expression":"true"}}]}"#
    #expect(h.call("PUT", "/storage/v1/b/acl-bkt/iam", conditional).status == 200)
    #expect(h.call("GET", "/storage/v1/b/acl-bkt/iam").status == 400)
    #expect(h.call("GET", "/storage/v1/b/acl-bkt/iam?optionsRequestedPolicyVersion=3").json["version"] == .number("3"))
  }

  @Test func testPermissionsGrantsEveryValidStoragePermission() {
    let reply = h.call(
      "GET", "/storage/v1/b/acl-bkt/iam/testPermissions?permissions=storage.buckets.get&permissions=storage.objects.list")
    #expect(reply.status == 200)
    #expect(reply.string("kind") == "storage#testIamPermissionsResponse")
    #expect(reply.json["permissions"] == .array([.string("storage.buckets.get"), .string("storage.objects.list")]))
    #expect(h.call("GET", "/storage/v1/b/acl-bkt/iam/testPermissions?permissions=compute.instances.get").status == 400)
    #expect(h.call("GET", "/storage/v1/b/acl-bkt/iam/testPermissions").status == 400)
    let many = (0...StorageAPI.maxTestedPermissions).map { _ in "permissions=storage.objects.get" }.joined(separator: "&")
    #expect(h.call("GET", "/storage/v1/b/acl-bkt/iam/testPermissions?" + many).status == 400)
    #expect(h.call("GET", "/storage/v1/b/nobucket/iam/testPermissions?permissions=storage.objects.get").status == 404)
  }

  @Test func routesOfTheNewResources() throws {
    func resource(_ path: String) throws -> Resource? { try Route.match(rawPath: path[...])?.resource }
    #expect(try resource("/storage/v1/b/b1/o/a%2Fb/acl") == .client(.objectACL(bucket: "b1", name: "a/b", entity: nil)))
    #expect(
      try resource("/storage/v1/b/b1/o/a%2Fb/acl/user-x%40y") == .client(.objectACL(bucket: "b1", name: "a/b", entity: "user-x@y")))
    #expect(try resource("/storage/v1/b/b1/o/acl") == .object(bucket: "b1", name: "acl"))
    #expect(try resource("/storage/v1/b/b1/defaultObjectAcl/allUsers") == .client(.bucketACL(bucket: "b1", entity: "allUsers", defaultObject: true)))
    #expect(try resource("/storage/v1/b/b1/iam/testPermissions") == .client(.iam(bucket: "b1", testPermissions: true)))
    #expect(try resource("/storage/v1/b/b1/iam/other") == nil)
    #expect(try resource("/storage/v1/b/b1/notificationConfigs/7") == .client(.notifications(bucket: "b1", id: "7")))
    #expect(try resource("/storage/v1/projects/p1/hmacKeys/GOOG1") == .client(.hmacKeys(project: "p1", accessID: "GOOG1")))
    #expect(try resource("/storage/v1/projects/p1/serviceAccount") == .client(.serviceAccount(project: "p1")))
    #expect(try resource("/storage/v1/projects/p1/other") == nil)
    #expect(throws: APIError.self) { try Route.match(rawPath: "/storage/v1/b/b1/acl/%zz") }
  }
}
