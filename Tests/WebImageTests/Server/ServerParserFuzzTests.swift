import Foundation
import Testing
import WebImage
import WebImageServer

extension ServerTests {
    /// What a stranger writes into `/img`'s query, `process=` and `s=`, generated: thousands of
    /// mutated queries through the real parsers, the signature check, the budget
    /// and the cache key. Nothing may trap (a trap ends the test process), every refusal is a
    /// typed 4xx, and everything accepted has one stable key. Seeded, so a failure reproduces.
    /// A long run, on demand: `WEBIMAGE_PARSER_FUZZ_SCALE=100 scripts/test --filter ServerParserFuzzTests`
    /// (each loop runs that many times its cases; the seeds stay, so the first cases are CI's).
    @Suite("Image server: parameter, process= and signature fuzzing")
    struct ServerParserFuzzTests {
        static let scale = max(1, Int(ProcessInfo.processInfo.environment["WEBIMAGE_PARSER_FUZZ_SCALE"] ?? "") ?? 1)
        static let fragments = [
            "resize:", "crop:", "flip:", "rotate:", "round:", "circle", "blur:", "tint:", "grayscale", "square",
            "trim:", "sharpen:", "pixelate:", "padding:", "flatten:", "65535",
            ",", ":", "x", "fill", "fit", "exact", "upscale", "h", "v", "-", ".", "e", "E", "+", "0", "1", "9",
            "256", "8192", "65535", "2147483647", "9223372036854775807", "99999999999999999999", "1e300", "-1e300",
            "inf", "nan", "0x10", "ffffff", "ff000080", "%", "%2C", "%3A", "&", "=", "#", "\u{0}", "\u{1F}", "é", "🙂", " ",
        ]
        static let names = [
            "url", "w", "h", "fit", "format", "q", "process", "s", "W", "url ", "", "x",
            "enlarge", "dpr", "gravity", "extend", "padding", "bg", "trim", "sharpen", "pixelate", "blur", "max_bytes", "wm", "preset",
        ]
        static let values = [
            "http://127.0.0.1/a.png", "https://example.com/a.jpg?x=1&w=4", "http://u:p@127.0.0.1/a.png", "ftp://x/y",
            "http://[::1]:80/a", "http://127.0.0.1:99999/a", "http://%00/", "HTTP://EXAMPLE.COM./A%2Fb", "", "0", "-1",
            "1", "8192", "8193", "9223372036854775807", "1e300", "inside", "cover", "fill", "auto", "jpeg", "avif", "gif", "100", "101",
            "true", "2.5", "8", "noea", "sm", "fp:0.5:0.25", "fp:1:1e-300", "1,2,3,4", "8192,8192,8192,8192", "ff0000", "00000000", "255",
            "0.5:soea:10:10:0.25", "1:re:0:0", "1:re:0:0:1e-300", "0.5:ce:-8192:8192:1", "thumb", "thumb:tiled", "nope", "thumb:thumb:thumb",
        ]
        /// The presets and watermark the query fuzz expands and blends with.
        static let presets = try! ImagePresets(["thumb=w:100/h:100/fit:cover", "default=q:70", "tiled=wm:0.5:re:3:3"], maxSide: 8192, watermark: true)
        static let mark = try! ServerWatermark(data: RawPNG(width: 5, height: 3, colorType: 6) { x, y in [200, 10, 10, UInt8(x * 50 + y)] }.encode())
        static let canvas = Image(format: .png, pixelWidth: 16, pixelHeight: 9, pixels: [UInt8](repeating: 128, count: 16 * 9 * 4), isOpaque: false)

        static func mutated(_ generator: inout SplitMix, from pool: [String], parts: ClosedRange<Int>) -> String {
            (0..<Int.random(in: parts, using: &generator)).map { _ in
                if Int.random(in: 0..<10, using: &generator) == 0 {
                    return String(UnicodeScalar(UInt8.random(in: 0...255, using: &generator)))
                }
                return pool.randomElement(using: &generator)!
            }.joined()
        }

