import Foundation
import Testing
import WebImage
import WebImageOrigin
import WebImageTerminal

@Suite("Terminal encoders: decoded back to pixels")
struct TerminalEncoderTests {
    static let photo = SampleImages.pattern(width: 37, height: 25, seed: 3)  // odd sizes: partial sixel band, half cell row

    @Test func halfBlocksCarryEveryPixelPairCellByCell() throws {
        let image = Self.photo
        let picture = HalfBlockEncoder().encode(image, background: TerminalColor(red: 1, green: 2, blue: 3))
        #expect(picture.lines.count == 13)
        let cells = try TerminalDecoders.halfBlocks(picture.lines)
        for (row, line) in cells.enumerated() {
            #expect(line.count == 37)
            for (x, cell) in line.enumerated() {
                let top = image.pixel(x: x, y: row * 2)
                #expect(cell.top == .init(r: Int(top.r), g: Int(top.g), b: Int(top.b)), "cell \(x),\(row)")
                if row * 2 + 1 < image.pixelHeight {
                    let bottom = image.pixel(x: x, y: row * 2 + 1)
                    #expect(cell.bottom == .init(r: Int(bottom.r), g: Int(bottom.g), b: Int(bottom.b)), "cell \(x),\(row)")
                } else {
                    #expect(cell.bottom == .init(r: 1, g: 2, b: 3), "the missing lower pixel is the background")
                }
            }
        }
    }

    @Test func halfBlocksCompositeTransparencyOverTheBackground() throws {
        // Premultiplied half-transparent red over white: 128 + 255 * 127 / 255.
        let image = Image(format: .png, pixelWidth: 1, pixelHeight: 2, pixels: [128, 0, 0, 128, 0, 0, 0, 0], isOpaque: false)
        let cells = try TerminalDecoders.halfBlocks(HalfBlockEncoder().encode(image, background: .init(red: 255, green: 255, blue: 255)).lines)
        #expect(cells[0][0].top == .init(r: 255, g: 127, b: 127))
        #expect(cells[0][0].bottom == .init(r: 255, g: 255, b: 255))
    }

    @Test func sixelDecodesToTheImageWithinTheStatedError() throws {
        let image = Self.photo
        let decoded = try TerminalDecoders.sixel(SixelEncoder().encode(image, background: .black).lines.joined())
        #expect(decoded.width == 37 && decoded.height == 25)
        var worst = 0, total = 0
        for y in 0..<25 {
            for x in 0..<37 {
                let pixel = try #require(decoded[x, y], "pixel \(x),\(y) never painted")
                let source = image.pixel(x: x, y: y)
                let errors = [abs(pixel.r - Int(source.r)), abs(pixel.g - Int(source.g)), abs(pixel.b - Int(source.b))]
                worst = max(worst, errors.max()!)
                total += errors.reduce(0, +)
            }
        }
        #expect(worst <= SixelEncoder.maximumError, "worst channel error \(worst)")
        let mean = Double(total) / Double(37 * 25 * 3)
        #expect(mean < 14, "mean channel error \(mean)")
        // Colours on the cube come back exactly (up to the percent rounding).
        let cube = Image(format: .png, pixelWidth: 2, pixelHeight: 1, pixels: [255, 0, 0, 255, 0, 0, 255, 255], isOpaque: true)
        let exact = try TerminalDecoders.sixel(SixelEncoder().encode(cube, background: .black).lines.joined())
        #expect(exact[0, 0] == .init(r: 255, g: 0, b: 0) && exact[1, 0] == .init(r: 0, g: 0, b: 255))
    }

    @Test func kittyTransmitsTheExactPixelsInChunks() throws {
        let image = SampleImages.pattern(width: 80, height: 60, seed: 4)  // 19,200 bytes: several 4096-character chunks
        let decoded = try TerminalDecoders.kitty(KittyEncoder(imageID: 9).encode(image, background: .black).lines.joined())
        #expect(decoded.width == 80 && decoded.height == 60)
        #expect(decoded.rgba == image.pixels)
        #expect(decoded.controls.first?["a"] == "d" && decoded.controls.first?["i"] == "9", "the old picture of the id goes first")
        #expect(decoded.controls.count > 3 && decoded.controls.last?["m"] == "0")
        #expect(decoded.controls.dropLast().dropFirst().allSatisfy { $0["m"] == "1" })
        // Straight alpha: a premultiplied half-transparent pixel is sent un-premultiplied.
        let translucent = Image(format: .png, pixelWidth: 1, pixelHeight: 1, pixels: [64, 32, 0, 128], isOpaque: false)
        let one = try TerminalDecoders.kitty(KittyEncoder().encode(translucent, background: .black).lines.joined())
        #expect(one.rgba == [128, 64, 0, 128])
    }

    @Test func iTermCarriesAPNGOfThePixels() throws {
        let image = Self.photo
        let line = try #require(ITermEncoder().encode(image, background: .black).lines.first)
        #expect(line.hasPrefix("\u{1B}]1337;File=inline=1;") && line.hasSuffix("\u{07}"))
        let base64 = try #require(line.split(separator: ":").last?.dropLast())
        let png = try #require(Data(base64Encoded: String(base64)))
        let decoded = try ImageCoderRegistry.default.decode(png)
        #expect(decoded.pixelWidth == 37 && decoded.pixels == image.pixels)
    }

    @Test func protocolDetection() {
        #expect(TerminalGraphics.detect(environment: ["TERM": "xterm-kitty"]) == .kitty)
        #expect(TerminalGraphics.detect(environment: ["TERM": "xterm-256color", "KITTY_WINDOW_ID": "1"]) == .kitty)
        #expect(TerminalGraphics.detect(environment: ["TERM": "xterm-256color", "TERM_PROGRAM": "iTerm.app"]) == .iterm)
        #expect(TerminalGraphics.detect(environment: ["TERM": "foot"]) == .sixel)
        #expect(TerminalGraphics.detect(environment: ["TERM": "tmux-256color", "TMUX": "/tmp/x"]) == .blocks)
        #expect(TerminalGraphics.detect(environment: ["TERM": "dumb"]) == .blocks)
        #expect(TerminalGraphics.detect(environment: ["TERM": "xterm-256color"]) == nil, "only a query can tell")
        #expect(TerminalGraphics.interpret(reply: Array("\u{1B}_Gi=31;OK\u{1B}\\\u{1B}[?62;22c".utf8)) == .kitty)
        #expect(TerminalGraphics.interpret(reply: Array("\u{1B}[?63;1;2;4;6;9;15;22c".utf8)) == .sixel)
        #expect(TerminalGraphics.interpret(reply: Array("\u{1B}[?62;22c".utf8)) == .blocks)
        #expect(TerminalGraphics.interpret(reply: []) == .blocks)
        #expect(TerminalGraphics.replyIsComplete(Array("\u{1B}[?62;22c".utf8)))
        #expect(!TerminalGraphics.replyIsComplete(Array("\u{1B}[?62;2".utf8)))
    }
}
