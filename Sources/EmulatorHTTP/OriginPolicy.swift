/// Which web origins may use the server from a browser (CORS, https://fetch.spec.whatwg.org).
///
/// By default only loopback origins are allowed: `http` or `https` with the host `localhost`, an
/// address in 127.0.0.0/8 or `[::1]`, on any port, which is where local web apps run. Exact
/// origins (or `*`, any origin) can be added.
public struct OriginPolicy: Sendable, Equatable {
  /// Allow `http(s)://localhost`, `http(s)://127.x.y.z` and `http(s)://[::1]` on any port.
  public var allowsLoopback = true
  /// Added origins, in their canonical (lower-case) form.
  public private(set) var origins: Set<String> = []
  /// `*` was added: every origin is allowed.
  public private(set) var allowsAny = false

  public init() {}

  /// Adds an origin: `*`, `null`, or `scheme://host[:port]` (one trailing `/` is tolerated).
  public mutating func allow(_ origin: String) throws(OriginPolicyError) {
    let text = origin.trimmingASCIIWhitespace()
    if text == "*" {
      allowsAny = true
      return
    }
    guard let canonical = Self.canonical(text) else { throw OriginPolicyError(origin) }
    origins.insert(canonical)
  }

  /// Whether a request's `Origin` value is allowed.
  public func allows(_ origin: String) -> Bool {
    if allowsAny { return true }
    if allowsLoopback && Self.isLoopback(origin) { return true }
    if origins.isEmpty { return false }
    return origins.contains(origin.lowercased())
  }

  /// `null`, or `scheme://host[:port]` lower-cased, without a trailing `/`; nil when malformed.
  static func canonical(_ text: String) -> String? {
    var lower = text.lowercased()
    if lower == "null" { return lower }
    if lower.hasSuffix("/") { lower.removeLast() }
    guard let separator = lower.utf8.firstRange(of: "://".utf8) else { return nil }
    let scheme = lower.utf8[..<separator.lowerBound]
    let authority = lower.utf8[separator.upperBound...]
    guard let first = scheme.first, isLetter(first),
      scheme.allSatisfy({
        isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
      }),
      !authority.isEmpty,
      authority.allSatisfy({
        $0 > 32 && $0 < 127 && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#")
          && $0 != UInt8(ascii: "@") && $0 != UInt8(ascii: ",")
      })
    else { return nil }
    return lower
  }

  /// `http://` or `https://`, then `localhost`, a 127.0.0.0/8 address or `[::1]`, then an optional
  /// `:port`, and nothing else (an origin never has a path). Case-insensitive.
  public static func isLoopback(_ origin: String) -> Bool {
    var bytes = origin.utf8[...]
    if startsCaseInsensitive(bytes, "http://") {
      bytes = bytes.dropFirst(7)
    } else if startsCaseInsensitive(bytes, "https://") {
      bytes = bytes.dropFirst(8)
    } else {
      return false
    }
    let host: Substring.UTF8View
    let afterHost: Substring.UTF8View
    let text = Substring(bytes)
    if bytes.first == UInt8(ascii: "[") {
      guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return false }
      host = text.utf8[text.utf8.startIndex...close]
      afterHost = text.utf8[text.utf8.index(after: close)...]
    } else {
      let colon = bytes.firstIndex(of: UInt8(ascii: ":")) ?? bytes.endIndex
      host = text.utf8[..<colon]
      afterHost = text.utf8[colon...]
    }
    guard isPortSuffix(afterHost) else { return false }
    // Origins stay exact: `localhost`, not the names under it (the Host check accepts those).
    return HostPolicy.isLoopbackName(host, subdomains: false)
  }

  /// Empty, or `:` followed by 1 to 5 digits that make at most 65535.
  static func isPortSuffix<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
    if bytes.isEmpty { return true }
    guard bytes.first == UInt8(ascii: ":") else { return false }
    let digits = bytes.dropFirst()
    guard (1...5).contains(digits.count), digits.allSatisfy(isDigit) else { return false }
    var value = 0
    for digit in digits { value = value * 10 + Int(digit - UInt8(ascii: "0")) }
    return value <= 65535
  }

  static func startsCaseInsensitive(_ bytes: Substring.UTF8View, _ prefix: StaticString) -> Bool {
    guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
    var index = bytes.startIndex
    for offset in 0..<prefix.utf8CodeUnitCount {
      if lowerASCII(bytes[index]) != prefix.utf8Start[offset] { return false }
      index = bytes.index(after: index)
    }
    return true
  }

  static func lowerASCII(_ byte: UInt8) -> UInt8 {
    byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
  }

  static func isLetter(_ byte: UInt8) -> Bool {
    (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
  }

  static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}

/// A configured origin that is not `*`, `null` or `scheme://host[:port]`.
public struct OriginPolicyError: Error, Sendable, Equatable, CustomStringConvertible {
  public var origin: String
  public init(_ origin: String) { self.origin = origin }
  public var description: String {
    "'\(origin)' is not an origin: expected scheme://host[:port] (e.g. http://localhost:3000), null or *"
  }
}
