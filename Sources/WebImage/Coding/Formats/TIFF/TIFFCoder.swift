public import Foundation

/// TIFF decoding over libtiff (`TIFFClientOpenExt` over the bytes in memory).
///
/// Everything libtiff's RGBA interface reads decodes: strips and tiles, 1–16-bit samples, grey,
/// palette, RGB, CMYK, YCbCr, associated and unassociated alpha, and every compression the
/// Debian build has (none, LZW, Deflate, PackBits, JPEG, CCITT, LZMA, ZSTD, WebP). What that
/// interface refuses — 12-bit, 32-bit integer and float grey, CMYK over 8 bits — and CIE L\*a\*b\*
/// are read as raw strips and tiles (libtiff still decompressing) and converted by WebImage
/// (`TIFFSampleModel`'s rules: 12-bit at full range, 32-bit integers as 16-bit, floats on
/// 0–255, Lab → sRGB colour-managed as `CIELabConversion` does). Pages become
/// frames: every full-resolution page (reduced-resolution previews are skipped), drawn at the
/// top left of a canvas the size of the first page (larger pages are clipped, smaller ones
/// leave the rest transparent), each shown for 100 ms. The `Orientation` tag is reported in
/// ``Image/orientation`` and not applied, like EXIF orientation elsewhere. The pixel limit is
/// checked against what the pages allocate, from their tags, before any pixel buffer exists (a
/// page counts at the canvas's size, or at its own when it is larger);
/// libtiff's own buffers are capped too. libtiff's messages never reach stderr: errors become
/// ``ImageDecodingError/corrupt(format:reason:)``, warnings swift-log debug messages.
///
/// ```swift
/// let scan = try TIFFCoder().decode(data, options: .init(firstFrameOnly: true))
/// print(scan.frameCount, scan.orientation)
/// ```
public struct TIFFCoder: ImageDecoding {
    /// Pages read at most: a file with more is refused (each costs a directory parse).
    public static let maxPages = 1_000

    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .tiff }

    public func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        try Self.withFile(data, maxAllocation: 16 << 20) { file throws(ImageDecodingError) in
            let pages = try Self.pages(file)
            return Self.header(pages.map(\.page))
        }
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        // libtiff's own buffers (a whole-image strip at most) stay within the pixel budget.
        let maxAllocation = min(max(options.maxPixelCount, 1 << 20), Int.max / 16) * 8
        return try Self.withFile(data, maxAllocation: maxAllocation) { file throws(ImageDecodingError) in
            let all = try Self.pages(file)
            let header = Self.header(all.map(\.page))
            let chosen = Array(all.prefix(options.framesToDecode(of: all.count)))
            // What the decode allocates: every page is drawn on a canvas of the first page's
            // size, and a page of another size is read whole first, so each counts at the
            // larger of the two. (1 × 1 pages after a 7000 × 7000 one cost 49 MP each.)
            let canvasArea = Self.area(header.pixelWidth, header.pixelHeight)
            let area = chosen.reduce(0) { sum, entry in
                let page = Self.area(entry.page.width, entry.page.height)
                let cost = entry.page.width == header.pixelWidth && entry.page.height == header.pixelHeight ? page : max(page, canvasArea)
                return sum > Int.max - cost ? Int.max : sum + cost
            }
            guard area <= options.maxPixelCount else {
                throw .tooManyPixels(
                    width: header.pixelWidth, height: header.pixelHeight, frames: chosen.count, limit: options.maxPixelCount)
            }
            let sizing = FrameSizing(width: header.pixelWidth, height: header.pixelHeight, options: options)
            // 16-bit pages whose profile converts: converted at 16 bits, one page at a time (the
            // profile is the first page's, which applyColor would give every page). Every page
            // must be read so, and none larger than the canvas, or all take the 8-bit path.
            let readsWide = chosen.allSatisfy {
                TIFFFile.readsWide($0.page) && $0.page.width <= header.pixelWidth && $0.page.height <= header.pixelHeight
            }
            let wide = !readsWide ? nil : WideColorConversion.planned(
                width: header.pixelWidth, height: header.pixelHeight, frames: chosen.count, bitDepth: 16, options: options
            ) { EmbeddedColor.read(from: data, format: .tiff) }
            var frames: [ImageFrame] = [], repairs: ImageRepairs = []
            for (index, page) in chosen {
                guard !Task.isCancelled else { throw .cancelled }
                do throws(ImageDecodingError) {
                    try file.select(index)
                    let decoded = if let wide { try Self.pixels(file, page, wide) } else { try Self.pixels(file, page) }
                    let pixels = Self.canvas(decoded, page: page, width: header.pixelWidth, height: header.pixelHeight)
                    frames.append(ImageFrame(pixels: sizing.shrink(pixels), duration: .milliseconds(100)))
                } catch {
                    // A later page libtiff cannot decode (damaged, or samples its RGBA interface
                    // has no conversion for): the pages before it are kept, as Pillow and viewers
                    // showing the first page open the file.
                    guard !frames.isEmpty else { throw error }
                    repairs = try options.allow(.damagedData, in: .tiff, "page \(index + 1): \(error)")
                    break
                }
            }
            var image = Image.decoded(
                format: .tiff, pixelWidth: sizing.targetWidth, pixelHeight: sizing.targetHeight, frames: frames,
                frameCount: header.frameCount, loopCount: 0, scale: options.scale,
                knownOpaque: !chosen.contains { $0.page.hasAlpha } && chosen.allSatisfy { $0.page.width >= header.pixelWidth && $0.page.height >= header.pixelHeight })
            image.orientation = chosen[0].page.orientation
            image.repairs = repairs
            image.sourceColorProfile = wide?.profile  // converted already: applyColor leaves it
            return image
        }
    }

    /// The first page's colour model, bit depth, ICC profile and orientation (tags only).
    static func properties(_ data: Data) throws(ImageDecodingError) -> ImageProperties {
        try withFile(data, maxAllocation: 16 << 20) { file throws(ImageDecodingError) in
            let pages = try Self.pages(file)
            let page = pages[0].page
            let alpha = page.hasAlpha
            let model: ImageProperties.ColorModel = switch page.photometric {
            case 0, 1: alpha ? .grayAlpha : .gray
            case 3: .indexed
            case 5: .cmyk
            default: alpha ? .rgba : .rgb
            }
            return ImageProperties(
                header: Self.header(pages.map(\.page)), colorModel: model, bitDepth: page.bitsPerSample,
                hasICCProfile: page.hasICCProfile, orientation: page.orientation)
        }
    }

    /// The first page's ICC profile bytes (tag 34675 of the first directory), for colour
    /// management: read from the directory's entries directly, every offset checked against the
    /// data (classic TIFF; a BigTIFF's profile is not read).
    static func iccProfile(_ data: Data) -> EmbeddedColor.ICCBytes {
        let bytes = [UInt8](data.prefix(1 << 20))  // the header and the first directory
        guard bytes.count >= 8, bytes[0] == bytes[1], bytes[0] == 0x49 || bytes[0] == 0x4D else { return .none }
        let little = bytes[0] == 0x49
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= bytes.count else { return nil }
            return little ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : Int(bytes[at]) << 8 | Int(bytes[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let low = u16(little ? at : at + 2), let high = u16(little ? at + 2 : at) else { return nil }
            return high << 16 | low
        }
        guard u16(2) == 42, let directory = u32(4), let entries = u16(directory) else { return .none }
        for entry in 0..<entries {
            let at = directory + 2 + 12 * entry
            guard let tag = u16(at) else { return .none }
            guard tag == 34675 else { continue }
            guard let count = u32(at + 4), count > 0, let offset = count <= 4 ? at + 8 : u32(at + 8) else { return .damaged }
            guard count <= ColorProfile.maxByteCount, offset <= data.count - count else { return .damaged }
            return .bytes(data.subdata(in: (data.startIndex + offset)..<(data.startIndex + offset + count)))
        }
        return .none
    }

    // MARK: - Internals

    /// `width × height`, `Int.max` when that overflows.
    private static func area(_ width: Int, _ height: Int) -> Int {
        let (product, overflow) = width.multipliedReportingOverflow(by: height)
        return overflow ? Int.max : product
    }

    private static func withFile<T>(
        _ data: Data, maxAllocation: Int, _ body: (TIFFFile) throws(ImageDecodingError) -> T
    ) throws(ImageDecodingError) -> T {
        guard !data.isEmpty else { throw .empty }
        let result = data.withUnsafeBytes { bytes -> Result<T, ImageDecodingError> in
            do throws(ImageDecodingError) {
                return .success(try body(try TIFFFile(bytes, maxAllocation: maxAllocation)))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Every full-resolution page with its directory index, read from the tags only.
    private static func pages(_ file: TIFFFile) throws(ImageDecodingError) -> [(index: Int, page: TIFFFile.Page)] {
        var pages: [(index: Int, page: TIFFFile.Page)] = []
        var index = 0
        repeat {
            guard index < maxPages else { throw .corrupt(format: .tiff, reason: "more than \(maxPages) pages") }
            let page = try file.page()
            if !page.isReduced || index == 0 { pages.append((index, page)) }
            index += 1
        } while file.nextDirectory()
        return pages
    }

    private static func header(_ pages: [TIFFFile.Page]) -> ImageHeader {
        ImageHeader(
            format: .tiff, pixelWidth: pages[0].width, pixelHeight: pages[0].height, frameCount: pages.count,
            hasAlpha: pages.contains { $0.hasAlpha } || pages.contains { $0.width < pages[0].width || $0.height < pages[0].height })
    }

    /// The current page as premultiplied RGBA8 bytes, `page.width × page.height`.
    private static func pixels(_ file: TIFFFile, _ page: TIFFFile.Page) throws(ImageDecodingError) -> [UInt8] {
        let count = page.width * page.height * 4
        // Every pixel is written by a successful read; a failure throws the buffer away.
        // libtiff's packed ABGR words are R, G, B, A bytes in memory on little-endian machines.
        var raster = [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
        let straight = try raster.withUnsafeMutableBufferPointer { (buffer) throws(ImageDecodingError) in
            try file.readPixels(page, into: UnsafeMutableRawBufferPointer(buffer))
        }
        if straight, page.hasAlpha { _ = try PixelOperations.premultiplyStoppable(&raster) }
        return raster
    }

    /// The current page (``TIFFFile/readsWide(_:)``) read at 16 bits, converted by `conversion`,
    /// as premultiplied RGBA8 bytes.
    private static func pixels(_ file: TIFFFile, _ page: TIFFFile.Page, _ conversion: WideColorConversion) throws(ImageDecodingError) -> [UInt8] {
        var pixels = try conversion.decode(width: page.width, height: page.height) { raster throws(ImageDecodingError) in
            try file.readWidePixels(page, into: raster)
        }
        if page.hasAlpha { _ = try PixelOperations.premultiplyStoppable(&pixels) }
        return pixels
    }

    /// A page drawn at the top left of the `width × height` canvas (itself when the sizes agree).
    private static func canvas(_ pixels: [UInt8], page: TIFFFile.Page, width: Int, height: Int) -> [UInt8] {
        guard page.width != width || page.height != height else { return pixels }
        var canvas = [UInt8](repeating: 0, count: width * height * 4)
        let rowBytes = min(page.width, width) * 4
        for y in 0..<min(page.height, height) {
            canvas.replaceSubrange(y * width * 4..<y * width * 4 + rowBytes, with: pixels[(y * page.width * 4)..<(y * page.width * 4 + rowBytes)])
        }
        return canvas
    }
}
