import EmulatorHTTP
import EmulatorStorage

/// The XML API's `x-goog-storage-class` and `x-goog-acl` (a canned ACL) request headers.
extension StorageAPI {
  /// Sets the patch's storage class and ACL from the headers; bad values are 400 `InvalidArgument`.
  static func xmlAccess(_ headers: HTTPHeaders, into patch: inout MetadataPatch) throws(XMLError) {
    if let value = headers["x-goog-storage-class"], !value.isEmpty {
      guard BucketSettings.storageClasses.contains(value.uppercased()) else {
        throw XMLError(400, "InvalidArgument", "Invalid x-goog-storage-class '\(value)': use STANDARD, NEARLINE, COLDLINE or ARCHIVE.")
      }
      patch.storageClass = value.uppercased()
    }
    if let value = headers["x-goog-acl"], !value.isEmpty {
      // Canned ACLs are the JSON API's predefined ones spelt with dashes: public-read → publicRead.
      let parts = value.split(separator: "-")
      let name = parts.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }.joined()
      do {
        patch.acl = try AccessControl.predefined(name, scope: .object)
      } catch {
        throw XMLError(400, "InvalidArgument", "Invalid canned ACL '\(value)' in x-goog-acl.")
      }
    }
  }
}
