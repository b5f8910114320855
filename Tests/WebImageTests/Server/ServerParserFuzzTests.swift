import Foundation
import Testing
import WebImage
import WebImageServer

extension ServerTests {
    /// What a stranger writes into `/img`'s query, `process=` and `s=`, generated: thousands of
    /// mutated queries through the real parsers, the signature check, the budget
    /// and the cache key. Nothing may trap (a trap ends the test process), every refusal is a
    /// typed 4xx, and everything accepted has one stable key. Seeded, so a failure reproduces.
    @Suite("Image server: parameter, process= and signature fuzzing")
    struct ServerParserFuzzTests {
        /// A small deterministic generator (SplitMix64): the same seed, the same inputs.
        struct Seeded: RandomNumberGenerator {
            var state: UInt64
            mutating func next() -> UInt64 {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
        }

        static let fragments = [
            "resize:", "crop:", "flip:", "rotate:", "round:", "circle", "blur:", "tint:", "grayscale", "square",
            ",", ":", "x", "fill", "fit", "exact", "upscale", "h", "v", "-", ".", "e", "E", "+", "0", "1", "9",
            "256", "8192", "65535", "2147483647", "9223372036854775807", "99999999999999999999", "1e300", "-1e300",
            "inf", "nan", "0x10", "ffffff", "ff000080", "%", "%2C", "%3A", "&", "=", "#", "\u{0}", "\u{1F}", "é", "🙂", " ",
        ]
        static let names = ["url", "w", "h", "fit", "format", "q", "process", "s", "W", "url ", "", "x"]
        static let values = [
            "http://127.0.0.1/a.png", "https://example.com/a.jpg?x=1&w=4", "http://u:p@127.0.0.1/a.png", "ftp://x/y",
            "http://[::1]:80/a", "http://127.0.0.1:99999/a", "http://%00/", "HTTP://EXAMPLE.COM./A%2Fb", "", "0", "-1",
            "1", "8192", "8193", "9223372036854775807", "1e300", "inside", "cover", "fill", "auto", "jpeg", "avif", "gif", "100", "101",
        ]

        static func mutated(_ generator: inout Seeded, from pool: [String], parts: ClosedRange<Int>) -> String {
            (0..<Int.random(in: parts, using: &generator)).map { _ in
                if Int.random(in: 0..<10, using: &generator) == 0 {
                    return String(UnicodeScalar(UInt8.random(in: 0...255, using: &generator)))
                }
                return pool.randomElement(using: &generator)!
            }.joined()
        }

        @Test func processSpecsNeverTrapAndRefuseWithAStep() {
            var generator = Seeded(state: 25)
            for _ in 0..<12_000 {
                let spec = Self.mutated(&generator, from: Self.fragments, parts: 1...12)
                do {
                    let processors = try ImageProcessorSpec.parse(spec)
                    // Whatever parses has identifiers and sizes that never trap either.
                    for processor in processors {
                        #expect(!processor.identifier.isEmpty)
                        _ = processor.outputSize(width: 7000, height: 1)
                        _ = processor.outputSize(width: 1, height: Int(Int32.max))
                    }
                } catch {
                    guard case .invalidSpec = error else {
                        Issue.record("'\(spec)': \(error) is not invalidSpec")
                        continue
                    }
                }
            }
        }

        @Test func queriesNeverTrapAndEveryAcceptedOneHasOneKey() {
            var generator = Seeded(state: 26)
            var accepted = 0
            for _ in 0..<20_000 {
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
                do {
                    let parameters = try ImageParameters(query: query, maxSide: 8192)
                    accepted += 1
                    let key = parameters.cacheKey(negotiated: "jpeg")
                    #expect(key == parameters.cacheKey(negotiated: "jpeg"))
                    #expect(key != parameters.cacheKey(negotiated: "webp"))
                    // What the parser accepted is priced (each step's size) without trapping either.
                    for processor in parameters.processors { _ = processor.outputSize(width: 8192, height: 8192) }
                } catch {
                    #expect((400..<500).contains(error.status), "\(query): \(error)")
                }
            }
            #expect(accepted > 100, "the generator reaches accepted queries too (\(accepted))")
        }

        @Test func signaturesOfMutatedPathsNeverTrapAndNeverVerifyByAccident() {
            let signer = URLSigner(keys: [Data("k1".utf8), Data("k2".utf8)])
            var generator = Seeded(state: 27)
            for _ in 0..<5_000 {
                let path = "/img?" + Self.mutated(&generator, from: Self.fragments + Self.values + ["&s=", "s=", "&"], parts: 0...10)
                let signed = signer.sign(path)
                #expect(signer.verify(signed), "\(path)")
                // A signature moved onto another path, or cut, does not verify.
                let other = path + "x"
                if let range = signed.range(of: "s=", options: .backwards) {
                    let signature = String(signed[range.upperBound...])
                    #expect(!signer.verify(other + "&s=" + signature), "\(path)")
                    #expect(!signer.verify(path + "&s=" + signature.dropLast()), "\(path)")
                }
                _ = signer.verify(path)  // whatever it says, it does not trap
            }
        }
    }
}
