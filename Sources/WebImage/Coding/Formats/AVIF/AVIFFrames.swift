internal import CAvif

/// libavif's decoder over a pinned copy of the file, parsed: the ``FrameSequencing`` of AVIF
/// sequences, for the full decode and ``AVIFAnimationDecoder`` alike. AV1 frames depend only on
/// frames since their key frame, which libavif seeks to itself (`avifDecoderNthImage`), so a
/// rewind goes straight to the frame asked for.
///
/// Not `Sendable`: one decode call, or one animated decoder's lock, owns it.
final class AVIFFrames: FrameSequencing {
    /// Size, frame count and alpha from the container, before any frame is decoded.
    let header: ImageHeader
    private let bytes: PinnedBytes
    private let decoder: UnsafeMutablePointer<avifDecoder>
    private var sizing: FrameSizing
    private(set) var position = 0
    /// Set by a rewind: the next frame comes from `avifDecoderNthImage`.
    private var seeking = false

    /// Bits a sample of the coded image (8, 10 or 12), from the container.
    let depth: Int
    /// Set before the first frame: frames decode at 16 bits and convert before narrowing.
    var wide: WideColorConversion?

    /// What parsing had to forgive (``ImageRepairs/damagedMetadata`` for a file that parses only
    /// without libavif's strict checks).
    let repairs: ImageRepairs

    /// Parses `bytes` with libavif's strict checks, or else without them: a file breaking a rule
    /// browsers overlook (no `pixi` property, an invalid `clap`, an alpha item without `ispe`)
    /// parses, noted in ``repairs``, unless `strict`.
    init(_ bytes: PinnedBytes, strict: Bool = false) throws(ImageDecodingError) {
        guard !bytes.bytes.isEmpty else { throw .empty }
        try CodecLibrary.avif.checkDecoding(.avif)
        let decoder: UnsafeMutablePointer<avifDecoder>
        do throws(ImageDecodingError) {
            decoder = try Self.parse(bytes, strictFlags: AVIF_STRICT_ENABLED)
            repairs = []
        } catch {
            guard let lenient = try? Self.parse(bytes, strictFlags: AVIF_STRICT_DISABLED) else { throw error }
            if strict {
                avifDecoderDestroy(lenient)
                throw .refusedInStrictMode(format: .avif, repairs: .damagedMetadata, reason: "\(error)")
            }
            decoder = lenient
            repairs = .damagedMetadata
        }
        guard let image = decoder.pointee.image else {
            avifDecoderDestroy(decoder)
            throw .corrupt(format: .avif, reason: "no image")
        }
        self.bytes = bytes
        self.decoder = decoder
        header = ImageHeader(
            format: .avif, pixelWidth: Int(image.pointee.width), pixelHeight: Int(image.pointee.height),
            frameCount: max(Int(decoder.pointee.imageCount), 1), hasAlpha: decoder.pointee.alphaPresent != 0)
        depth = Int(image.pointee.depth)
        sizing = FrameSizing(width: header.pixelWidth, height: header.pixelHeight, options: .default)
    }

    /// A new decoder (the caller destroys it) that has parsed `bytes` under `strictFlags`.
    private static func parse(_ bytes: PinnedBytes, strictFlags: avifStrictFlag) throws(ImageDecodingError) -> UnsafeMutablePointer<avifDecoder> {
        try ISOItemLimit.check(bytes.bytes, format: .avif)
        let meta = ISOMeta(bytes.bytes)
        try ISOCodedItemCheck.check(bytes.bytes, meta: meta, format: .avif, throughLibheif: false)
        guard let decoder = avifDecoderCreate() else { throw .corrupt(format: .avif, reason: "cannot create decoder") }
        decoder.pointee.maxThreads = 1
        decoder.pointee.ignoreExif = AVIF_TRUE
        decoder.pointee.ignoreXMP = AVIF_TRUE
        decoder.pointee.strictFlags = strictFlags.rawValue
        let parsed = avifDecoderSetIOMemory(decoder, bytes.uint8Pointer, bytes.bytes.count) == AVIF_RESULT_OK
            ? avifDecoderParse(decoder) : AVIF_RESULT_IO_ERROR
        guard parsed == AVIF_RESULT_OK else {
            avifDecoderDestroy(decoder)
            throw .corrupt(format: .avif, reason: String(cString: avifResultToString(parsed)))
        }
        // The container's size (`ispe`) is what every price and limit was computed from; the AV1
        // frames inside may claim more (red team, stop 49: a 10 KB file saying 1000 × 750 held a
        // 12000 × 12000 frame, 305 MB). libavif hands this limit to dav1d, which then refuses a
        // larger frame before allocating it.
        // A grid's tiles are held to the largest tile's declared size (red team, stop 52: 484
        // tiles declared 64 × 64 but coded 1400 × 1400 took 3.3 GB under the grid's limit).
        if let image = decoder.pointee.image {
            let (area, overflow) = Int(image.pointee.width).multipliedReportingOverflow(by: Int(image.pointee.height))
            let tile = decodesItems(bytes.bytes) ? ISOCodedItemCheck.largestTileArea(bytes.bytes, meta: meta) : nil
            decoder.pointee.imageSizeLimit = UInt32(clamping: tile ?? (overflow ? Int.max : max(area, 1)))
        }
        return decoder
    }

    /// Whether libavif decodes this file's items rather than its tracks: its major brand is
    /// `avif`, or it has no `moov` box (libavif 0.11's rule for its automatic source).
    private static func decodesItems(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count < 12 || Int(bigEndian: bytes, at: 8, count: 4) != Int(ISOBoxes.fourCC("avif")) else { return true }
        var tracks = false
        ISOBoxes.forEachBox(bytes, in: 0..<bytes.count) { type, _ in if type == ISOBoxes.fourCC("moov") { tracks = true } }
        return !tracks
    }

    deinit { avifDecoderDestroy(decoder) }

    /// Frames come at the thumbnail size of `options` (set before the first frame).
    func size(for options: ImageDecodingOptions) -> FrameSizing {
        sizing = FrameSizing(width: header.pixelWidth, height: header.pixelHeight, options: options)
        return sizing
    }

    /// Frame `index`'s duration from the container, clamped, without decoding it.
    func duration(at index: Int) -> Duration {
        var timing = avifImageTiming()
        guard avifDecoderNthImageTiming(decoder, UInt32(index), &timing) == AVIF_RESULT_OK else { return ImageFrame.clampedDuration(milliseconds: 0) }
        return ImageFrame.clampedDuration(seconds: timing.duration)
    }

    func next() throws(ImageDecodingError) -> ImageFrame? {
        guard position < header.frameCount else { return nil }
        try AVIFCoder.check(seeking ? avifDecoderNthImage(decoder, UInt32(position)) : avifDecoderNextImage(decoder))
        seeking = false
        guard let image = decoder.pointee.image, Int(image.pointee.width) == header.pixelWidth,
              Int(image.pointee.height) == header.pixelHeight else {
            throw .corrupt(format: .avif, reason: "frame size differs from the container's")
        }
        var pixels: [UInt8]
        if let wide { pixels = try AVIFCoder.rgba(image, converting: wide) } else { pixels = try AVIFCoder.rgba(image) }
        if header.hasAlpha { _ = try PixelOperations.premultiplyStoppable(&pixels) }
        let duration = ImageFrame.clampedDuration(seconds: decoder.pointee.imageTiming.duration)
        position += 1
        return ImageFrame(pixels: sizing.shrink(pixels), duration: duration)
    }

    func rewind(toAtMost index: Int) {
        position = index
        seeking = true
    }
}
