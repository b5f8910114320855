import CCRC32C
import Foundation
import Testing

/// The disk cache's checksum: CRC-32C through ISA-L and through our own three-lane loop, both
/// against a bit-by-bit reference, at lengths around the loop's block edges and split anywhere.
@Suite("Content checksum (CRC-32C)")
struct ContentChecksumTests {
    /// CRC-32C one bit at a time: the definition, independent of both implementations.
    static func reference(_ crc: UInt32, _ bytes: ArraySlice<UInt8>) -> UInt32 {
        var state = ~crc
        for byte in bytes {
            state ^= UInt32(byte)
            for _ in 0..<8 { state = state & 1 == 1 ? (state >> 1) ^ 0x82F6_3B78 : state >> 1 }
        }
        return ~state
    }

    typealias Implementation = @Sendable (UInt32, UnsafeRawPointer?, Int) -> UInt32

    static func crc(_ implementation: Implementation, _ seed: UInt32, _ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes { implementation(seed, $0.baseAddress, $0.count) }
    }

    static let implementations: [(String, Implementation)] = [
        ("dispatching", { webimage_crc32c($0, $1, $2) }),
        ("builtin", { webimage_crc32c_builtin($0, $1, $2) }),
    ]

    @Test func theStandardCheckValue() {
        let digits = Array("123456789".utf8)[...]
        for (name, implementation) in Self.implementations {
            #expect(Self.crc(implementation, 0, digits) == 0xE306_9283, "\(name)")
        }
        #expect(Self.reference(0, digits) == 0xE306_9283)
    }

    @Test func everyLengthAndSplitAgreesWithTheDefinition() {
        var generator = SystemRandomNumberGenerator()
        let buffer = (0..<40_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        // Around the builtin loop's blocks (3 × 2048 bytes) and ISA-L's threshold (1024 bytes).
        var lengths = [0, 1, 7, 8, 9, 1023, 1024, 1025]
        for block in 1...5 { lengths += [block * 6144 - 9, block * 6144 - 1, block * 6144, block * 6144 + 1, block * 6144 + 15] }
        lengths += (0..<40).map { _ in Int.random(in: 0..<39_000, using: &generator) }
        for length in lengths {
            let offset = Int.random(in: 0..<64, using: &generator)  // unaligned starts too
            let bytes = buffer[offset..<(offset + length)]
            let seed: UInt32 = length % 2 == 0 ? 0 : .random(in: 0...UInt32.max, using: &generator)
            let expected = Self.reference(seed, bytes)
            let cut = offset + (length == 0 ? 0 : Int.random(in: 0...length, using: &generator))
            for (name, implementation) in Self.implementations {
                #expect(Self.crc(implementation, seed, bytes) == expected, "\(name), length \(length)")
                let first = Self.crc(implementation, seed, buffer[offset..<cut])
                #expect(Self.crc(implementation, first, buffer[cut..<(offset + length)]) == expected, "\(name) split, length \(length)")
            }
        }
    }

    /// `scripts/setup` installs ISA-L, so the fast path is the one tested and measured.
    @Test func isaLIsUsedWhereInstalled() {
        let installed = dlopen("libisal.so.2", RTLD_NOW) != nil
        #expect(installed, "scripts/setup installs libisal2")
        #expect((webimage_crc32c_uses_isal() == 1) == installed)
    }
}
