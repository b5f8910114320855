/// Bytes as lowercase hexadecimal, two digits a byte: the digests in cache keys, ETags and
/// request signatures. `String(format: "%02x")` parsed a format string for every byte (32 of
/// them for one SHA-256 in a key, about a microsecond each).
package enum Hex {
    package static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        let digits: StaticString = "0123456789abcdef"
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        digits.withUTF8Buffer { digits in
            for byte in bytes {
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0xF)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
