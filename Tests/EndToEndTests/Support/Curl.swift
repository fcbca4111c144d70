import CCurl
import Foundation

/// What libcurl received.
struct CurlReply: Sendable {
  var status: Int
  var headers: [(String, String)]
  var body: [UInt8]
  /// Connections libcurl had to open for this transfer (0 when it reused one).
  var newConnections: Int

  var text: String { String(decoding: body, as: UTF8.self) }
  var json: [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
  }

  func header(_ name: String) -> String? {
    headers.last { $0.0.lowercased() == name.lowercased() }?.1
  }
}

struct CurlError: Error, CustomStringConvertible {
  var code: UInt32
  var description: String { "libcurl error \(code): \(String(cString: curl_easy_strerror(CURLcode(code))))" }
}

private final class Collected {
  var body: [UInt8] = []
  var headers: [(String, String)] = []
}

/// A libcurl easy handle: one client connection, reused (keep-alive) across `perform` calls.
final class Curl {
  private static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
  private let handle: UnsafeMutableRawPointer

  init() {
    precondition(Self.initialized)
    handle = curl_easy_init()
  }

  deinit { curl_easy_cleanup(handle) }

  func perform(
    _ method: String, _ url: String, body: [UInt8]? = nil, headers: [String] = [], timeout: Int = 30
  ) throws -> CurlReply {
    curl_easy_reset(handle)
    let collected = Collected()
    let box = Unmanaged.passRetained(collected)
    defer { box.release() }
    se_setopt_string(handle, CURLOPT_URL, url)
    se_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
    se_setopt_long(handle, CURLOPT_TIMEOUT, timeout)
    if method == "HEAD" {
      se_setopt_long(handle, CURLOPT_NOBODY, 1)
    } else if method != "GET" || body != nil {
      se_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method)
    }
    var list: UnsafeMutablePointer<curl_slist>?
    for header in headers { list = curl_slist_append(list, header) }
    defer { curl_slist_free_all(list) }
    se_setopt_pointer(handle, CURLOPT_HTTPHEADER, list.map { UnsafeMutableRawPointer($0) })
    let write: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
      data, size, count, user in
      let target = Unmanaged<Collected>.fromOpaque(user!).takeUnretainedValue()
      if let data { target.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size * count)) }
      return size * count
    }
    let header: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
      data, size, count, user in
      let target = Unmanaged<Collected>.fromOpaque(user!).takeUnretainedValue()
      guard let data else { return size * count }
      let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
      if line.hasPrefix("HTTP/") {
        target.headers = []
      } else if let colon = line.firstIndex(of: ":") {
        target.headers.append(
          (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)))
      }
      return size * count
    }
    se_setopt_write_function(handle, CURLOPT_WRITEFUNCTION, write)
    se_setopt_pointer(handle, CURLOPT_WRITEDATA, box.toOpaque())
    se_setopt_write_function(handle, CURLOPT_HEADERFUNCTION, header)
    se_setopt_pointer(handle, CURLOPT_HEADERDATA, box.toOpaque())
    let payload = body ?? []
    let code: CURLcode = payload.withUnsafeBytes { bytes in
      if body != nil {
        se_setopt_long(handle, CURLOPT_POSTFIELDSIZE, payload.count)
        se_setopt_pointer(
          handle, CURLOPT_POSTFIELDS,
          UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
      }
      return curl_easy_perform(handle)
    }
    guard code == CURLE_OK else { throw CurlError(code: code.rawValue) }
    var status = 0
    var connects = 0
    se_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
    se_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &connects)
    return CurlReply(status: status, headers: collected.headers, body: collected.body, newConnections: connects)
  }

  /// One request on a fresh handle.
  static func request(
    _ method: String, _ url: String, body: String? = nil, headers: [String] = []
  ) throws -> CurlReply {
    try Curl().perform(method, url, body: body.map { Array($0.utf8) }, headers: headers)
  }
}
