/// What the decoder has to say after being fed bytes.
public enum HTTPDecoderEvent: Sendable {
  /// Nothing complete yet.
  case needMoreData
  /// A head with `Expect: 100-continue` arrived and its body has not: the peer waits for an interim
  /// `100 Continue` (RFC 9110 §10.1.1). Reported once per request.
  case continueExpected(HTTPRequestHead)
  /// A piece of a body larger than `spoolThreshold`, to be written out; the rest follows, and
  /// the final `request` carries only the last piece in `body`.
  case bodyPart([UInt8])
  /// A complete request.
  case request(HTTPRequest)
}
