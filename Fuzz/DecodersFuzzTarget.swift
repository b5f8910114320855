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
private let incremental: [(any ProgressiveImageDecoding, ImageFormat)] = [(JPEGCoder(), .jpeg), (WebPCoder(), .webp), (PNGCoder(), .png)]

/// `WEBIMAGE_FUZZ_ONLY=jpeg|png|gif|webp|avif|heif|tiff|jxl|apng|bmp|ico|cur` (scripts/fuzz)
/// fuzzes that decoder alone (its frame-by-frame decoder too, for the animated formats).
private let only: (any ImageDecoding)? = switch ProcessInfo.processInfo.environment["WEBIMAGE_FUZZ_ONLY"] {
case "jpeg": JPEGCoder()
case "png": PNGCoder()
case "gif": GIFCoder()
case "webp": WebPCoder()
case "avif": AVIFCoder()
case "heif": HEIFCoder()
case "tiff": TIFFCoder()
case "jxl": JXLCoder()
case "apng": APNGCoder()
case "bmp": BMPCoder()
case "ico", "cur": ICOCoder()
default: nil
}

/// `WEBIMAGE_FUZZ_ONLY=animated|incremental` fuzzes the frame-by-frame or the incremental
/// decoders alone.
private let path = ProcessInfo.processInfo.environment["WEBIMAGE_FUZZ_ONLY"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoders(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let data = Data(bytes: bytes, count: count)
    if path == "animated" { fuzzAnimations(data); return 0 }
    if path == "incremental" { fuzzIncremental(data); return 0 }
    if let only {
        _ = try? ImageProperties.read(from: data)
        _ = try? only.readHeader(data)
        _ = try? only.decode(data, options: options)
        _ = try? only.decode(data, options: thumbnail)
        walkAnimation(only, data)
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
    fuzzAnimations(data)
    fuzzIncremental(data)
    return 0
}

private func fuzzAnimations(_ data: Data) {
    for decoder in decoders { walkAnimation(decoder, data) }
}

/// The animation frame by frame: every duration, then frames forward (as many as the full
/// decode's pixel limit, canvas × frames, allows: no frame-count cap, so long animations and
/// their timestamps are explored as far as real files go), then back to the start and to the last.
private func walkAnimation(_ decoder: any ImageDecoding, _ data: Data) {
    guard let animation = try? decoder.animatedDecoder(for: data, options: options) else { return }
    for index in 0..<animation.frameCount { _ = animation.duration(at: index) }
    let canvas = max(animation.pixelWidth * animation.pixelHeight, 1)
    let count = min(animation.frameCount, max(options.maxPixelCount / canvas, 1))
    for index in 0..<count { _ = try? animation.frame(at: index) }
    if count > 1 {
        _ = try? animation.frame(at: 0)
        _ = try? animation.frame(at: count - 1)
    }
}

private func fuzzIncremental(_ data: Data) {
    // Incremental decoders fed the input in uneven chunks, with a preview after each.
    for (decoder, format) in incremental {
        guard let session = decoder.makeIncrementalDecoder(for: format, options: options) else { continue }
        var offset = 0, size = 1
        while offset < data.count {
            let end = min(data.count, offset + size)
            session.append(data.subdata(in: offset..<end))
            _ = session.partialImage()
            (offset, size) = (end, size * 3 + 1)
        }
    }
}
