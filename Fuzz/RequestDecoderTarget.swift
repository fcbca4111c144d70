// Fuzz target `request-decoder`: the HTTP request decoder (see Fuzz/Main.swift).
//
// Oracle: the decoder (with the header-parameter parser on every header it decodes, and the
// browser policies' parsing of Host, Origin and Access-Control-Request-Headers) must never
// crash or trap, and feeding the same bytes whole or in small
// pieces must give the same requests (heads and bodies) and the same error status.

private struct Outcome: Equatable {
  var requests: [String] = []
  var error: Int?
}

private func decode(_ bytes: UnsafeBufferPointer<UInt8>, pieceSize: Int) -> Outcome {
  var limits = HTTPLimits()
  limits.maxRequestLineBytes = 256
  limits.maxHeaderBytes = 1024
  limits.maxHeaderCount = 16
  limits.maxBodyBytes = 4096
  var decoder = HTTPRequestDecoder(limits: limits)
  decoder.spoolThreshold = 64
  var outcome = Outcome()
  var spooled: [UInt8] = []
  var offset = 0
  repeat {
    let end = min(bytes.count, offset + pieceSize)
    decoder.feed(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[offset..<end])))
    offset = end
    do {
      loop: while true {
        switch try decoder.next() {
        case .needMoreData: break loop
        case .continueExpected: continue
        case .bodyPart(let part): spooled += part
        case .request(let request):
          let head = request.head
          _ = try? QueryParameters(head.rawQuery)
          _ = URLCoding.percentDecode(head.rawPath)
          for field in head.headers {
            _ = try? HeaderParameters(parsing: field.value).multipartBoundary()
          }
          let headers = head.headers.map { "\($0.name)=\($0.value)" }.joined(separator: "|")
          // The browser policies read Host, Origin and Access-Control-Request-Headers as sent.
          let policies = [
            HostPolicy(restricted: true).allows(head.headers["host"]),
            OriginPolicy().allows(head.headers["origin"] ?? ""),
            OriginPolicy.canonical(head.headers["origin"] ?? "") != nil,
          ]
          let asked = CrossOriginHandler.tokens(head.headers.values("access-control-request-headers"))
          outcome.requests.append(
            "\(head.method) \(head.target) \(head.version) \(head.keepAlive) \(headers) \(spooled + request.body)"
              + " \(policies) \(asked)")
          spooled = []
        }
      }
    } catch {
      outcome.error = error.status
      return outcome
    }
  } while offset < bytes.count
  return outcome
}

func fuzzRequestDecoder(_ bytes: UnsafeBufferPointer<UInt8>) {
  let size = bytes.count
  let whole = decode(bytes, pieceSize: max(size, 1))
  let pieceSize = size == 0 ? 1 : Int(bytes[0] % 7) + 1
  let pieces = decode(bytes, pieceSize: pieceSize)
  if whole != pieces {
    fatalError("whole and piecewise decoding differ: \(whole) vs \(pieces)")
  }
}
