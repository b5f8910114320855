import Foundation
import Testing
@testable import WebImage

/// References and properties of a HEIF-family file are limited before libheif or libavif parse
/// it (red team, stop 52): libheif decodes an item once for each reference to it and applies
/// every transform an item lists, so an overlay of 1,000 references to one 1400 × 1400 image (a
/// 7 KB HEIC) took 25 s, 65,535 references (394 KB) would take 27 minutes, and 250 rotations and
/// mirrors on a grid over a minute. A grid or overlay of AVIF is decoded in a worker at any size.
@Suite("HEIF and AVIF: references and properties are limited before parsing")
struct ISOReferenceLimitTests {
    typealias Boxes = ISOItemLimitTests

    /// An `iref` (version 0) of one `kind` entry from item 1 to `targets`.
    static func iref(_ targets: [Int], kind: String = "dimg") -> [UInt8] {
        var body: [UInt8] = [0, 1, UInt8(targets.count >> 8), UInt8(targets.count & 0xFF)]
        for target in targets { body += [UInt8(target >> 8), UInt8(target & 0xFF)] }
        let entry = Boxes.box(kind, body)
        return Boxes.fullBox("iref", version: 0, entry)
    }

    /// An `ipma` (version 0, 1-byte indices) giving item 1 `count` properties.
    static func ipma(properties count: Int) -> [UInt8] {
        let indices: [UInt8] = (0..<count).map { UInt8(1 + $0 % 100) }
        return Boxes.box("iprp", Boxes.box("ipco", []) + Boxes.fullBox("ipma", version: 0, Boxes.be32(1) + [0, 1, UInt8(count)] + indices))
    }

    static func reason(_ file: Data) -> String? {
            let failure: ImageDecodingError? = file.withUnsafeBytes { raw in
                do throws(ImageDecodingError) {
                    try ISOItemLimit.check(raw, format: .heic)
                    return nil
                } catch {
                    return error
                }
            }
            guard let failure else { return nil }
            guard case .corrupt(_, let reason) = failure else { return "\(failure)" }
            return reason
    }

    @Test func referencesCountAgainstTheItemLimit() {
        #expect(Self.reason(Boxes.file(brand: "heic", Self.iref(Array(2...2_000)))) == nil)
        #expect(Self.reason(Boxes.file(brand: "heic", Self.iref(Array(2...2_002))))?.contains("2001 items or references") == true)
    }

    @Test func oneItemReferencedOftenIsRefused() {
        #expect(Self.reason(Boxes.file(brand: "heic", Self.iref([Int](repeating: 2, count: 64) + [3, 4]))) == nil)
        #expect(Self.reason(Boxes.file(brand: "heic", Self.iref([Int](repeating: 2, count: 65))))?.contains("referenced 65 times") == true)
    }

    @Test func anItemOfManyPropertiesIsRefused() {
        #expect(Boxes.file(brand: "heic", Self.ipma(properties: 250)).withUnsafeBytes { ISOItemLimit.mostProperties($0) } == 250)
        #expect(Self.reason(Boxes.file(brand: "heic", Self.ipma(properties: 32))) == nil)
        #expect(Self.reason(Boxes.file(brand: "heic", Self.ipma(properties: 33)))?.contains("33 properties") == true)
    }

    @Test func derivedImagesAreTold() {
        #expect(Boxes.file(brand: "avif", Self.iref([2, 3])).withUnsafeBytes { ISOItemLimit.hasDerivedImages($0) })
        #expect(!Boxes.file(brand: "avif", Self.iref([2], kind: "auxl")).withUnsafeBytes { ISOItemLimit.hasDerivedImages($0) })
        #expect(!Boxes.file(brand: "avif", []).withUnsafeBytes { ISOItemLimit.hasDerivedImages($0) })
    }
}
