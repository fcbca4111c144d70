import EmulatorHTTP
import EmulatorStorage

/// A small XML document builder: elements and escaped text, nothing else.
struct XMLWriter {
  private(set) var text = "<?xml version='1.0' encoding='UTF-8'?>"

  mutating func open(_ tag: String, attributes: String = "") {
    text += "<" + tag + (attributes.isEmpty ? "" : " " + attributes) + ">"
  }

  mutating func close(_ tag: String) { text += "</" + tag + ">" }

  mutating func element(_ tag: String, _ value: String) {
    text += "<" + tag + ">" + Self.escape(value) + "</" + tag + ">"
  }

  /// `&`, `<`, `>`, quotes escaped; control characters XML 1.0 cannot carry become `&#xN;`
  /// (then invalid XML 1.0, as GCS writes them; names with them are rare).
  static func escape(_ value: String) -> String {
    var out = ""
    out.reserveCapacity(value.utf8.count)
    for scalar in value.unicodeScalars {
      switch scalar {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&apos;"
      default:
        if scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r" {
          out += "&#x" + String(scalar.value, radix: 16) + ";"
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    return out
  }

  var bytes: [UInt8] { Array(text.utf8) }

  func response(status: Int = 200, headers: HTTPHeaders = [:]) -> HTTPResponse {
    var headers = headers
    headers.set("content-type", "application/xml; charset=UTF-8")
    return HTTPResponse(status: status, headers: headers, body: bytes)
  }
}

/// GCS's XML error document: `<Error><Code>NoSuchKey</Code><Message>…</Message></Error>`.
struct XMLError: Error {
  var status: Int
  var code: String
  var message: String
  var details: String?
  var headers: HTTPHeaders = [:]

  init(_ status: Int, _ code: String, _ message: String, details: String? = nil) {
    self.status = status
    self.code = code
    self.message = message
    self.details = details
  }

  /// The XML code for an error the JSON side would answer.
  init(_ error: APIError) {
    let code: String
    var message = error.message
    switch error.status {
    case 304: code = "NotModified"
    case 400:
      code = error.message.contains("doesn't match calculated") ? "BadDigest" : "InvalidArgument"
    case 403: code = "AccessDenied"
    case 404:
      if error.message.hasPrefix("The specified bucket does not exist") {
        code = "NoSuchBucket"
        message = "The specified bucket does not exist."
      } else if error.message.hasPrefix("No such upload") {
        code = "NoSuchUpload"
      } else {
        code = "NoSuchKey"
        message = "The specified key does not exist."
      }
    case 405: code = "MethodNotAllowed"
    case 409:
      code = error.message.contains("not empty") ? "BucketNotEmpty" : "BucketAlreadyOwnedByYou"
    case 412: code = "PreconditionFailed"
    case 413: code = "EntityTooLarge"
    case 416: code = "InvalidRange"
    case 429: code = "TooManyRequests"
    case 507: code = "InsufficientStorage"
    default: code = error.status >= 500 ? "InternalError" : "InvalidArgument"
    }
    self.init(error.status, code, message, details: error.status == 404 || error.status == 412 ? error.message : nil)
    headers = error.headers
  }

  init(_ error: StorageError) { self.init(APIError(error)) }

  var response: HTTPResponse {
    if status == 304 { return HTTPResponse(.notModified, headers: headers) }
    var xml = XMLWriter()
    xml.open("Error")
    xml.element("Code", code)
    xml.element("Message", message)
    if let details { xml.element("Details", details) }
    xml.close("Error")
    var headers = self.headers
    headers.remove("content-range")
    if status == 416, let range = self.headers["content-range"] { headers.set("content-range", range) }
    return xml.response(status: status, headers: headers)
  }
}
