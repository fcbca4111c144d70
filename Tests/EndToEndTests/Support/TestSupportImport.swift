// The shared fixtures (`RawSocket`, `TemporaryFolder`) for every file of this target.
@_exported import TestSupport
