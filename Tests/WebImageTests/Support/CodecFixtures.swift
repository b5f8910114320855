import Foundation
import WebImage

/// The files `scripts/fixtures/make-codec-fixtures.py` and `scripts/fixtures/make-leniency-fixtures.py` write
/// (TIFF, JPEG XL, lenient variants), with their reference decodes.
enum CodecFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/codecs")

    static func data(_ file: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(file))
    }

    /// A reference PNG (straight RGBA written by Pillow or djxl) decoded to premultiplied RGBA8.
    static func reference(_ file: String) throws -> Image {
        try PNGCoder().decode(data(file), options: .default)
    }
}
