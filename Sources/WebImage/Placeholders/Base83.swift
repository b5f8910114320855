/// BlurHash's base-83 digits: most significant digit first, alphabet `0-9A-Za-z#$%*+,-.:;=?@[]^_{|}~`.
enum Base83 {
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".utf8)

    /// Each ASCII byte's digit value, or -1.
    static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = Int8(index) }
        return table
    }()

    /// `value` as exactly `length` digits (`value` must be below 83^length).
    static func encode(_ value: Int, length: Int, into out: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<max(1, length) { divisor *= 83 }
        for _ in 0..<length {
            out.append(alphabet[(value / divisor) % 83])
            divisor /= 83
        }
    }

    /// The number `digits` spell; throws on a byte outside the alphabet. At most 4 digits are read
    /// at a time by the decoder (83^4 fits easily in `Int`).
    static func decode(_ digits: ArraySlice<UInt8>) throws(PlaceholderError) -> Int {
        var value = 0
        for byte in digits {
            let digit = values[Int(byte)]
            guard digit >= 0 else {
                throw .invalidCharacter(byte >= 0x20 && byte < 0x7F ? String(UnicodeScalar(byte)) : "byte 0x" + String(byte, radix: 16, uppercase: true))
            }
            value = value * 83 + Int(digit)
        }
        return value
    }
}
