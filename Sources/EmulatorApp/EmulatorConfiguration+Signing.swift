import EmulatorAPI
import EmulatorStorage
import EmulatorSupport

extension EmulatorConfiguration {
  /// Reads the configured signing keys; an unreadable or malformed one stops start-up with a
  /// message naming it.
  func signingKeys() throws(StorageError) -> SigningKeys {
    var keys = SigningKeys()
    do throws(SigningKeyError) {
      for path in signingKeyFiles {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
          throw SigningKeyError("cannot read the signing key file '\(path)'")
        }
        try keys.addRSA(text, source: path)
      }
      for spec in hmacKeys { try keys.addHMAC(spec) }
    } catch {
      throw .invalid("signing keys: \(error.message)")
    }
    return keys
  }
}
