internal import CSpng
public import Foundation

/// PNG decoding and encoding over libspng.
///
/// libspng reports every failure by return code (no `longjmp`), decodes all colour types and
/// bit depths (palette with `tRNS`, grey, 16-bit, interlaced) to RGBA8, and checks CRCs. Leniently,
/// as browsers: an ancillary chunk with a bad CRC is ignored and a file that ends inside the
/// image data gives the rows decoded so far (``Image/isPartial``; those come from
/// ``decodePartial(_:options:)``, libpng's progressive reader); ``ImageDecodingOptions/strict``
/// refuses both.
/// Ancillary chunks are capped so a file cannot make it buffer unbounded metadata.
///
/// ```swift
/// let image = try PNGCoder().decode(data, options: .default)
/// let png = try PNGCoder().encode(image, as: .png, quality: 1)
/// ```
public struct PNGCoder: ImageDecoding, ImageEncoding {
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .png }
    public func canEncode(_ format: ImageFormat) -> Bool { format == .png }

    public func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        try Self.withDecoder(data) { ctx throws(ImageDecodingError) in try Self.header(ctx) }
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        let repairs = try options.allow(PNGChunkScan.repairs(in: data), in: .png, "an ancillary chunk's CRC does not match")
        if Task.isCancelled { throw .cancelled }  // the scan may have stopped early for it
        do throws(ImageDecodingError) {
            var image = try Self.withDecoder(data) { ctx throws(ImageDecodingError) in
                let header = try Self.header(ctx)
                try options.checkPixelLimit(header)
                let trnsRepair = try options.allow(
                    Self.maskGreyTransparency(ctx) ? .damagedMetadata : [], in: .png, "a grey tRNS value beyond the bit depth")
                let wide = Self.wideColorConversion(ctx, data: data, options: options)
                var pixels: [UInt8]
                if let wide {
                    pixels = try Self.decodeConvertingWide(ctx, header: header, conversion: wide)
                } else {
                    let format = Int32(SPNG_FMT_RGBA8.rawValue)
                    var size = 0
                    try Self.check(spng_decoded_image_size(ctx, format, &size))
                    // libspng writes every row of a successful decode (a failure throws the buffer away),
                    // so it need not be zeroed first.
                    pixels = [UInt8](unsafeUninitializedCapacity: size) { _, count in count = size }
                    let rowBytes = size / max(header.pixelHeight, 1)
                    let failure: ImageDecodingError? = pixels.withUnsafeMutableBytes { out in
                        do throws(ImageDecodingError) {
                            try Self.decodeRows(ctx, into: out, rowBytes: rowBytes, format: format)
                            return nil
                        } catch { return error }
                    }
                    if let failure { throw failure }
                }
                let isOpaque = try header.hasAlpha ? PixelOperations.premultiplyStoppable(&pixels) : true
                var image = Image(
                    format: .png, pixelWidth: header.pixelWidth, pixelHeight: header.pixelHeight,
                    pixels: pixels, isOpaque: isOpaque, scale: options.scale
                ).fittingThumbnail(options)
                image.repairs = trnsRepair
                image.sourceColorProfile = wide?.profile
                return image
            }
            image.repairs.formUnion(repairs)
            image.orientation = EXIFOrientation.read(fromPNG: data)
            return image
        } catch .corrupt(.png, Self.endOfData) where !options.strict {
            // The data ends inside the image: the rows decoded so far, the rest transparent.
            guard var partial = decodePartial(data, options: options) else { throw .corrupt(format: .png, reason: Self.endOfData) }
            partial.repairs = repairs.union(.truncated)
            partial.orientation = EXIFOrientation.read(fromPNG: data)
            return partial
        } catch .corrupt(.png, Self.endOfData) {
            throw .refusedInStrictMode(format: .png, repairs: .truncated, reason: Self.endOfData)
        } catch .corrupt(.png, let reason) where !options.strict {
            // libspng inflates `iCCP` itself and gives up on the whole file when that fails (a
            // damaged stream, or a profile past its limits: a zip bomb). Browsers ignore the
            // profile and show the image; so do we, once, without the chunk.
            guard let withoutProfile = PNGChunkScan.removing("iCCP", from: data) else { throw .corrupt(format: .png, reason: reason) }
            var image = try decode(withoutProfile, options: options)
            image.repairs.insert(.damagedMetadata)
            return image
        }
    }

    /// Decodes every row into `out` (interlaced images pass by pass, each row put in place by
    /// libspng), looking at `Task.isCancelled` after every 4 MB of output: a render whose deadline
    /// passed stops within a few milliseconds instead of finishing a 50-megapixel decode.
    static func decodeRows(
        _ ctx: OpaquePointer, into out: UnsafeMutableRawBufferPointer, rowBytes: Int, format: Int32
    ) throws(ImageDecodingError) {
        try check(spng_decode_image(ctx, nil, 0, format, Int32(SPNG_DECODE_TRNS.rawValue | SPNG_DECODE_PROGRESSIVE.rawValue)))
        guard let base = out.baseAddress, rowBytes > 0 else { return }
        let rows = out.count / rowBytes
        var sinceCheck = 0
        while true {
            var info = spng_row_info()
            var status = spng_get_row_info(ctx, &info)
            if status == SPNG_EOI.rawValue { return }
            try check(status)
            // libspng's row numbers are below the height it reported; checked anyway before writing.
            guard Int(info.row_num) < rows else { throw .corrupt(format: .png, reason: "a row beyond the image") }
            status = spng_decode_row(ctx, base + Int(info.row_num) * rowBytes, rowBytes)
            if status == SPNG_EOI.rawValue { return }
            try check(status)
            sinceCheck += rowBytes
            if sinceCheck >= 1 << 22 {
                sinceCheck = 0
                if Task.isCancelled { throw .cancelled }
            }
        }
    }

    /// libspng's message when the data ends before the image does (`SPNG_IO_EOF` from a
    /// buffer read past its end).
    static let endOfData = String(cString: spng_strerror(SPNG_IO_EOF.rawValue))

    public func encode(_ image: Image, as format: ImageFormat, quality: Double) throws(ImageEncodingError) -> Data {
        // PNG's sides are 31-bit (and a UInt32 conversion of more would trap).
        try image.checkEncodable(as: format, maxSide: Int(Int32.max))
        guard let ctx = spng_ctx_new(Int32(SPNG_CTX_ENCODER.rawValue)) else {
            throw .encodingFailed(format: .png, reason: "cannot create encoder")
        }
        defer { spng_ctx_free(ctx) }
        spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1)
        let rows = image.isOpaque ? try PixelOperations.dropAlphaStoppable(image) : try PixelOperations.unpremultipliedStoppable(image)
        var ihdr = spng_ihdr()
        ihdr.width = UInt32(image.pixelWidth)
        ihdr.height = UInt32(image.pixelHeight)
        ihdr.bit_depth = 8
        ihdr.color_type = UInt8(image.isOpaque ? SPNG_COLOR_TYPE_TRUECOLOR.rawValue : SPNG_COLOR_TYPE_TRUECOLOR_ALPHA.rawValue)
        var status = spng_set_ihdr(ctx, &ihdr)
        if status == 0 {
            status = try Self.encodeRows(ctx, rows, rowBytes: image.pixelWidth * (image.isOpaque ? 3 : 4))
        }
        guard status == 0 else { throw .encodingFailed(format: .png, reason: String(cString: spng_strerror(status))) }
        var length = 0
        var error: Int32 = 0
        guard let buffer = spng_get_png_buffer(ctx, &length, &error), error == 0 else {
            throw .encodingFailed(format: .png, reason: String(cString: spng_strerror(error)))
        }
        defer { free(buffer) }
        return Data(bytes: buffer, count: length)
    }

    // MARK: - Internals

    /// Writes `rows` a row at a time (libspng's progressive encoding), looking at
    /// `Task.isCancelled` after every 4 MB of input: a render whose deadline passed stops within a
    /// few milliseconds instead of deflating the rest (0.7 s of CPU after the deadline for 9 MP of
    /// noise when the image was written in one call). The libspng status: 0 when written.
    static func encodeRows(_ ctx: OpaquePointer, _ rows: [UInt8], rowBytes: Int) throws(ImageEncodingError) -> Int32 {
        let flags = Int32(SPNG_ENCODE_PROGRESSIVE.rawValue | SPNG_ENCODE_FINALIZE.rawValue)
        var status = spng_encode_image(ctx, nil, 0, Int32(SPNG_FMT_PNG.rawValue), flags)
        guard status == 0, rowBytes > 0 else { return status }
        var cancelled = false
        status = rows.withUnsafeBytes { src -> Int32 in
            guard let base = src.baseAddress else { return 0 }
            var offset = 0, sinceCheck = 0
            while offset + rowBytes <= src.count {
                let written = spng_encode_row(ctx, base + offset, rowBytes)
                // The last row ends the image: libspng answers SPNG_EOI once it is written.
                if written == SPNG_EOI.rawValue { return 0 }
                guard written == 0 else { return written }
                offset += rowBytes
                sinceCheck += rowBytes
                if sinceCheck >= 1 << 22 {
                    sinceCheck = 0
                    if Task.isCancelled {
                        cancelled = true
                        return 0
                    }
                }
            }
            return 0
        }
        if cancelled { throw .cancelled }
        return status
    }

    static func withDecoder<T>(
        _ data: Data, _ body: (OpaquePointer) throws(ImageDecodingError) -> T
    ) throws(ImageDecodingError) -> T {
        guard !data.isEmpty else { throw .empty }
        // libspng reads from the buffer during decode, so the bytes must stay pinned throughout.
        let result = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Result<T, ImageDecodingError> in
            do throws(ImageDecodingError) {
                return .success(try withDecoder(bytes: raw, body))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// ``withDecoder(_:_:)`` over bytes the caller keeps in place until `body` returns.
    static func withDecoder<T>(
        bytes raw: UnsafeRawBufferPointer, _ body: (OpaquePointer) throws(ImageDecodingError) -> T
    ) throws(ImageDecodingError) -> T {
        guard let ctx = spng_ctx_new(0) else { throw .corrupt(format: .png, reason: "cannot create decoder") }
        defer { spng_ctx_free(ctx) }
        // Metadata chunks: at most 16 MB each, 64 MB in all (pixel data is limited separately).
        spng_set_chunk_limits(ctx, 16 << 20, 64 << 20)
        spng_set_image_limits(ctx, 1 << 24, 1 << 24)
        // Ancillary chunks with a bad CRC are dropped, as browsers drop them; strict decoding
        // refuses such files before this point (PNGChunkScan).
        spng_set_crc_action(ctx, Int32(SPNG_CRC_ERROR.rawValue), Int32(SPNG_CRC_DISCARD.rawValue))
        try check(spng_set_png_buffer(ctx, raw.baseAddress, raw.count))
        return try body(ctx)
    }

    static func header(_ ctx: OpaquePointer) throws(ImageDecodingError) -> ImageHeader {
        var ihdr = spng_ihdr()
        try check(spng_get_ihdr(ctx, &ihdr))
        var trns = spng_trns()
        let hasTRNS = spng_get_trns(ctx, &trns) == 0
        let alphaTypes = [SPNG_COLOR_TYPE_TRUECOLOR_ALPHA.rawValue, SPNG_COLOR_TYPE_GRAYSCALE_ALPHA.rawValue]
        let hasAlpha = hasTRNS || alphaTypes.contains(UInt32(ihdr.color_type))
        return ImageHeader(format: .png, pixelWidth: Int(ihdr.width), pixelHeight: Int(ihdr.height), hasAlpha: hasAlpha)
    }

    /// A grey image's tRNS value wider than its bit depth (255 in a 1-bit image, as Pillow writes
    /// one) keeps its low bits, as libpng takes it (browsers, Pillow); libspng would match no
    /// pixel with it. Returns whether the value was changed.
    static func maskGreyTransparency(_ ctx: OpaquePointer) -> Bool {
        var ihdr = spng_ihdr(), trns = spng_trns()
        guard spng_get_ihdr(ctx, &ihdr) == 0, UInt32(ihdr.color_type) == SPNG_COLOR_TYPE_GRAYSCALE.rawValue,
              ihdr.bit_depth < 16, spng_get_trns(ctx, &trns) == 0 else { return false }
        let mask = UInt16(1 << ihdr.bit_depth) - 1
        guard trns.gray > mask else { return false }
        trns.gray &= mask
        return spng_set_trns(ctx, &trns) == 0
    }

    static func check(_ status: Int32) throws(ImageDecodingError) {
        guard status != 0 else { return }
        throw .corrupt(format: .png, reason: String(cString: spng_strerror(status)))
    }
}
