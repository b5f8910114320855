import Foundation
import Testing
@testable import WebImage

/// Each coded item a HEIF-family decode reads is coded at the size it declares and holds one
/// picture, checked before libheif or libavif decode (red team, stops 52–53). The fixtures are
/// 22 × 22 grids whose 484 distinct tiles declare 64 × 64 but hold one shared 1400 × 1400 tile
/// (HEVC from `heif-enc`, AV1 from `avifenc`; 23–24 KB): in process, the AVIF one took 3.3 GB,
/// the HEIC one 9 s of CPU and the `mif1` one (AV1 through libheif) 7 s; and an HEIC item whose
/// data holds fifty 1400 × 1400 pictures (34 KB), which libde265 all decoded (0.4 s).
@Suite("HEIF and AVIF: coded items are as large as they declare")
struct ISOCodedItemTests {
    typealias Boxes = ISOItemLimitTests

    /// The reason a decode (in process, through the default coders) failed, and its CPU time.
    static func decodeFailure(_ file: Data) async throws -> (reason: String?, spent: Duration) {
        try await offPool { () -> (String?, Duration) in
            let cpu = ThreadCPUClock.current(), start = cpu.used
            do throws(ImageDecodingError) {
                _ = try ImageCoderRegistry.default.decode(file, options: .default)
                return (nil, cpu.used - start)
            } catch {
                guard case .corrupt(_, let reason) = error else { return ("\(error)", cpu.used - start) }
                return (reason, cpu.used - start)
            }
        }
    }

    @Test(arguments: ["avif-grid-oversized-tiles.avif", "heic-grid-oversized-tiles.heic", "heif-av1-grid-oversized-tiles.heif"])
    func tilesCodedLargerThanTheyDeclareAreRefusedInProcess(name: String) async throws {
        let (reason, spent) = try await Self.decodeFailure(try CodecFixtures.data(name))
        #expect(reason == "item 2 is coded at up to 1400 × 1400 but declares 64 × 64", "\(name)")
        #expect(spent < TestTime.scaled(.milliseconds(500)), "\(name): refused after \(spent) of CPU")
    }

    @Test func theAVIFGridNoLongerTakesGigabytesInInfo() async throws {
        let path = temporaryDirectory().appendingPathComponent("grid.avif").path
        try CodecFixtures.data("avif-grid-oversized-tiles.avif").write(to: URL(fileURLWithPath: path))
        let (status, bytes, output) = try await BombMemoryTests.peakMemory(["info", "--decode", path])
        #expect(status != 0, "\(output)")
        #expect(bytes < 300 << 20, "info --decode peaked at \(bytes >> 20) MB (3.4 GB before)")
    }

    @Test func anItemOfManyPicturesIsRefused() async throws {
        let (reason, spent) = try await Self.decodeFailure(try CodecFixtures.data("heic-fifty-pictures.heic"))
        #expect(reason == "item 1 holds 50 pictures; an image item holds one")
        #expect(spent < TestTime.scaled(.milliseconds(300)), "refused after \(spent) of CPU")
    }

    /// Files written by libavif's and libheif's encoders (grids, 10 bits, alpha) and by ours decode
    /// as before, and the sizes read from their codec headers are the declared ones.
    @Test func realFilesDecodeAndTheirCodedSizesAreRead() throws {
        let directory = temporaryDirectory()
        let source = directory.appendingPathComponent("source.png")
        // Premultiplied: every third pixel half transparent, its colour under its alpha.
        var pixels = [UInt8](repeating: 0, count: 1000 * 700 * 4)
        for index in 0..<(1000 * 700) {
            let alpha: UInt8 = index % 3 == 0 ? 128 : 255
            pixels[4 * index] = UInt8(index % 127)
            pixels[4 * index + 1] = UInt8(index % 113)
            pixels[4 * index + 2] = 90
            pixels[4 * index + 3] = alpha
        }
        let image = Image(format: .png, pixelWidth: 1000, pixelHeight: 700, pixels: pixels, isOpaque: false)
        try PNGCoder().encode(image, as: .png, quality: 1).write(to: source)
        var files: [(String, Data)] = [("ours.heic", try HEIFCoder().encode(image, as: .heic, quality: 0.6))]
        for (name, arguments) in [("grid.avif", ["--grid", "4x2"]), ("grid10.avif", ["-d", "10", "--grid", "2x2"]), ("plain.avif", [])] {
            let output = directory.appendingPathComponent(name)
            let process = try Process.run(URL(fileURLWithPath: "/usr/bin/avifenc"), arguments: ["-s", "10"] + arguments + [source.path, output.path])
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "avifenc \(arguments)")
            files.append((name, try Data(contentsOf: output)))
        }
        for (name, file) in files {
            let decoded = try ImageCoderRegistry.default.decode(file, options: .default)
            #expect(decoded.pixelWidth == 1000 && decoded.pixelHeight == 700, "\(name)")
            let sizes = file.withUnsafeBytes { raw -> [(Int, Int)] in
                let meta = ISOMeta(raw)
                return meta.decodedItems.filter(meta.isCoded).compactMap { meta.declaredSize(of: $0, in: raw) }
            }
            #expect(!sizes.isEmpty, "\(name)")
            for size in sizes { #expect(size.0 >= 250 && size.1 >= 350, "\(name): \(size)") }
        }
    }

