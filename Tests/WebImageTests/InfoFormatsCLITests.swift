import Foundation
import Testing
import WebImage

@Suite("webimage info on APNG, BMP, ICO and CUR files")
struct InfoFormatsCLITests {
    struct Info: Decodable { var format: String; var width, height, frames, bytes: Int; var loopCount: Int?; var colorModel: String?; var bitDepth: Int? }

    @Test(arguments: [
        ("apng-rgba8.apng", "apng", 20, 14, 4, 3),
        ("apng-default-apart.apng", "apng", 20, 14, 4, 0),
        ("apng-broken-sequence.apng", "png", 20, 14, 1, nil),
        ("bmp-rle4.bmp", "bmp", 13, 9, 1, nil),
        ("ico-png-and-bitmaps.ico", "ico", 32, 32, 1, nil),
        ("cur-24bit-mask.cur", "ico", 32, 32, 1, nil),
    ] as [(String, String, Int, Int, Int, Int?)])
    func reportsFormatSizeFramesAndLoopCount(_ file: String, format: String, width: Int, height: Int, frames: Int, loop: Int?) async throws {
        let path = CoderFixtureTests.directory.appendingPathComponent(file).path
        let result = try await WebImageCommand.run(["info", path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let info = try JSONDecoder().decode(Info.self, from: Data(result.stdout.utf8))
        #expect(info.format == format && info.width == width && info.height == height)
        #expect(info.frames == frames && info.loopCount == loop)
        #expect(info.bytes == (try Data(contentsOf: URL(fileURLWithPath: path))).count)
        let expected: [String: (String, Int)] = [
            "apng-rgba8.apng": ("rgba", 8), "bmp-rle4.bmp": ("indexed", 4), "ico-png-and-bitmaps.ico": ("rgba", 8),
            "cur-24bit-mask.cur": ("rgba", 8),
        ]
        if let (model, depth) = expected[file] { #expect(info.colorModel == model && info.bitDepth == depth) }
        let text = try await WebImageCommand.run(["info", path])
        #expect(text.stdout.contains("\(format) \(width)×\(height), \(frames) frame"))
        #expect(text.stdout.contains("loops forever") == (loop == 0))
    }
}
