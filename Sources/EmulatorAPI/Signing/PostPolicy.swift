import EmulatorHTTP
import EmulatorStorage
import EmulatorSupport

/// A V4 POST policy form upload (`multipart/form-data` POST to `/<bucket>`): the form's fields,
/// the policy document's conditions, and their check.
struct PostPolicyForm {
  /// Form fields by lower-cased name (GCS matches field names case-insensitively).
  var fields: [String: String] = [:]
  var file: [UInt8] = []
  var fileName: String?
  var fileContentType: String?

  /// At most this many fields besides `file`, each at most `maxFieldBytes`: a form is a handful of
  /// short strings, anything larger is refused before it is looked at.
  static let maxFields = 64
  static let maxFieldBytes = 64 << 10

  init(contentType: String, body: [UInt8]) throws(SignedURLError) {
    let boundary: String
    do throws(HeaderParameterError) {
      let header = try HeaderParameters(parsing: contentType)
      guard header.value.lowercased() == "multipart/form-data" else {
        throw HeaderParameterError("a POST policy upload must be multipart/form-data, got '\(header.value)'")
      }
      boundary = try header.multipartBoundary()
    } catch {
      throw .invalid("Bad Content-Type: \(error.message).")
    }
    let parts: [MultipartRelated.Part]
    do {
      // The fields come first (64 KiB each at most), then the file; at most maxFields + 1 parts.
      parts = try MultipartRelated.parse(
        body, boundary: boundary,
        limits: MultipartRelated.Limits(maxFirstPartBytes: Self.maxFieldBytes, maxParts: Self.maxFields + 1))
    } catch {
      throw .invalid(error.message)
    }
    var sawFile = false
    for part in parts {
      guard !sawFile else { throw .invalid("The file field must be the last field of the form.") }
      guard let disposition = part.headers["content-disposition"] else {
        throw .invalid("A form part has no Content-Disposition.")
      }
      let header: HeaderParameters
      do {
        header = try HeaderParameters(parsing: disposition)
      } catch {
        throw .invalid("Bad Content-Disposition of a form part: \(error.message).")
      }
      guard header.value.lowercased() == "form-data", let name = header["name"]?.lowercased(), !name.isEmpty else {
        throw .invalid("A form part's Content-Disposition must be form-data with a name.")
      }
      if name == "file" {
        sawFile = true
        file = Array(body[part.range])
        fileName = header["filename"]
        fileContentType = part.headers["content-type"]
        continue
      }
      guard fields.count < Self.maxFields else { throw .invalid("The form has more than \(Self.maxFields) fields.") }
      guard part.range.count <= Self.maxFieldBytes, let value = String(validating: body[part.range], as: UTF8.self)
      else {
        throw .invalid("The form field '\(name)' is over \(Self.maxFieldBytes) bytes or not UTF-8.")
      }
      guard fields[name] == nil else { throw .invalid("The form field '\(name)' is given twice.") }
      fields[name] = value
    }
    guard sawFile else { throw .invalid("The form has no file field.") }
  }

  func required(_ name: String) throws(SignedURLError) -> String {
    guard let value = fields[name], !value.isEmpty else { throw .invalid("The form has no '\(name)' field.") }
    return value
  }

  /// The object name: the `key` field, with `${filename}` replaced by the file's name.
  func objectName() throws(SignedURLError) -> String {
    let key = try required("key")
    return key.replacing("${filename}", with: fileName ?? "")
  }

