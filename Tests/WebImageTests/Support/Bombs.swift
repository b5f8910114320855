import Foundation

/// Tiny files whose headers declare enormous images.
enum PNGBomb {
    /// A PNG signature and a valid IHDR (with CRC) for an 8-bit RGBA image, then IEND.
    static func header(width: UInt32, height: UInt32) -> Data {
        var data = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var ihdr = Data("IHDR".utf8)
        ihdr.append(contentsOf: width.bigEndianBytes + height.bigEndianBytes + [8, 6, 0, 0, 0])
        data.append(contentsOf: UInt32(13).bigEndianBytes)
        data.append(ihdr)
        data.append(contentsOf: crc32(ihdr).bigEndianBytes)
        let iend = Data("IEND".utf8)
        data.append(contentsOf: UInt32(0).bigEndianBytes)
        data.append(iend)
        data.append(contentsOf: crc32(iend).bigEndianBytes)
        return data
    }

    static func crc32(_ bytes: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

enum JPEGBomb {
    /// SOI, a minimal quantisation table, a baseline SOF0 declaring the size, and a Huffman-free
    /// stub: enough for the header to be read, far too little to decode.
    static func header(width: UInt16, height: UInt16) -> Data {
        var data: [UInt8] = [0xFF, 0xD8]
        data += [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64)
        data += [0xFF, 0xC0, 0x00, 0x11, 0x08] + height.bigEndianBytes + width.bigEndianBytes
        data += [0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x00, 0x03, 0x11, 0x00]
        data += [0xFF, 0xDA, 0x00, 0x0C, 0x03, 0x01, 0x00, 0x02, 0x11, 0x03, 0x11, 0x00, 0x3F, 0x00]
        data += [0xFF, 0xD9]
        return Data(data)
    }
}

extension FixedWidthInteger {
    var bigEndianBytes: [UInt8] {
        withUnsafeBytes(of: self.bigEndian) { Array($0) }
    }
}
