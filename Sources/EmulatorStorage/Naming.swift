/// Rules for object and bucket names.
public enum Naming {
  /// GCS object-name rules: 1–1024 bytes of UTF-8, no CR or LF, not `.` or `..`. Everything else
  /// (`a/`, `../x`, `%2F`, `.metadata`) is a distinct, valid, opaque name.
  public static func validateObjectName(_ name: String) throws(StorageError) {
    let count = name.utf8.count
    if count == 0 { throw StorageError.required("Object name is required (1 to 1024 bytes of UTF-8).") }
    if count > 1024 {
      throw StorageError.invalid("Object name is \(count) bytes long; the limit is 1024 bytes of UTF-8.")
    }
    if name.utf8.contains(where: { $0 == 10 || $0 == 13 }) {
      throw StorageError.invalid("Object name must not contain carriage return or line feed characters.")
    }
    if name == "." || name == ".." {
      throw StorageError.invalid("Object name must not be '.' or '..'.")
    }
  }

  /// Bucket names: 3–222 characters of lower-case letters, digits, `-`, `_` and `.`, starting and
  /// ending with a letter or digit (the GCS rule, which also keeps every bucket a safe folder name).
  public static func validateBucketName(_ name: String) throws(StorageError) {
    let bytes = Array(name.utf8)
    guard bytes.count >= 3 && bytes.count <= 222 else {
      throw StorageError.invalid("Bucket name '\(name)' must be 3 to 222 characters long.")
    }
    func alphanumeric(_ byte: UInt8) -> Bool { (48...57).contains(byte) || (97...122).contains(byte) }
    guard bytes.allSatisfy({ alphanumeric($0) || $0 == 45 || $0 == 95 || $0 == 46 }) else {
      throw StorageError.invalid(
        "Bucket name '\(name)' may contain only lower-case letters, digits, '-', '_' and '.'.")
    }
    guard alphanumeric(bytes.first!), alphanumeric(bytes.last!) else {
      throw StorageError.invalid("Bucket name '\(name)' must start and end with a letter or digit.")
    }
  }
}
