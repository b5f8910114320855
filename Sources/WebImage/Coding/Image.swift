/// A decoded image: pixels in memory, ready to transform, encode or hand to a renderer.
///
/// ## Pixel layout
/// `pixels` holds `pixelHeight` rows of `bytesPerRow` bytes, top row first. Each pixel is
/// four bytes, **R, G, B, A**, 8 bits each, with colour **premultiplied** by alpha (the layout
/// CoreGraphics, Skia and Cairo composite fastest). Opaque images have A = 255 everywhere and
/// ``isOpaque`` set. EXIF orientation is reported in ``orientation``, not applied.
///
/// ## Animation
/// An animated image (GIF, WebP) keeps every frame, composited to the full canvas, in
/// ``frames``; ``pixels`` is the first frame (sharing its storage). Still images, and animations
/// decoded with ``ImageDecodingOptions/firstFrameOnly``, have no ``frames``; ``frameCount`` still
/// tells how many frames the file holds. To decode frames one at a time, on demand, use
/// ``ImageCoderRegistry/animatedDecoder(for:options:)`` (``AnimatedImageDecoding``).
///
/// ```swift
/// let image = try ImageCoderRegistry.default.decode(data)
/// print(image.format, image.pixelWidth, image.pixelHeight, image.cost)
/// ```
public struct Image: Sendable {
    /// Every field, in one copy-on-write reference: copying an image (a memory-cache hit hands
    /// one out) retains one object, where twelve inline fields were copied through an outlined
    /// value witness (a fifth of a synchronous hit, measured with `perf`). Writes go through
    /// ``writable``, so pixels changed in place stay in place when the image is not shared.
    @usableFromInline var storage: ImageStorage

    /// The format the image was decoded from.
    @inlinable public var format: ImageFormat {
        get { storage.format }
        _modify { yield &writable.format }
    }
    /// Width in pixels.
    @inlinable public var pixelWidth: Int {
        get { storage.pixelWidth }
        _modify { yield &writable.pixelWidth }
    }
    /// Height in pixels.
    @inlinable public var pixelHeight: Int {
        get { storage.pixelHeight }
        _modify { yield &writable.pixelHeight }
    }
    /// Bytes per row of ``pixels`` (at least `4 * pixelWidth`).
    @inlinable public var bytesPerRow: Int {
        get { storage.bytesPerRow }
        _modify { yield &writable.bytesPerRow }
    }
    /// Premultiplied RGBA8 pixels, `bytesPerRow * pixelHeight` bytes.
    @inlinable public var pixels: [UInt8] {
        get { storage.pixels }
        _modify { yield &writable.pixels }
    }
    /// `true` when every pixel has alpha 255.
    @inlinable public var isOpaque: Bool {
        get { storage.isOpaque }
        _modify { yield &writable.isOpaque }
    }
    /// Points-to-pixels scale, read from `@2x` / `@3x` in the key when the pipeline decodes.
    @inlinable public var scale: Double {
        get { storage.scale }
        _modify { yield &writable.scale }
    }
    /// Which way the picture is meant to be seen (EXIF orientation as stored in the file);
    /// ``ImageOrientation/up`` means "as stored".
    @inlinable public var orientation: ImageOrientation {
        get { storage.orientation }
        _modify { yield &writable.orientation }
    }
    /// Number of frames in the source (1 for still images).
    @inlinable public var frameCount: Int {
        get { storage.frameCount }
        _modify { yield &writable.frameCount }
    }
    /// The decoded animation frames, composited, first frame first; empty for still images.
    ///
    /// `frames[0].pixels` equals ``pixels``. Every frame has ``bytesPerRow`` `== 4 * pixelWidth`.
    @inlinable public var frames: [ImageFrame] {
        get { storage.frames }
        _modify { yield &writable.frames }
    }
    /// How many times the animation plays; 0 means forever (GIF: the NETSCAPE2.0 value as
    /// stored, 1 without it; WebP: the `ANIM` loop count).
    @inlinable public var loopCount: Int {
        get { storage.loopCount }
        _modify { yield &writable.loopCount }
    }
    /// What a lenient decode forgave in the file (empty for a well-formed one): see
    /// ``ImageRepairs`` and ``ImageDecodingOptions/strict``.
    @inlinable public var repairs: ImageRepairs {
        get { storage.repairs }
        _modify { yield &writable.repairs }
    }

