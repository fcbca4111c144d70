// swift-tools-version:6.0
import PackageDescription

#if canImport(Glibc)
  import Glibc
#endif

/// The executable's link on Linux (see the `storage-emulator` target). Relative relocations are
/// packed (`DT_RELR`, 1.2 MB of them otherwise, read by every start) only when the C library
/// the binary is built against reads them (glibc 2.36 or later): an older one refuses to load it.
///
/// A sanitizer build (`scripts/sanitizers` sets STORAGE_EMULATOR_SANITIZER_BUILD) links as
/// SwiftPM does by default: the toolchain's shared runtime and system C++ runtime. With the
/// static ones the sanitized binary stopped in ThreadSanitizer's allocator at start-up (memory
/// allocated on one side of its malloc interception and freed on the other).
let sanitizerBuild = Context.environment["STORAGE_EMULATOR_SANITIZER_BUILD"] != nil

let linuxLinkerFlags: [String] = {
  if sanitizerBuild { return [] }
  var flags = ["-static-stdlib", "-use-ld=lld", "-Xlinker", "--no-export-dynamic"]
  // The C++ runtime from its static archive (see config/link/libstdc++.so).
  flags += ["-L", Context.packageDirectory + "/config/link"]
  // The functions a start-up and a typical request run, laid out together at the start of the
  // code (config/link/hot-functions.txt, written by scripts/order-functions): the kernel maps
  // code in whole blocks around each page touched, so scattered hot functions made an idle
  // instance resident in over half of the binary's code.
  flags += [
    "-Xlinker", "--symbol-ordering-file=" + Context.packageDirectory + "/config/link/hot-functions.txt",
    "-Xlinker", "--no-warn-symbol-ordering",
  ]
  #if canImport(Glibc)
    // "glibc 2.36"
    var text = [CChar](repeating: 0, count: 64)
    _ = confstr(Int32(_CS_GNU_LIBC_VERSION), &text, text.count)
    let version = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: " ").last?.split(separator: ".").compactMap { Int($0) } ?? []
    if version.count >= 2, (version[0], version[1]) >= (2, 36) {
      flags += ["-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"]
    }
  #endif
  return flags
}()

let package = Package(
  name: "storage-emulator",
  platforms: [.macOS(.v15)],
  products: [
    .executable(name: "storage-emulator", targets: ["storage-emulator"])
  ],
  dependencies: [
    // MD5 and SHA-256 from a maintained implementation (Foundation on Linux has neither).
    .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
    // The request log and start-up messages go through the standard logging API.
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    // The command line: subcommands, --help, --version and usage errors.
    .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
  ],
  targets: [
    // Shared by every module: the EINTR-retrying system-call helper and hexadecimal digits.
    .target(name: "EmulatorSupport"),
    // epoll and eventfd, which Glibc does not expose to Swift (a few lines of C).
    .target(name: "CEpoll"),
    // renameat2(RENAME_EXCHANGE), copy_file_range and getrandom, which Glibc does not expose to Swift either.
    .target(name: "CFiles"),
    .target(name: "CChecksum"),
    // HTTP/1.1 over POSIX sockets, epoll and Dispatch. Knows nothing of storage.
    .target(name: "EmulatorHTTP", dependencies: ["CEpoll", "EmulatorSupport"]),
    // Object model, update and precondition rules, on-disk and in-memory stores. Knows nothing of HTTP.
    .target(
      name: "EmulatorStorage",
      dependencies: ["CChecksum", "CFiles", "EmulatorSupport", .product(name: "Crypto", package: "swift-crypto")]
    ),
    // The system zlib (zlib1g-dev), to decompress gzip objects for clients that do not accept gzip.
    .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
    // Firebase Security Rules for Storage: parser and evaluator with its own value model.
    // Knows nothing of HTTP or of the store.
    .target(name: "EmulatorRules", dependencies: ["EmulatorSupport", .product(name: "Crypto", package: "swift-crypto")]),
    // URL surfaces, JSON flavours, domain errors -> HTTP status.
    // Signed URLs: HMAC-SHA256 and SHA-256 from Crypto, RSA PKCS#1 v1.5 verification from _CryptoExtras.
    .target(
      name: "EmulatorAPI",
      dependencies: [
        "EmulatorHTTP", "EmulatorStorage", "EmulatorRules", "EmulatorSupport", "CZlib",
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "_CryptoExtras", package: "swift-crypto"),
      ]
    ),
    // Configuration file, command line, and `makeEmulator`, shared by `main` and the tests.
    .target(
      name: "EmulatorApp",
      dependencies: [
        "EmulatorAPI", "EmulatorHTTP", "EmulatorStorage", "EmulatorRules", "EmulatorSupport",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    // On Linux, the Swift runtime, Dispatch and FoundationEssentials are linked into the binary,
    // in every build (the tests start this binary too): one image to map and relocate instead of
    // a dozen libraries, and only the pages it touches resident (issue #22: start-up and memory
    // per instance; BENCHMARKS.md, "instances"). With lld, the toolchain's linker, which packs
    // the relative relocations where the C library can read them (`linuxLinkerFlags`), and
    // without exporting every symbol of the binary (nothing looks them up; the table costs
    // every instance its pages and the runtime a scan of it at start).
    .executableTarget(
      name: "storage-emulator", dependencies: ["EmulatorApp"],
      linkerSettings: [
        .unsafeFlags(linuxLinkerFlags, .when(platforms: [.linux])),
        // What FoundationEssentials' static archive needs besides the runtime (its shared
        // library carries them inside): its collections and its C string shims.
      ] + (sanitizerBuild ? [] : [
        .linkedLibrary("_FoundationCollections", .when(platforms: [.linux])),
        .linkedLibrary("_FoundationCShims", .when(platforms: [.linux])),
      ])
    ),

    // Test-only: the system libcurl, with non-variadic wrappers of curl_easy_setopt for Swift.
    .systemLibrary(
      name: "CCurl",
      pkgConfig: "libcurl",
      providers: [.apt(["libcurl4-openssl-dev"])]
    ),
    .testTarget(name: "EmulatorSupportTests", dependencies: ["EmulatorSupport"]),
    // Test-only fixtures shared by the test targets: the raw-socket client, temporary folders.
    .target(name: "TestSupport", path: "Tests/TestSupport"),
    .testTarget(name: "EmulatorHTTPTests", dependencies: ["EmulatorHTTP", "TestSupport"]),
    .testTarget(
      name: "EmulatorRulesTests", dependencies: ["EmulatorRules", "EmulatorStorage"],
      resources: [.copy("Fixtures")]
    ),
    .testTarget(
      name: "EmulatorStorageTests", dependencies: ["EmulatorStorage"],
      resources: [.copy("Fixtures")]
    ),
    .testTarget(
      name: "EmulatorAPITests",
      dependencies: [
        "EmulatorAPI", "EmulatorHTTP", "EmulatorStorage",
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "_CryptoExtras", package: "swift-crypto"),
      ]
    ),
    // The app module without sockets: options from every source, the config file reader.
    .testTarget(name: "EmulatorAppTests", dependencies: ["EmulatorApp", "EmulatorHTTP"]),
    .testTarget(
      name: "EndToEndTests",
      dependencies: ["EmulatorApp", "EmulatorStorage", "EmulatorRules", "CCurl", "TestSupport"]
    ),
  ]
)
