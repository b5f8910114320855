// libFuzzer entry point over format sniffing and every decoder (built by scripts/fuzz).
//
// The Coding sources are compiled into the same module as this file, so the coders are called
// directly. Any crash, sanitizer report, leak or hang is a bug: bad input must end in an
// ImageDecodingError.
import Foundation

/// A small limit keeps each run fast; lying headers must still be refused before allocation.
private let options = ImageDecodingOptions(maxPixelCount: 4_000_000)
private let thumbnail = ImageDecodingOptions(maxPixelCount: 4_000_000, thumbnailMaxPixelSize: 32)
private let strict = ImageDecodingOptions(maxPixelCount: 4_000_000, strict: true)
private let decoders: [any ImageDecoding] = [JPEGCoder(), PNGCoder(), GIFCoder(), WebPCoder(), AVIFCoder(), HEIFCoder()]
    + [TIFFCoder(), JXLCoder()] + [APNGCoder(), BMPCoder(), ICOCoder()]
private let progressive: [any ProgressiveImageDecoding] = [JPEGCoder(), PNGCoder(), WebPCoder()]

/// `WEBIMAGE_FUZZ_ONLY=tiff|jxl|apng|bmp|ico|cur` (scripts/fuzz) fuzzes that decoder alone.
private let only: (any ImageDecoding)? = switch ProcessInfo.processInfo.environment["WEBIMAGE_FUZZ_ONLY"] {
case "tiff": TIFFCoder()
case "jxl": JXLCoder()
case "apng": APNGCoder()
case "bmp": BMPCoder()
case "ico", "cur": ICOCoder()
default: nil
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoders(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let data = Data(bytes: bytes, count: count)
    if let only {
        _ = try? ImageProperties.read(from: data)
        _ = try? only.readHeader(data)
        _ = try? only.decode(data, options: options)
        _ = try? only.decode(data, options: thumbnail)
        return 0
    }
    _ = ImageFormat(sniffing: data)
    _ = try? ImageCoderRegistry.default.readHeader(data)
    if let image = try? ImageCoderRegistry.default.decode(data, options: options) {
        // Whatever decodes must be consistent enough to re-encode.
        precondition(image.pixels.count >= image.bytesPerRow * (image.pixelHeight - 1) + image.pixelWidth * 4)
        precondition(image.frames.allSatisfy { $0.pixels.count == image.pixelWidth * image.pixelHeight * 4 })
    }
    // Every decoder sees every input, whatever its format, as a misdirected registry would pass it.
    _ = try? ImageProperties.read(from: data)
    _ = try? ImageCoderRegistry.default.decode(data, options: strict)
    for decoder in decoders {
        _ = try? decoder.readHeader(data)
        _ = try? decoder.decode(data, options: options)
        _ = try? decoder.decode(data, options: thumbnail)
    }
    for decoder in progressive { _ = decoder.decodePartial(data, options: options) }
    return 0
}
