#if canImport(Glibc)
import Glibc
#endif

/// The fields of an ``Image``, kept in one reference that images share until one of them is
/// changed (copy on write, as the standard library's arrays do).
///
/// `@unchecked Sendable`: the fields are `var`s, but an `ImageStorage` is only ever written
/// through ``Image/writable``, which first makes it unique to the image being mutated
/// (`isKnownUniquelyReferenced`, copying otherwise) — so storage that two images, tasks or
/// threads can see is never written, and written storage is seen by its one owner only. For the
/// same reason the fields skip the run-time exclusivity check of class properties
/// (`@exclusivity(unchecked)`): the compiler's static checks of `Image`'s own accesses cover
/// them, and a pixel loop reading `image.pixelWidth` pays no call for it.
@usableFromInline
final class ImageStorage: @unchecked Sendable {
    @usableFromInline @exclusivity(unchecked) var format: ImageFormat
    @usableFromInline @exclusivity(unchecked) var pixelWidth: Int
    @usableFromInline @exclusivity(unchecked) var pixelHeight: Int
    @usableFromInline @exclusivity(unchecked) var bytesPerRow: Int
    @usableFromInline @exclusivity(unchecked) var pixels: [UInt8]
    @usableFromInline @exclusivity(unchecked) var isOpaque: Bool
    @usableFromInline @exclusivity(unchecked) var scale: Double
    @usableFromInline @exclusivity(unchecked) var orientation: ImageOrientation
    @usableFromInline @exclusivity(unchecked) var frameCount: Int
    @usableFromInline @exclusivity(unchecked) var frames: [ImageFrame] = []
    @usableFromInline @exclusivity(unchecked) var loopCount = 0
    @usableFromInline @exclusivity(unchecked) var repairs: ImageRepairs = []
    @usableFromInline @exclusivity(unchecked) var colorProfile: ColorProfile?
    @usableFromInline @exclusivity(unchecked) var sourceColorProfile: ColorProfile?

    init(
        format: ImageFormat, pixelWidth: Int, pixelHeight: Int, bytesPerRow: Int, pixels: [UInt8], isOpaque: Bool,
        scale: Double, orientation: ImageOrientation, frameCount: Int
    ) {
        self.format = format
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.bytesPerRow = bytesPerRow
        self.pixels = pixels
        self.isOpaque = isOpaque
        self.scale = scale
        self.orientation = orientation
        self.frameCount = frameCount
    }

    /// Frees the pixels first and then, when at least `trimAfter` bytes of them were held in
    /// arrays small enough for glibc's heap (below its 32 MiB mmap ceiling: animation frames, not
    /// one big still), hands the freed heap pages back to the system (`malloc_trim`). Once glibc
    /// has seen a large block freed it serves blocks up to that size from its per-thread heaps
    /// instead of their own mappings, and keeps them after they are freed: a fetch of 200-frame
    /// GIFs kept a whole released animation (200 MB) resident beside the next one, past the
    /// memory budget (docs/PERFORMANCE.md, "The memory budget in a real process").
    deinit {
        #if canImport(Glibc)
        var small = pixels.count < Self.mmapCeiling ? pixels.count : 0
        for frame in frames where frame.pixels.count < Self.mmapCeiling { small &+= frame.pixels.count }
        guard small >= Self.trimAfter else { return }
        pixels = []
        frames = []
        _ = Self.trimHeap?(0)
        #endif
    }

    #if canImport(Glibc)
    /// glibc's `malloc_trim`, found at run time (Swift's Glibc module leaves `malloc.h` out; a C
    /// library without it, such as musl, gives `nil` and nothing is trimmed).
    static let trimHeap: (@convention(c) (Int) -> Int32)? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim").map {
        unsafeBitCast($0, to: (@convention(c) (Int) -> Int32).self)
    }
    #endif

    /// glibc's largest dynamic mmap threshold on 64-bit systems (`DEFAULT_MMAP_THRESHOLD_MAX`).
    static let mmapCeiling = 32 << 20
    /// Bytes of heap-sized pixel arrays an image must hold for its end to trim the heap.
    static let trimAfter = 16 << 20

    /// A copy for an image about to be changed (the pixel arrays are shared until written).
    @usableFromInline
    func copy() -> ImageStorage {
        let copy = ImageStorage(
            format: format, pixelWidth: pixelWidth, pixelHeight: pixelHeight, bytesPerRow: bytesPerRow, pixels: pixels,
            isOpaque: isOpaque, scale: scale, orientation: orientation, frameCount: frameCount)
        copy.frames = frames
        copy.loopCount = loopCount
        copy.repairs = repairs
        copy.colorProfile = colorProfile
        copy.sourceColorProfile = sourceColorProfile
        return copy
    }
}
