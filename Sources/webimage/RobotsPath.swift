/// The form robots.txt patterns and URL paths are compared in (RFC 9309 §2.2.2): a
/// percent-encoded unreserved character (`A–Z a–z 0–9 - . _ ~`) is decoded, other escapes get
/// upper-case hex digits, and bytes outside ASCII (a UTF-8 pattern) are percent-encoded — so
/// `/%7Ealice` matches `/~alice` and `/café` matches `/caf%C3%A9`. Linear, never longer than 3×.
///
/// ```swift
/// RobotsPath.normalize(Array("/%7ea/%2f/é".utf8))  // "/~a/%2F/%C3%A9"
/// ```
enum RobotsPath {
    private static let hex = Array("0123456789ABCDEF".utf8)

    static func normalize(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count, let high = value(bytes[index + 1]), let low = value(bytes[index + 2]) {
                let decoded = high << 4 | low
                if isUnreserved(decoded) {
                    out.append(decoded)
                } else {
                    out += [byte, hex[Int(high)], hex[Int(low)]]
                }
                index += 3
                continue
            }
            if byte >= 0x80 {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            } else {
                out.append(byte)
            }
            index += 1
        }
        return out
    }

    private static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }
}
