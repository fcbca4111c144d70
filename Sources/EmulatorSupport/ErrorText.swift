#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One readable line for an error in a message, in place of Foundation's `localizedDescription`
/// (which FoundationEssentials lacks): for a `FileManager` error, the system's reason and the
/// path (`No such file or directory (/data/x)`); for anything else its own description.
public enum ErrorText {
  public static func describe(_ error: any Error) -> String {
    if let error = error as? CocoaError {
      var reason: String
      if let posix = error.underlying as? POSIXError {
        reason = String(cString: strerror(posix.code.rawValue))
      } else {
        reason = "file operation failed (CocoaError \(error.code.rawValue))"
      }
      if let path = error.filePath { reason += " (\(path))" }
      return reason
    }
    if let error = error as? POSIXError { return String(cString: strerror(error.code.rawValue)) }
    return "\(error)"
  }
}
