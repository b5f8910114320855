internal import CSpng

/// The chunks of a PNG stream, walked one at a time without decoding and without keeping them:
/// what the APNG coder reads its animation from (a hostile file can hold millions of chunks)
/// and writes new streams with.
///
/// A chunk is a 4-byte big-endian length, a 4-byte type, the data and a CRC-32 of type and data.
/// The walk stops at `IEND`, at the end of the data, or at a chunk that does not fit (then
/// ``truncated`` is set); it never reads past the buffer.
///
/// ```swift
/// var walk = PNGChunks(bytes)
/// while let chunk = walk.next() { if chunk.type == PNGChunks.type("IDAT") { … } }
/// ```
struct PNGChunks {
    struct Chunk {
        var type: UInt32
        /// Where the chunk's data lies in the buffer that was walked.
        var data: Range<Int>
        var crcIsValid: Bool
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    private let bytes: UnsafeRawBufferPointer
    /// Where the next chunk starts; nil once the walk has ended.
    private var offset: Int?
    /// `true` when the data ends inside a chunk or before `IEND`.
    private(set) var truncated = false

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        if bytes.count >= 8, bytes.prefix(8).elementsEqual(Self.signature) { offset = 8 } else { truncated = true }
    }

    /// The next chunk, its CRC checked; nil at the end of the walk.
    mutating func next() -> Chunk? {
        guard let start = offset else { return nil }
        guard bytes.count - start >= 12 else { return end(truncated: true) }
        let length = Int(Self.readUInt32(bytes, start))
        let type = Self.readUInt32(bytes, start + 4)
        guard length <= bytes.count - start - 12 else { return end(truncated: true) }
        let data = (start + 8)..<(start + 8 + length)
        let stored = Self.readUInt32(bytes, data.upperBound)
        let crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[(start + 4)..<data.upperBound]))
        offset = type == Self.iend ? nil : data.upperBound + 4
        return Chunk(type: type, data: data, crcIsValid: crc == stored)
    }

    private static let iend = type("IEND")

    /// Chunk types the walks over a PNG compare with, as numbers computed once (a hostile file
    /// holds millions of chunks; a `String` made for each cost more than the walk).
    enum Types {
        static let idat = type("IDAT"), iend = type("IEND"), srgb = type("sRGB"), gama = type("gAMA")
        static let chrm = type("cHRM"), iccp = type("iCCP"), actl = type("acTL"), exif = type("eXIf")
    }

    private mutating func end(truncated: Bool) -> Chunk? {
        self.truncated = truncated
        offset = nil
        return nil
    }

    static func readUInt32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    static func readUInt16(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    /// A chunk type as its big-endian number: `type("IDAT")`.
    static func type(_ name: StaticString) -> UInt32 {
        name.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
    }

    /// Appends one chunk (length, type, data, CRC) to `out`; without `checksummed` the CRC is 0
    /// (for streams only given to a decoder told not to check).
    static func append(_ type: UInt32, _ data: [UInt8], to out: inout [UInt8], checksummed: Bool = true) {
        appendUInt32(UInt32(data.count), to: &out)
        let start = out.count
        appendUInt32(type, to: &out)
        out.append(contentsOf: data)
        let crc = checksummed ? out.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[start...])) } : 0
        appendUInt32(crc, to: &out)
    }

    static func appendUInt32(_ value: UInt32, to out: inout [UInt8]) {
        out.append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }

    static func appendUInt16(_ value: UInt16, to out: inout [UInt8]) {
        out.append(contentsOf: [UInt8(value >> 8), UInt8(value & 0xFF)])
    }
}

/// CRC-32 (ISO 3309, polynomial 0xEDB88320), as PNG chunks use it: zlib's `crc32_z`, the one
/// libspng and libpng check chunks with (about twice the speed of slicing by 8 in Swift; APNG
/// decode checks every chunk of the file).
enum CRC32 {
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress else { return 0 }
        return UInt32(truncatingIfNeeded: crc32_z(0, base.assumingMemoryBound(to: UInt8.self), bytes.count))
    }
}
