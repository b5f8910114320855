import Foundation
import Testing
import WebImage
import WebImageOrigin

/// libavif, libheif and libjxl are opened on first use, not at process start, and
/// `WEBIMAGE_DISABLE_CODECS` keeps them closed; the `webimage` command does not load
/// FoundationNetworking at all (see docs/architecture/startup.md).
@Suite("Codec libraries opened on first use")
struct CodecLoadingTests {
    /// The shared objects the dynamic loader opened in a `webimage ARGS` run (from `LD_DEBUG=files`).
    static func loadedObjects(_ arguments: [String]) async throws -> (CommandResult, [String]) {
        let result = try await WebImageCommand.run(arguments, environment: ["LD_DEBUG": "files"])
        let objects = result.stderr.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "file=") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != " " && $0 != "[" })
        }
        return (result, objects)
    }

    @Test func aJPEGRunNeverLoadsTheAVIFHEIFOrJPEGXLLibraries() async throws {
        let jpeg = temporaryDirectory().appendingPathComponent("photo.jpg")
        try SampleImages.jpeg(width: 64, height: 48).write(to: jpeg)
        let (result, objects) = try await Self.loadedObjects(["info", jpeg.path, "--decode"])
        #expect(result.status == 0)
        #expect(objects.contains { $0.contains("libturbojpeg") }, "the listing works: \(objects.prefix(5))")
        for library in ["libavif", "libheif", "libjxl", "libdav1d", "libx265", "libde265", "libhwy"] {
            #expect(!objects.contains { $0.contains(library) }, "\(library) was loaded for a JPEG")
        }
        // Nor is FoundationNetworking (libcurl and its TLS, Kerberos and LDAP libraries): the
        // URLSession loader is a module of its own, which the command does not link.
        #expect(!objects.contains { $0.contains("libFoundationNetworking") || $0.contains("libcurl") })
        // A JPEG XL file opens libjxl, on use.
        let (jxlResult, jxlObjects) = try await Self.loadedObjects(["info", CodecFixtures.directory.appendingPathComponent("jxl-lossy.jxl").path, "--decode"])
        #expect(jxlResult.status == 0, "\(jxlResult.stdout)")
        #expect(jxlObjects.contains { $0.contains("libjxl") })
        #expect(!jxlObjects.contains { $0.contains("libavif") })
    }

    @Test func aSwitchedOffCodecFailsWithAClearErrorAndTheOthersStillWork() async throws {
        let folder = temporaryDirectory()
        let avif = folder.appendingPathComponent("photo.avif"), jpeg = folder.appendingPathComponent("photo.jpg")
        try SampleImages.avif(width: 64, height: 48).write(to: avif)
        try SampleImages.jpeg(width: 64, height: 48).write(to: jpeg)
        let environment = ["WEBIMAGE_DISABLE_CODECS": "avif,heif,jxl"]
        let refused = try await WebImageCommand.run(["info", avif.path, "--decode"], environment: environment)
        #expect(refused.status != 0)
        #expect((refused.stdout + refused.stderr).contains("switched off by WEBIMAGE_DISABLE_CODECS"), "\(refused.stdout) \(refused.stderr)")
        let jxl = try await WebImageCommand.run(
            ["info", CodecFixtures.directory.appendingPathComponent("jxl-lossy.jxl").path, "--decode"], environment: environment)
        #expect(jxl.status != 0 && (jxl.stdout + jxl.stderr).contains("WEBIMAGE_DISABLE_CODECS"))
        // The list is read leniently: spaces and capitals as people write them.
        let loosely = try await WebImageCommand.run(["info", avif.path, "--decode"], environment: ["WEBIMAGE_DISABLE_CODECS": "jxl , AVIF"])
        #expect(loosely.status != 0 && (loosely.stdout + loosely.stderr).contains("WEBIMAGE_DISABLE_CODECS"))
        let still = try await WebImageCommand.run(["info", jpeg.path, "--decode"], environment: environment)
        #expect(still.status == 0, "\(still.stderr)")
        // Without the switch the same file decodes (in this process the libraries load as usual).
        #expect(try ImageCoderRegistry.default.decode(try Data(contentsOf: avif)).pixelWidth == 64)
    }
}