  /// Checks the decoded policy document: not expired, each condition met, and every form field
  /// (but the signature, the policy, the file and `x-ignore-*`) named by a condition.
  /// Conditions see the `key` field as sent (`${filename}` unreplaced), as the client signed it.
  func check(policy: JSONValue, bucket: String, now: Int64) throws(SignedURLError) {
    guard case .object = policy, let expiration = policy["expiration"]?.stringValue else {
      throw SignedURLError(
        400, "InvalidPolicyDocument", "The policy document is not valid.", details: "It needs an expiration.")
    }
    guard let expiresMs = Timestamp.parse(expiration) else {
      throw SignedURLError(
        400, "InvalidPolicyDocument", "The policy document is not valid.",
        details: "expiration '\(expiration)' is not an RFC 3339 time.")
    }
    if now * 1000 > expiresMs { throw .expired("The policy expired at \(expiration).") }
    guard case .array(let conditions) = policy["conditions"] ?? .null else {
      throw SignedURLError(
        400, "InvalidPolicyDocument", "The policy document is not valid.", details: "It needs a conditions array.")
    }
    var referenced: Set<String> = []
    func value(of field: String) -> String? {
      switch field {
      case "bucket": bucket
      default: fields[field]
      }
    }
    func failed(_ condition: String) -> SignedURLError {
      SignedURLError(
        403, "AccessDenied", "Access denied.",
        details: "Invalid according to Policy: Policy Condition failed: \(condition)")
    }
    let unknown = SignedURLError(
      400, "InvalidPolicyDocument", "The policy document is not valid.",
      details:
        "Unknown condition; use {\"field\": \"value\"}, [\"eq\"|\"starts-with\", \"$field\", \"value\"] or [\"content-length-range\", min, max]."
    )
    for condition in conditions {
      switch condition {
      case .object(let members) where members.count == 1:
        let name = members[0].0.lowercased()
        guard let expected = members[0].1.stringValue else {
          throw SignedURLError(
            400, "InvalidPolicyDocument", "The policy document is not valid.",
            details: "{\"\(name)\": …} needs a string.")
        }
        referenced.insert(name)
        if value(of: name) != expected { throw failed("{\"\(name)\": \"\(expected)\"}") }
      case .array(let items) where items.count == 3:
        guard let operation = items[0].stringValue?.lowercased() else { throw unknown }
        if operation == "content-length-range" {
          guard let low = Self.integer(items[1]), let high = Self.integer(items[2]) else {
            throw SignedURLError(
              400, "InvalidPolicyDocument", "The policy document is not valid.",
              details: "content-length-range needs two integers.")
          }
          if file.count > high {
            throw SignedURLError(
              400, "EntityTooLarge",
              "Your proposed upload is larger than the maximum object size specified in your Policy Document.",
              details: "Content-length exceeds upper bound on range (\(file.count) > \(high)).")
          }
          if file.count < low {
            throw SignedURLError(
              400, "EntityTooSmall",
              "Your proposed upload is smaller than the minimum object size specified in your Policy Document.",
              details: "Content-length is smaller than lower bound on range (\(file.count) < \(low)).")
          }
          continue
        }
        guard operation == "eq" || operation == "starts-with", let target = items[1].stringValue, target.hasPrefix("$"),
          let operand = items[2].stringValue
        else { throw unknown }
        let name = String(target.dropFirst()).lowercased()
        referenced.insert(name)
        let actual = value(of: name) ?? ""
        let met = operation == "eq" ? actual == operand : actual.utf8.starts(with: operand.utf8)
        if !met { throw failed("[\"\(operation)\", \"\(target)\", \"\(operand)\"]") }
      default:
        throw unknown
      }
    }
    let exempt: Set<String> = ["x-goog-signature", "policy", "file", "bucket"]
    let unreferenced = fields.keys.filter {
      !exempt.contains($0) && !$0.hasPrefix("x-ignore-") && !referenced.contains($0)
    }
    if !unreferenced.isEmpty {
      throw SignedURLError(
        403, "AccessDenied", "Access denied.",
        details:
          "Invalid according to Policy: Policy did not reference these fields: \(unreferenced.sorted().joined(separator: ", "))"
      )
    }
  }

  /// A whole number given as a JSON number or a string of digits.
  static func integer(_ value: JSONValue) -> Int? {
    switch value {
    case .number(let literal), .string(let literal): Int(literal)
    default: nil
    }
  }

  /// The metadata the form sets: content type and the other content headers, `x-goog-meta-*`.
  func metadataPatch() -> MetadataPatch {
    var patch = MetadataPatch()
    let simple: [(String, WritableField)] = [
      ("content-type", .contentType), ("cache-control", .cacheControl), ("content-disposition", .contentDisposition),
      ("content-encoding", .contentEncoding), ("content-language", .contentLanguage),
    ]
    for (field, writable) in simple {
      if let value = fields[field], !value.isEmpty { patch.fields[writable] = .set(value) }
    }
    if patch.fields[.contentType] == nil, let type = fileContentType, !type.isEmpty {
      patch.fields[.contentType] = .set(type)
    }
    for (name, value) in fields where name.hasPrefix("x-goog-meta-") && name.count > 12 {
      patch.customUpdates[String(name.dropFirst(12))] = value
    }
    return patch
  }
}
