import Crypto

/// Streaming digests, shared by the backends.
public struct Digester: Sendable {
  private var md5 = Insecure.MD5()
  private var crc = CRC32C()

  public init() {}

  public mutating func update(_ bytes: UnsafeRawBufferPointer) {
    md5.update(bufferPointer: bytes)
    crc.update(bytes)
  }

  public func finalize() -> (md5: [UInt8], crc32c: UInt32) { (Array(md5.finalize()), crc.value) }

  public static func digest(_ bytes: [UInt8]) -> (md5: [UInt8], crc32c: UInt32) {
    var digester = Digester()
    bytes.withUnsafeBytes { digester.update($0) }
    return digester.finalize()
  }
}
