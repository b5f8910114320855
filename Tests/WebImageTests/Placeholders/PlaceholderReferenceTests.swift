import Foundation
import Testing
@testable import WebImage

/// BlurHash and ThumbHash against the PyPI references (`blurhash`, halcy's blurhash-python, and
/// `thumbhash`, a port of Evan Wallace's code; scripts/setup installs both): the pixels we hash
/// are written to PNG and the references hash the same file; our strings must be identical, and
/// our decoders must draw what theirs draw. thumbhash 0.1.2 raises on any image with alpha (its
/// alpha channel's result is unpacked as a tuple): those are encoded by `thash`, a fork by the
/// same authors that fixes it.
@Suite("Placeholders: BlurHash and ThumbHash against the Python references", .cpuBound)
struct PlaceholderReferenceTests {
    struct Entry: Codable {
        var name: String, blurPath: String, thumbPath: String, componentsX: Int, componentsY: Int
        var blurHash: String, thumbHash: [UInt8]
        var decodeWidth: Int, decodeHeight: Int
    }

    struct Reference: Codable {
        var blurHash: String, thumbHash: [UInt8]
        /// Which package encoded `thumbHash`: `thumbhash`, or `thash` (its RGBA-safe fork) for
        /// images with alpha, which thumbhash 0.1.2 cannot encode.
        var thumbSource: String
        /// blurhash.decode of our string: rows of RGB.
        var blurDecoded: [[[Int]]]
        var thumbWidth: Int, thumbHeight: Int, thumbDecoded: [Int]
        var thumbAverage: [Double], thumbRatio: Double
    }

    static let script = """
        import json, sys
        import blurhash, thumbhash, thash
        from PIL import Image
        entries = json.load(open(sys.argv[1]))
        out = []
        for e in entries:
            rgb = Image.open(e["blurPath"]).convert("RGBA")
            w, h = rgb.size
            px = rgb.load()
            rows = [[list(px[x, y][:3]) for x in range(w)] for y in range(h)]
            bh = blurhash.encode(rows, e["componentsX"], e["componentsY"])
            bd = blurhash.decode(e["blurHash"], e["decodeWidth"], e["decodeHeight"])
            t = Image.open(e["thumbPath"]).convert("RGBA")
            tw, th = t.size
            tp = t.load()
            flat = [c for y in range(th) for x in range(tw) for c in tp[x, y]]
            try:
                reference, source = thumbhash.rgba_to_thumb_hash(tw, th, flat), "thumbhash"
            except TypeError:  # thumbhash 0.1.2 cannot encode alpha (a_dc becomes a tuple)
                reference, source = thash.rgba_to_thumb_hash_pure(tw, th, flat), "thash"
            dw, dh, rgba = thumbhash.thumb_hash_to_rgba(e["thumbHash"])
            out.append({"blurHash": bh, "thumbHash": list(reference), "thumbSource": source, "blurDecoded": [[list(map(int, p)) for p in r] for r in bd],
                        "thumbWidth": dw, "thumbHeight": dh, "thumbDecoded": list(rgba),
                        "thumbAverage": list(thumbhash.thumb_hash_to_average_rgba(e["thumbHash"])),
                        "thumbRatio": thumbhash.thumb_hash_to_approximate_aspect_ratio(e["thumbHash"])})
        json.dump(out, open(sys.argv[2], "w"))
        """

    /// Every sample hashed by us and by the references; the match rates are printed and every
    /// string must be identical.
    @Test func hashesMatchTheReferences() async throws {
        let samples = try PlaceholderSample.all()
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var entries: [Entry] = []
        for (index, sample) in samples.enumerated() {
            let blurSample = try sample.image.placeholderSample(maxSide: Image.blurHashSampleSide)
            let thumbSample = try sample.image.placeholderSample(maxSide: ThumbHash.maxEncodedSide)
            let blurURL = directory.appendingPathComponent("blur-\(index).png")
            let thumbURL = directory.appendingPathComponent("thumb-\(index).png")
            try PlaceholderSample.straightPNG(blurSample).write(to: blurURL)
            try PlaceholderSample.straightPNG(thumbSample).write(to: thumbURL)
            let blur = try sample.image.blurHash(components: sample.components)
            let thumb = try sample.image.thumbHash()
            entries.append(Entry(
                name: sample.name, blurPath: blurURL.path, thumbPath: thumbURL.path, componentsX: sample.components.x,
                componentsY: sample.components.y, blurHash: blur.string, thumbHash: thumb.bytes,
                decodeWidth: 20 + index, decodeHeight: 30 - index))
        }
        let input = directory.appendingPathComponent("in.json"), output = directory.appendingPathComponent("out.json")
        try JSONEncoder().encode(entries).write(to: input)
        // The python3 on PATH: the one scripts/setup installs blurhash and thumbhash for.
        let result = try await WebImageCommand.run(["python3", "-c", Self.script, input.path, output.path],
                                                   program: URL(fileURLWithPath: "/usr/bin/env"))
        try #require(result.status == 0, "\(result.stderr)")
        let references = try JSONDecoder().decode([Reference].self, from: Data(contentsOf: output))
        try #require(references.count == entries.count)
        var blurMatches = 0, thumbMatches = 0, thumbTies = 0
        for (entry, reference) in zip(entries, references) {
            #expect(entry.blurHash == reference.blurHash, "\(entry.name): BlurHash")
            #expect(Self.sameThumbHash(entry, reference), "\(entry.name): ThumbHash \(entry.thumbHash) vs \(reference.thumbHash) (\(reference.thumbSource))")
            blurMatches += entry.blurHash == reference.blurHash ? 1 : 0
            thumbMatches += entry.thumbHash == reference.thumbHash ? 1 : 0
            thumbTies += entry.thumbHash != reference.thumbHash && Self.sameThumbHash(entry, reference) ? 1 : 0
            try Self.compareDecoders(entry, reference)
        }
        print("placeholders: BlurHash \(blurMatches)/\(entries.count) identical, ThumbHash \(thumbMatches)/\(entries.count) identical, "
              + "\(thumbTies) apart only by a rounding tie (\(references.filter { $0.thumbSource == "thash" }.count) with alpha encoded by thash)")
    }

