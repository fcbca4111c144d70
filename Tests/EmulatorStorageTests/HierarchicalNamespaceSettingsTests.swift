import Testing

@testable import EmulatorStorage

/// `hierarchicalNamespace` in the bucket settings, from the JSON a client sends, without the API.
@Suite struct HierarchicalNamespaceSettingsTests {
  func settings(_ text: String, on current: JSONValue? = nil, mode: BucketSettings.Mode = .insert) throws
    -> JSONValue
  {
    try BucketSettings.apply(JSONValue.parse(Array(text.utf8)), to: current, mode: mode, now: 0)
  }

  func refusal(_ text: String, on current: JSONValue? = nil, mode: BucketSettings.Mode = .insert) -> String {
    do {
      _ = try settings(text, on: current, mode: mode)
      return "accepted"
    } catch {
      return "\(error)"
    }
  }

  static let hnsBody =
    #"{"hierarchicalNamespace":{"enabled":true},"iamConfiguration":{"uniformBucketLevelAccess":{"enabled":true}}}"#

  @Test func enabledWithUniformAccessIsKept() throws {
    let kept = try settings(Self.hnsBody)
    #expect(kept["hierarchicalNamespace"]?["enabled"] == .bool(true))
  }

  @Test func enabledWithoutUniformAccessIsRefused() {
    #expect(refusal(#"{"hierarchicalNamespace":{"enabled":true}}"#).contains("requires uniform bucket-level access"))
  }

  @Test func cannotBeTurnedOnOrOffAfterCreation() throws {
    let flat = try settings(#"{"iamConfiguration":{"uniformBucketLevelAccess":{"enabled":true}}}"#)
    #expect(refusal(Self.hnsBody, on: flat, mode: .patch).contains("cannot be changed"))
    let hns = try settings(Self.hnsBody)
    #expect(refusal(#"{"hierarchicalNamespace":{"enabled":false}}"#, on: hns, mode: .patch).contains("cannot be changed"))
  }

  @Test func patchAndPutWithoutTheFieldKeepIt() throws {
    let hns = try settings(Self.hnsBody)
    let patched = try settings(#"{"labels":{"a":"1"}}"#, on: hns, mode: .patch)
    #expect(patched["hierarchicalNamespace"]?["enabled"] == .bool(true))
    let replaced = try settings(
      #"{"iamConfiguration":{"uniformBucketLevelAccess":{"enabled":true}}}"#, on: hns, mode: .replace)
    #expect(replaced["hierarchicalNamespace"]?["enabled"] == .bool(true))
  }

  @Test func malformedValueIsRefused() {
    #expect(refusal(#"{"hierarchicalNamespace":{"enabled":"yes"}}"#).contains("hierarchicalNamespace must be"))
  }
}
