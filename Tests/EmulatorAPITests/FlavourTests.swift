import EmulatorHTTP
import EmulatorStorage
import Testing

@testable import EmulatorAPI

/// The one place the Firebase and GCS flavours differ, seen through the surfaces.
@Suite struct FlavourTests {
  @Test func onlyV0IsFirebase() {
    for surface in Surface.allCases {
      #expect((surface.flavour == .firebase) == (surface == .firebase), "\(surface)")
    }
    #expect(Flavour.of(rawPath: "/v0/b/x/o") == .firebase)
    #expect(Flavour.of(rawPath: "/v0") == .gcs)
    #expect(Flavour.of(rawPath: "/storage/v1/b") == .gcs)
  }

  @Test func differencesAreTheDocumentedOnes() {
    #expect(Flavour.firebase.createsBucket(lenient: false))
    #expect(!Flavour.gcs.createsBucket(lenient: false))
    #expect(Flavour.gcs.createsBucket(lenient: true))
    #expect(Flavour.firebase.checksRules && !Flavour.gcs.checksRules)
    #expect(Flavour.gcs.checksSignedURLs && !Flavour.firebase.checksSignedURLs)
    #expect(Flavour.firebase.usesDownloadTokens && !Flavour.gcs.usesDownloadTokens)
    #expect(Flavour.gcs.patchOptions(replace: false).customTimeWritable)
    #expect(!Flavour.firebase.patchOptions(replace: true).tokensInCustomMetadata)
    #expect(Flavour.firebase.patchOptions(replace: true).replace)
  }

  @Test func errorBodiesDifferOnlyByTheDetails() {
    let error = APIError(404, .notFound, "gone")
    let gcs = String(decoding: error.response(.gcs).body, as: UTF8.self)
    let firebase = String(decoding: error.response(.firebase).body, as: UTF8.self)
    #expect(gcs.contains("\"errors\""))
    #expect(!firebase.contains("\"errors\""))
    #expect(firebase.contains("\"message\":\"gone\""))
  }
}
