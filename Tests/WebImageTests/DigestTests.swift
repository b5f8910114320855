import Foundation
import Testing
import WebImage

/// SHA-256 and HMAC-SHA256 (libcrypto, `Internal/Digests`) against published vectors (FIPS 180-2,
/// RFC 4231; each also checked with Python's hashlib and hmac), and the hasher's value semantics.
@Suite("Digests")
struct DigestTests {
    static func hex(_ text: String) -> String { Hex.lowercase(SHA256.hash(Data(text.utf8))) }

    @Test func sha256MatchesThePublishedVectors() {
        #expect(Self.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Self.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        var million = SHA256()
        for _ in 0..<1000 { million.update(Data(repeating: UInt8(ascii: "a"), count: 1000)) }
        #expect(Hex.lowercase(million.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func aCopiedHasherGoesOnIndependentlyAndFinalizingDoesNotEndIt() {
        var first = SHA256()
        first.update(Data("abc".utf8))
        var second = first
        #expect(Hex.lowercase(first.finalize()) == Self.hex("abc"))
        second.update(Data("def".utf8))
        #expect(Hex.lowercase(second.finalize()) == Self.hex("abcdef"))
        #expect(Hex.lowercase(first.finalize()) == Self.hex("abc"), "the copy's update did not reach the original")
        first.update(Data("def".utf8))
        #expect(Hex.lowercase(first.finalize()) == Self.hex("abcdef"), "finalize left the hasher usable")
        var split = SHA256()
        split.update(Data("ab".utf8) + Data("c".utf8))  // a Data of several regions is hashed whole
        #expect(split.finalize() == SHA256.hash(Data("abc".utf8)))
    }

    @Test func hmacMatchesRFC4231IncludingAKeyLongerThanTheBlock() {
        let short = HMACSHA256.code(for: Data("Hi There".utf8), key: Data(repeating: 0x0B, count: 20))
        #expect(Hex.lowercase(short) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        let message = Data("Test Using Larger Than Block-Size Key - Hash Key First".utf8)
        let long = HMACSHA256.code(for: message, key: Data(repeating: 0xAA, count: 131))
        #expect(Hex.lowercase(long) == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        #expect(Hex.lowercase(HMACSHA256.code(for: Data(), key: Data())) == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test func verificationRefusesAnyOtherCodeOrLength() {
        let key = Data("secret".utf8), message = Data("/img?url=x".utf8)
        let code = HMACSHA256.code(for: message, key: key)
        #expect(HMACSHA256.isValid(code, for: message, key: key))
        var altered = code
        altered[31] ^= 1
        #expect(!HMACSHA256.isValid(altered, for: message, key: key))
        #expect(!HMACSHA256.isValid(code.prefix(16), for: message, key: key))
        #expect(!HMACSHA256.isValid([UInt8](), for: message, key: key))
        #expect(!HMACSHA256.isValid(code, for: message, key: Data("Secret".utf8)))
    }
}