    /// Identical, or different only where Python's `round` (halves to even) and ThumbHash's
    /// `Math.round` (halves up) part: the short side's luminance count in the header when
    /// `limit × short / long` is exactly a half (5 × 40 / 80 = 2.5: we store 3, as ThumbHash's
    /// own encoder does; the Python packages store 2). Nothing else may differ.
    static func sameThumbHash(_ entry: Entry, _ reference: Reference) -> Bool {
        guard entry.thumbHash != reference.thumbHash else { return true }
        guard entry.thumbHash.count == reference.thumbHash.count else { return false }
        let differing = zip(entry.thumbHash, reference.thumbHash).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
        let ours = entry.thumbHash[3] & 7, theirs = reference.thumbHash[3] & 7
        return differing == [3] && entry.thumbHash[3] & ~7 == reference.thumbHash[3] & ~7
            && ours == theirs + 1 && theirs % 2 == 0
            && entry.name == "flat-alpha-40x80"  // the only sample with a half: its count is 2.5
    }

    /// Our decoders against theirs on our strings: the same drawing to within rounding.
    static func compareDecoders(_ entry: Entry, _ reference: Reference) throws {
        let blur = try BlurHash(entry.blurHash).image(width: entry.decodeWidth, height: entry.decodeHeight)
        var blurError = 0
        for y in 0..<entry.decodeHeight {
            for x in 0..<entry.decodeWidth {
                let ours = blur.pixel(x: x, y: y)
                let theirs = reference.blurDecoded[y][x]
                blurError += abs(Int(ours.r) - theirs[0]) + abs(Int(ours.g) - theirs[1]) + abs(Int(ours.b) - theirs[2])
            }
        }
        let blurMean = Double(blurError) / Double(entry.decodeWidth * entry.decodeHeight * 3)
        #expect(blurMean <= 0.05, "\(entry.name): BlurHash decode mean difference \(blurMean)")

        let hash = try ThumbHash(bytes: entry.thumbHash)
        let thumb = hash.image()
        try #require(thumb.pixelWidth == reference.thumbWidth && thumb.pixelHeight == reference.thumbHeight,
                     "\(entry.name): ThumbHash decode size")
        // thumbhash 0.1.2's decoder appends each pixel's cosines to lists it never clears, so every
        // pixel repeats the first: only that one is compared (the whole drawing is checked against
        // the source in PlaceholderTests). thash's decoder is no whole-image reference either: it
        // weights a term with both frequencies non-zero by 4 where ThumbHash's weights it by 2
        // (measured: 3–34 levels of luminance apart). Theirs rounds where ThumbHash's truncates.
        var first = reference.thumbDecoded.prefix(4).map { UInt8($0) }
        _ = PixelOperations.premultiply(&first)
        for (ours, theirs) in zip(thumb.pixels.prefix(4), first) {
            #expect(abs(Int(ours) - Int(theirs)) <= 1, "\(entry.name): ThumbHash first pixel \(thumb.pixels.prefix(4)) vs \(first)")
        }
        let average = hash.averageColor
        for (ours, theirs) in zip([average.red, average.green, average.blue, average.alpha], reference.thumbAverage) {
            #expect(abs(Double(ours) - theirs * 255) <= 0.5, "\(entry.name): ThumbHash average \(average) vs \(reference.thumbAverage)")
        }
        #expect(abs(hash.approximateAspectRatio - reference.thumbRatio) < 1e-9, "\(entry.name): aspect ratio")
    }
}
