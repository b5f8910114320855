import Foundation

/// Header parsers for the formats whose metadata sits in simple containers (JPEG markers, PNG
/// chunks, GIF blocks, WebP RIFF chunks). Every read is bounds-checked; malformed structure
/// leaves a field `nil`, never traps.
extension ImageProperties {
    mutating func readJPEG(_ data: Data) {
        orientation = EXIFOrientation.read(fromJPEG: data)
        hasICCProfile = false
        let iccSignature = Array("ICC_PROFILE".utf8) + [0]
        data.withUnsafeBytes { raw in
            let b = raw.bindMemory(to: UInt8.self)
            JPEGSegments.walk(b) { marker, payload, _ in
                if marker == 0xE2, JPEGSegments.payload(b, payload, startsWith: iccSignature) { hasICCProfile = true }
                let isFrame = (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker)
                if isFrame, payload.count >= 6 {
                    bitDepth = Int(b[payload.lowerBound])
                    colorModel = switch b[payload.lowerBound + 5] { case 1: .gray; case 4: .cmyk; default: .rgb }
                }
                return true
            }
        }
    }

    mutating func readPNG(_ data: Data) {
        orientation = EXIFOrientation.read(fromPNG: data)
        hasICCProfile = false
        data.withUnsafeBytes { raw in
            let b = raw.bindMemory(to: UInt8.self)
            guard b.count >= 29 else { return }
            bitDepth = Int(b[24])
            colorModel = switch b[25] { case 0: .gray; case 2: .rgb; case 3: .indexed; case 4: .grayAlpha; default: .rgba }
            PNGChunks.walkHeaders(raw) { type, _, data in
                if type == PNGChunks.Types.iccp { hasICCProfile = true }
                if type == PNGChunks.Types.actl, data.count >= 8 {  // APNG: num_frames, then num_plays
                    loopCount = Int(PNGChunks.readUInt32(raw, data.lowerBound + 4))
                }
                return type != PNGChunks.Types.idat
            }
        }
    }

    mutating func readGIF(_ data: Data) {
        colorModel = .indexed
        hasICCProfile = false
        let head = [UInt8](data.prefix(64 << 10))
        guard head.count >= 13 else { return }
        bitDepth = head[10] & 0x80 != 0 ? Int(head[10] & 7) + 1 : 8
        // The NETSCAPE2.0 loop extension: "NETSCAPE2.0", then a sub-block [3, 1, lo, hi].
        let name = Array("NETSCAPE2.0".utf8)
        if header.frameCount > 1 {
            loopCount = 1
            if head.count > name.count + 5, let at = (0...(head.count - name.count - 5)).first(where: { head[$0..<($0 + name.count)].elementsEqual(name) }),
               head[at + name.count] == 3, head[at + name.count + 1] == 1 {
                loopCount = Int(head[at + name.count + 2]) | Int(head[at + name.count + 3]) << 8
            }
        }
    }

    mutating func readWebP(_ data: Data) {
        bitDepth = 8
        colorModel = header.hasAlpha ? .rgba : .rgb
        let container = WebPContainer(data, frames: false)
        orientation = data.withUnsafeBytes { EXIFOrientation.orientation(inWebP: $0, exif: container.exif) }
        hasICCProfile = container.extendedFlags.map { $0 & 0x20 != 0 } ?? false
        if let loops = container.loopCount { loopCount = loops }
    }
}
