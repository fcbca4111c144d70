/// Which `Host` names the server answers, against DNS rebinding: a hostile page whose own domain
/// is made to resolve to 127.0.0.1 reaches a loopback server as "same origin", but its requests
/// still carry that domain in `Host`.
///
/// A restricted policy answers a `Host` that is a loopback name (`localhost`), an IP literal
/// (IPv4 dotted quad or bracketed IPv6, any address: no DNS is involved) or one of the allowed
/// names, on any port; other names get 403. A request without `Host` (HTTP/1.0) is answered.
public struct HostPolicy: Sendable, Equatable {
  /// Whether `Host` is checked at all.
  public var restricted: Bool
  /// Extra names answered, lower-cased, without a port.
  public private(set) var allowedNames: Set<String> = []

  public init(restricted: Bool) {
    self.restricted = restricted
  }

  /// The policy for a listening address: restricted on a loopback address (`127.x.y.z`, `::1`,
  /// `localhost`); not restricted elsewhere (`0.0.0.0` in a container) unless names are given.
  /// A name `*` lifts the restriction.
  public static func forListening(on address: String, allowedHosts: [String]) throws(HostPolicyError) -> HostPolicy {
    let trimmed = address.hasPrefix("[") && address.hasSuffix("]") ? String(address.dropFirst().dropLast()) : address
    let loopback = trimmed == "::1" || isLoopbackName(Substring(trimmed).utf8)
    var policy = HostPolicy(restricted: loopback || !allowedHosts.isEmpty)
    for name in allowedHosts {
      let lower = name.trimmingASCIIWhitespace().lowercased()
      if lower == "*" {
        policy.restricted = false
        continue
      }
      guard !lower.isEmpty, lower.utf8.count <= 253,
        lower.utf8.allSatisfy({
          OriginPolicy.isLetter($0) || OriginPolicy.isDigit($0) || $0 == UInt8(ascii: "-")
            || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_")
        })
      else { throw HostPolicyError(name) }
      policy.allowedNames.insert(lower)
    }
    return policy
  }

  /// Whether a request with this `Host` value (nil when absent) is answered. Runs for every
  /// request: byte loops over the value's contiguous UTF-8.
  public func allows(_ host: String?) -> Bool {
    guard restricted, let host else { return true }
    return recognizes(host)
  }

  /// Whether `host` is a loopback name, an IP literal or an allowed name (each with an optional
  /// port), whether or not the policy is restricted: a name no DNS rebinding can forge.
  public func recognizes(_ host: String) -> Bool {
    var host = host
    return host.withUTF8 { bytes in
      if bytes.isEmpty { return true }
      let nameEnd: Int
      if bytes[0] == UInt8(ascii: "[") {
        guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return false }
        nameEnd = close + 1
      } else {
        nameEnd = bytes.firstIndex(of: UInt8(ascii: ":")) ?? bytes.count
      }
      guard OriginPolicy.isPortSuffix(bytes[nameEnd...]) else { return false }
      let name = bytes[..<nameEnd]
      if bytes[0] == UInt8(ascii: "[") { return Self.isIPv6Literal(name) }
      if Self.isIPv4(name) != nil || Self.isLoopbackName(name) { return true }
      if allowedNames.isEmpty { return false }
      var lowered = String(decoding: name, as: UTF8.self).lowercased()
      if lowered.hasSuffix(".") { lowered.removeLast() }  // a fully qualified `name.`
      return allowedNames.contains(lowered)
    }
  }

  /// `localhost` or a name under it (`bucket.localhost`, which RFC 6761 reserves for loopback and
  /// the XML API's virtual-host style uses), any case, with or without a final dot; a 127.0.0.0/8
  /// address; or `[::1]`.
  static func isLoopbackName<Bytes: BidirectionalCollection<UInt8>>(_ host: Bytes, subdomains: Bool = true) -> Bool {
    if let first = isIPv4(host) { return first == 127 }
    if host.elementsEqual("[::1]".utf8) { return true }
    // Compared from the end, without copying (this runs on every request).
    var bytes = host.reversed().makeIterator()
    var next = bytes.next()
    if next == UInt8(ascii: ".") { next = bytes.next() }  // `localhost.`
    for expected in "localhost".utf8.reversed() {
      guard let byte = next, OriginPolicy.lowerASCII(byte) == expected else { return false }
      next = bytes.next()
    }
    guard let separator = next else { return true }  // exactly `localhost`
    guard subdomains else { return false }
    // A subdomain: `<label>.localhost`, never `evillocalhost` or `.localhost`.
    return separator == UInt8(ascii: ".") && bytes.next() != nil
  }

  /// A strict dotted quad (four decimal numbers 0...255, no leading zeros): its first number.
  static func isIPv4<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> UInt8? {
    var dots = 0
    var value = 0
    var digits = 0
    var leadingZero = false
    var first = 0
    for byte in bytes {
      if byte == UInt8(ascii: ".") {
        guard digits > 0, dots < 3 else { return nil }
        if dots == 0 { first = value }
        dots += 1
        value = 0
        digits = 0
        continue
      }
      guard OriginPolicy.isDigit(byte), digits < 3, !(digits == 1 && leadingZero) else { return nil }
      if digits == 0 { leadingZero = byte == UInt8(ascii: "0") }
      value = value * 10 + Int(byte - UInt8(ascii: "0"))
      digits += 1
      guard value <= 255 else { return nil }
    }
    guard dots == 3, digits > 0 else { return nil }
    return UInt8(first)
  }

  /// `[` hex digits, colons and dots (an embedded IPv4), `]`: the form of an IPv6 address in a URL.
  static func isIPv6Literal<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> Bool {
    guard bytes.count >= 4, bytes.first == UInt8(ascii: "["), bytes.last == UInt8(ascii: "]") else { return false }
    let inner = bytes.dropFirst().dropLast()
    return inner.contains(UInt8(ascii: ":"))
      && inner.allSatisfy {
        OriginPolicy.isDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".")
          || (OriginPolicy.lowerASCII($0) >= UInt8(ascii: "a") && OriginPolicy.lowerASCII($0) <= UInt8(ascii: "f"))
      }
  }
}

/// A configured allowed host that is not a DNS name.
public struct HostPolicyError: Error, Sendable, Equatable, CustomStringConvertible {
  public var name: String
  public init(_ name: String) { self.name = name }
  public var description: String {
    "'\(name)' is not a host name: expected letters, digits, '-', '.' and '_' (no port), or *"
  }
}