    /// The colour space ``pixels`` are in, when it is not sRGB: set only when decoding kept the
    /// file's profile (``ColorHandling/keep``). Encoders embed it; `nil` means sRGB.
    @inlinable public var colorProfile: ColorProfile? {
        get { storage.colorProfile }
        _modify { yield &writable.colorProfile }
    }
    /// The colour profile the file declared (embedded, or built from the format's own colour
    /// description), whatever decoding did with it; `nil` for untagged files.
    ///
    /// ```swift
    /// let image = try ImageCoderRegistry.default.decode(data)
    /// print(image.sourceColorProfile?.description ?? "untagged")  // "Adobe RGB (1998)"
    /// ```
    @inlinable public var sourceColorProfile: ColorProfile? {
        get { storage.sourceColorProfile }
        _modify { yield &writable.sourceColorProfile }
    }

    /// The storage, copied first when another image shares it.
    @inlinable var writable: ImageStorage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }
    }

    /// The file ended early and the image holds only what was decoded.
    public var isPartial: Bool { repairs.contains(.truncated) }
    /// The decode had to forgive something (``repairs`` is not empty).
    public var isLenient: Bool { !repairs.isEmpty }

    public init(
        format: ImageFormat,
        pixelWidth: Int,
        pixelHeight: Int,
        bytesPerRow: Int? = nil,
        pixels: [UInt8],
        isOpaque: Bool,
        scale: Double = 1,
        orientation: ImageOrientation = .up,
        frameCount: Int = 1
    ) {
        // An absurd width gives 0 (refused by every consumer: see `bufferProblem`), not a trap.
        let rowBytes = bytesPerRow ?? { let (bytes, overflow) = pixelWidth.multipliedReportingOverflow(by: 4); return overflow ? 0 : bytes }()
        storage = ImageStorage(
            format: format, pixelWidth: pixelWidth, pixelHeight: pixelHeight, bytesPerRow: rowBytes, pixels: pixels,
            isOpaque: isOpaque, scale: scale, orientation: orientation, frameCount: frameCount)
    }

    /// An animated image from its composited frames (at least one); ``pixels`` is the first frame.
    ///
    /// ```swift
    /// let animation = Image(format: .gif, pixelWidth: 2, pixelHeight: 2, frames: frames, loopCount: 0)
    /// ```
    public init(
        format: ImageFormat, pixelWidth: Int, pixelHeight: Int, frames: [ImageFrame], loopCount: Int,
        scale: Double = 1
    ) {
        self.init(format: format, pixelWidth: pixelWidth, pixelHeight: pixelHeight, frames: frames, loopCount: loopCount,
                  scale: scale, knownOpaque: false)
    }

    init(
        format: ImageFormat, pixelWidth: Int, pixelHeight: Int, frames: [ImageFrame], loopCount: Int, scale: Double,
        knownOpaque: Bool
    ) {
        precondition(!frames.isEmpty, "an animated image needs at least one frame")
        let opaque = knownOpaque || frames.allSatisfy { PixelOperations.isOpaque($0.pixels) }
        self.init(
            format: format, pixelWidth: pixelWidth, pixelHeight: pixelHeight, pixels: frames[0].pixels,
            isOpaque: opaque, scale: scale, frameCount: frames.count)
        self.frames = frames
        self.loopCount = loopCount
    }

    /// What a decoder of an animated format returns: a still image for one decoded frame
    /// (a still file, or ``ImageDecodingOptions/firstFrameOnly``), an animation otherwise.
    /// `knownOpaque` spares the scan for alpha when the decoder already knows every frame is opaque.
    static func decoded(
        format: ImageFormat, pixelWidth: Int, pixelHeight: Int, frames: [ImageFrame], frameCount: Int, loopCount: Int,
        scale: Double, knownOpaque: Bool = false
    ) -> Image {
        guard frames.count == 1 else {
            return Image(
                format: format, pixelWidth: pixelWidth, pixelHeight: pixelHeight, frames: frames, loopCount: loopCount,
                scale: scale, knownOpaque: knownOpaque)
        }
        var still = Image(
            format: format, pixelWidth: pixelWidth, pixelHeight: pixelHeight, pixels: frames[0].pixels,
            isOpaque: knownOpaque || PixelOperations.isOpaque(frames[0].pixels), scale: scale, frameCount: frameCount)
        still.loopCount = loopCount
        return still
    }

    /// Size in points: pixel size divided by ``scale``.
    public var size: (width: Double, height: Double) {
        (Double(pixelWidth) / scale, Double(pixelHeight) / scale)
    }

    /// Bytes of memory this image holds, all animation frames included; the memory cache's cost.
    public var cost: Int {
        // frames[0] shares its storage with `pixels`.
        frames.dropFirst().reduce(pixels.count) { $0 + $1.pixels.count }
    }

    /// `true` when the image holds more than one decoded frame.
    public var isAnimated: Bool { frames.count > 1 }

    /// The sum of the frame durations (zero for still images), saturating instead of trapping
    /// when frames a caller built add up past what `Duration` holds.
    public var totalDuration: Duration {
        var seconds: Int64 = 0, attoseconds: Int64 = 0
        for frame in frames {
            let (s, a) = frame.duration.components
            // |a| < 10¹⁸ and |attoseconds| < 10¹⁸: the sum fits, and its whole seconds carry over.
            attoseconds += a
            let carry = attoseconds / 1_000_000_000_000_000_000
            attoseconds -= carry * 1_000_000_000_000_000_000
            let (partial, overflow1) = seconds.addingReportingOverflow(s)
            let (sum, overflow2) = partial.addingReportingOverflow(carry)
            guard !overflow1, !overflow2 else { return .seconds(s < 0 ? Int64.min : Int64.max) }
            seconds = sum
        }
        return Duration(secondsComponent: seconds, attosecondsComponent: attoseconds)
    }

    /// Frame `index` as a still image (index 0 of a still image is the image itself).
    ///
    /// ```swift
    /// let third = try ImageCoderRegistry.default.decode(gif).frame(at: 2)
    /// ```
    public func frame(at index: Int) -> Image {
        guard !frames.isEmpty else {
            precondition(index == 0, "a still image has only frame 0")
            return self
        }
        var still = self
        still.pixels = frames[index].pixels
        still.bytesPerRow = pixelWidth * 4
        still.frames = []
        still.isOpaque = PixelOperations.isOpaque(still.pixels)
        return still
    }

    /// The RGBA value of one pixel (premultiplied), for tests and tools.
    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        precondition(x >= 0 && x < pixelWidth && y >= 0 && y < pixelHeight, "pixel out of bounds")
        let i = y * bytesPerRow + x * 4
        return (pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3])
    }
}

extension Image {
    /// Reads the scale factor SDWebImage-style from a key or file name: `icon@2x.png` → 2.
    public static func scaleFactor(forKey key: String) -> Double {
        let name = key.split(separator: "?", maxSplits: 1).first.map(String.init) ?? key
        let last = name.split(separator: "/").last.map(String.init) ?? name
        for factor in [3, 2] where last.contains("@\(factor)x.") || last.hasSuffix("@\(factor)x") {
            return Double(factor)
        }
        return 1
    }
}