        // Each loop runs off the cooperative pool (seconds of synchronous work would stall the
        // other tests' tasks) and returns what it found; the expectations are made here.
        @Test func processSpecsNeverTrapAndRefuseWithAStep() async {
            let problems = await offPool { () -> [String] in
                var generator = SplitMix(seed: 25), problems: [String] = []
                for _ in 0..<12_000 * Self.scale {
                    let spec = Self.mutated(&generator, from: Self.fragments, parts: 1...12)
                    do throws(ImageProcessingError) {
                        // Whatever parses has identifiers and sizes that never trap either.
                        for processor in try ImageProcessorSpec.parse(spec) {
                            if processor.identifier.isEmpty { problems.append("'\(spec)': empty identifier") }
                            _ = processor.outputSize(width: 7000, height: 1)
                            _ = processor.outputSize(width: 1, height: Int(Int32.max))
                        }
                    } catch {
                        guard case .invalidSpec = error else { problems.append("'\(spec)': \(error) is not invalidSpec"); continue }
                    }
                }
                return problems
            }
            #expect(problems.isEmpty, "\(problems.prefix(5))")
        }

        @Test func queriesNeverTrapAndEveryAcceptedOneHasOneKey() async {
            let (accepted, marked, problems) = await offPool { () -> (Int, Int, [String]) in
                var generator = SplitMix(seed: 26), accepted = 0, marked = 0, problems: [String] = []
                for _ in 0..<20_000 * Self.scale {
                    var query: [(String, String)] = []
                    for _ in 0..<Int.random(in: 0...6, using: &generator) {
                        let name = Self.names.randomElement(using: &generator)!
                        let value = Bool.random(using: &generator)
                            ? Self.values.randomElement(using: &generator)!
                            : (name == "process" ? Self.mutated(&generator, from: Self.fragments, parts: 1...8)
                                : Self.mutated(&generator, from: Self.values + Self.fragments, parts: 1...3))
                        query.append((name, value))
                    }
                    if Int.random(in: 0..<3, using: &generator) > 0 { query.insert(("url", Self.values[Int.random(in: 0..<2, using: &generator)]), at: 0) }
                    do throws(ImageServerError) {
                        let parameters = try ImageParameters(query: Self.presets.expand(query), maxSide: 8192)
                        accepted += 1
                        let key = parameters.cacheKey(negotiated: "jpeg", watermark: Self.mark.digest)
                        if key != parameters.cacheKey(negotiated: "jpeg", watermark: Self.mark.digest) || key == parameters.cacheKey(negotiated: "webp") {
                            problems.append("\(query): the key is not one stable value")
                        }
                        // What the parser accepted is priced (each step's size) without trapping either.
                        let finishing = parameters.finishingSteps(for: .jpeg, watermark: Self.mark)
                        for processor in parameters.leadingSteps + finishing {
                            _ = processor.outputSize(width: 8192, height: 8192)
                            _ = processor.workingBytes(width: 8192, height: .max)
                        }
                        // An accepted watermark blends without trapping, whatever its offsets and scale.
                        for step in finishing where step.identifier.hasPrefix("watermark(") {
                            marked += 1
                            do { _ = try Self.canvas.processed(by: [step]) } catch { problems.append("\(query): \(error)") }
                        }
                    } catch {
                        if !(400..<500).contains(error.status) { problems.append("\(query): \(error)") }
                    }
                }
                return (accepted, marked, problems)
            }
            #expect(problems.isEmpty, "\(problems.prefix(5))")
            #expect(accepted > 100, "the generator reaches accepted queries too (\(accepted))")
            #expect(marked > 5, "and accepted watermarks (\(marked))")
        }

        @Test func signaturesOfMutatedPathsNeverTrapAndNeverVerifyByAccident() async {
            let problems = await offPool { () -> [String] in
                let signer = URLSigner(keys: [Data("k1".utf8), Data("k2".utf8)])
                var generator = SplitMix(seed: 27), problems: [String] = []
                for _ in 0..<5_000 * Self.scale {
                    let path = "/img?" + Self.mutated(&generator, from: Self.fragments + Self.values + ["&s=", "s=", "&"], parts: 0...10)
                    let signed = signer.sign(path)
                    if !signer.verify(signed) { problems.append("\(path): its own signature does not verify") }
                    // A signature moved onto another path, or cut, does not verify.
                    if let range = signed.range(of: "s=", options: .backwards) {
                        let signature = String(signed[range.upperBound...])
                        if signer.verify(path + "x&s=" + signature) { problems.append("\(path): verifies on another path") }
                        if signer.verify(path + "&s=" + signature.dropLast()) { problems.append("\(path): verifies cut") }
                    }
                    _ = signer.verify(path)  // whatever it says, it does not trap
                }
                return problems
            }
            #expect(problems.isEmpty, "\(problems.prefix(5))")
        }
    }
}
