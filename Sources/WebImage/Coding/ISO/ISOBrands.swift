/// HEIF-family files named by their compatible brands: an ISO-BMFF `ftyp` box whose major
/// brand is the generic `mif1`/`msf1` (or anything else) but whose compatible-brands list
/// names `avif`/`avis` (AVIF) or `heic`/`heix`/`hevc`/`hevx` (HEIC), as many encoders write.
///
/// ```swift
/// ISOBrands.format(head: Array(data.prefix(64)))   // .avif for major "mif1", compatible ["avif"]
/// ```
enum ISOBrands {
    static let avif: Set<String> = ["avif", "avis"]
    static let heic: Set<String> = ["heic", "heix", "hevc", "hevx"]

    /// The format the compatible brands name (the first that does), when the major brand names none.
    static func format(head: [UInt8]) -> ImageFormat? {
        guard head.count >= 16, head[4..<8].elementsEqual(Array("ftyp".utf8)) else { return nil }
        let boxSize = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        let major = String(decoding: head[8..<12], as: UTF8.self)
        guard !avif.contains(major), !heic.contains(major) else { return nil }
        var offset = 16
        while offset + 4 <= min(boxSize, head.count) {
            let brand = String(decoding: head[offset..<(offset + 4)], as: UTF8.self)
            if avif.contains(brand) { return .avif }
            if heic.contains(brand) { return .heic }
            offset += 4
        }
        return nil
    }
}
