import EmulatorAPI
import EmulatorHTTP
import EmulatorSupport

/// The browser policies' settings: allowed origins and Host names, from the config file
/// (`cors_origins`, `allowed_hosts`), the environment (`STORAGE_EMULATOR_CORS_ORIGINS`,
/// `STORAGE_EMULATOR_ALLOWED_HOSTS`, comma-separated) and flags (`--cors-origin`,
/// `--allowed-host`, repeatable). Each source adds to the others.
extension EmulatorConfiguration {
  /// Adds origins (`scheme://host[:port]`, `null` or `*`); a malformed one is an error naming it.
  public mutating func addOrigins(_ values: [String]) throws(ConfigurationError) {
    for value in values {
      do {
        try origins.allow(value)
      } catch {
        throw ConfigurationError("cors origin \(error.description)")
      }
    }
  }

  /// Adds `Host` names (no port) or `*` (any).
  public mutating func addAllowedHosts(_ values: [String]) throws(ConfigurationError) {
    do {
      _ = try HostPolicy.forListening(on: server.host, allowedHosts: values)
    } catch {
      throw ConfigurationError("allowed host \(error.description)")
    }
    allowedHosts += values
  }

  /// What the HTTP layer's `CrossOriginHandler` applies for this configuration: the Host check is
  /// on when listening on a loopback address or when names are given.
  public var crossOrigin: CrossOriginConfiguration {
    var configuration = CrossOriginConfiguration()
    configuration.origins = origins
    // The names were checked as they were added; a configuration built by hand with a malformed
    // name keeps the check on and answers loopback names and IP literals only.
    configuration.hosts =
      (try? HostPolicy.forListening(on: server.host, allowedHosts: allowedHosts))
      ?? HostPolicy(restricted: true)
    configuration.exposedHeaders = StorageAPI.exposedHeaders
    return configuration
  }
}
