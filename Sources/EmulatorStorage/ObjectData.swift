/// An object's bytes for reading.
public enum ObjectData: Sendable {
  case bytes([UInt8])
  case file(OpenFile)
}
