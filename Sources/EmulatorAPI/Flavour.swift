/// Everything that differs between the Firebase Storage API (`/v0`) and the GCS JSON API (the
/// other JSON surfaces), decided here rather than by `isFirebase` tests in the handlers. What the
/// flavours mean for resources and uploads is in `Flavour+Resources.swift`; this file stands
/// alone (the fuzz build compiles it with `APIError`).
public enum Flavour: Sendable, Equatable, Hashable {
  case gcs
  case firebase

  /// The flavour of a path before it is routed (errors of unroutable or unreadable requests).
  static func of(rawPath: Substring) -> Flavour { rawPath.utf8.starts(with: "/v0/".utf8) ? .firebase : .gcs }

  /// Whether error bodies carry GCS's `errors` array (Firebase's are `{"error":{"code","message"}}`).
  var errorsHaveDetails: Bool { self == .gcs }
}