    @Test func codecHeaderFieldsAreRead() {
        // An SPS of 1400 × 1400 (x265 through libheif): its luma size, past the profile fields.
        let sps: [UInt8] = [
            0x42, 0x01, 0x01, 0x03, 0x70, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x00, 0x78, 0xA0,
            0x02, 0xBC, 0x80, 0x15, 0xE5, 0x96, 0xEA, 0x49, 0x29, 0xAE, 0x6E, 0x04, 0x04, 0x0C, 0x08, 0x00, 0x00, 0x03, 0x00,
            0x08, 0x00, 0x00, 0x03, 0x00, 0x08, 0x40,
        ]
        #expect(HEVCParameterSets.lumaSize(ofSPS: sps).map { [$0.width, $0.height] } == [1400, 1400])
        // A reduced still-picture AV1 sequence header of 1400 × 1400 (11 bits a side).
        var bits = [0, 0, 0, 1, 1] + [0, 1, 0, 0, 0]  // profile 0, still, reduced, level 8
        bits += [1, 0, 1, 0, 1, 0, 1, 0] + (0..<11).map { 1399 >> (10 - $0) & 1 } + (0..<11).map { 1399 >> (10 - $0) & 1 }
        let bytes = stride(from: 0, to: bits.count, by: 8).map { start in
            (0..<8).reduce(UInt8(0)) { $0 << 1 | UInt8(start + $1 < bits.count ? bits[start + $1] : 0) }
        }
        let header = AV1SequenceHeader(obu: bytes)
        #expect(header?.maxWidth == 1400 && header?.maxHeight == 1400 && header?.largestWidth == 1400)
        // Exp-Golomb codes of more than 31 leading zeros are refused, not looped over or trapped on.
        var reader = BitReader([UInt8](repeating: 0, count: 8) + [0xFF])
        #expect(reader.expGolomb() == nil)
    }

    /// Tables read from a file stay as small as what a decode uses: references with no target
    /// are not kept, and only the first `ipma` box is read (libheif's rule), so 200,000 empty
    /// `iref` entries and 50,000 `ipma` boxes of 32 properties for one item cost a walk, not
    /// tables that later loops multiply.
    @Test func emptyReferencesAndRepeatedBoxesAreNotKept() async throws {
        let empty = Boxes.box("dimg", [0, 1, 0, 0])
        let iref = Boxes.fullBox("iref", version: 0, Array([[UInt8]](repeating: empty, count: 200_000).joined()))
        let ipma = Boxes.fullBox("ipma", version: 0, Boxes.be32(1) + [0, 1, 32] + (1...32).map { UInt8($0) })
        let iprp = Boxes.box("iprp", Boxes.box("ipco", []) + Array([[UInt8]](repeating: ipma, count: 50_000).joined()))
        let file = Boxes.file(brand: "heic", Boxes.fullBox("pitm", version: 0, [0, 1]) + iref + iprp)
        let (references, properties, spent) = try await offPool { () -> (Int, Int, Duration) in
            let cpu = ThreadCPUClock.current(), start = cpu.used
            let meta = file.withUnsafeBytes { ISOMeta($0) }
            return (meta.references.count, meta.items[1]?.properties.count ?? 0, cpu.used - start)
        }
        #expect(references == 0 && properties == 32)
        #expect(spent < TestTime.scaled(.seconds(1)), "\(spent) of CPU")
    }

    /// An item of 65,535 extents of zero-byte fields (each "the whole file") is refused at once.
    @Test func anItemOfTooManyExtentsIsRefusedCheaply() async throws {
        // Field sizes 0; one item: id 1, method 0, data reference 0, 65,535 extents.
        var iloc: [UInt8] = [0x00, 0x00, 0, 1, 0, 1, 0, 0, 0, 0, 0xFF, 0xFF]
        iloc = Boxes.fullBox("iloc", version: 1, iloc)
        let infe = Boxes.fullBox("infe", version: 2, [0, 1, 0, 0] + Array("hvc1".utf8) + [0])
        let ispe = Boxes.fullBox("ispe", version: 0, Boxes.be32(64) + Boxes.be32(64))
        let ipco = Boxes.box("ipco", Boxes.box("hvcC", [UInt8](repeating: 0, count: 23)) + ispe)
        let ipma = Boxes.fullBox("ipma", version: 0, Boxes.be32(1) + [0, 1, 2, 0x81, 0x02])
        let meta = Boxes.fullBox("pitm", version: 0, [0, 1]) + Boxes.fullBox("iinf", version: 0, [0, 1] + infe)
            + iloc + Boxes.box("iprp", ipco + ipma)
        let file = Boxes.file(brand: "heic", meta)
        let (reason, spent) = try await Self.decodeFailure(file)
        #expect(reason?.hasPrefix("item 1's data cannot be located") == true, "\(reason ?? "decoded")")
        #expect(spent < TestTime.scaled(.milliseconds(100)), "refused after \(spent) of CPU")
    }
}
