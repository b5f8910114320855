import Foundation

extension MemoryBudget {
    /// A handle on reserved bytes; they return to the budget on ``release()`` or when it is deallocated.
    ///
    /// ```swift
    /// let reservation = try await budget.reserve(bytes, waitingAtMost: .seconds(10))
    /// defer { reservation.release() }
    /// ```
    public final class Reservation: Sendable {
        /// Bytes reserved (fewer after a downloaded body's lease ended before all of it came).
        public var bytes: Int { held.withLock { $0 } }
        /// What they are for.
        public let use: Use
        private let budget: MemoryBudget?
        /// The bytes still held; 0 once released.
        private let held: Locked<Int>

        init(bytes: Int, use: Use, budget: MemoryBudget?) {
            self.held = Locked(bytes)
            self.use = use
            self.budget = budget
        }

        /// Returns the bytes to the budget (once; later calls do nothing).
        public func release() { shrink(to: 0) }

        /// Returns all but `bytes` to the budget.
        func shrink(to bytes: Int) {
            let returned = held.withLock { held in
                let kept = min(held, max(bytes, 0))
                defer { held = kept }
                return held - kept
            }
            if returned > 0 { budget?.end(returned, use) }
        }

        deinit { release() }
    }

    /// A registered cache; the registration ends on ``release()`` or when it is deallocated.
    public final class Registration: Sendable {
        private let end: Locked<(@Sendable () -> Void)?>
        init(_ end: @escaping @Sendable () -> Void) { self.end = Locked(end) }
        public func release() { end.withLock { $0.take() }?() }
        deinit { release() }
    }

    /// What decoding an image of `header` with `options` allocates, in bytes: 4 per pixel of
    /// every frame kept (canvas-sized), at full size — or, for a thumbnail of a JPEG or WebP,
    /// which decode at a reduced scale, at most twice the thumbnail's side — plus the thumbnail,
    /// plus what the decoder holds on its own at any scale (``ImageHeader/decoderWorkingBytes``:
    /// a progressive JPEG's coefficient buffer).
    public static func bytes(toDecode header: ImageHeader, options: ImageDecodingOptions) -> Int {
        let frames = options.framesToDecode(of: header.frameCount)
        var area = area(header.pixelWidth, header.pixelHeight)
        if let side = options.thumbnailMaxPixelSize {
            func fitted(_ side: Int) -> Int {
                let size = Resampler.fittingSize(width: header.pixelWidth, height: header.pixelHeight, maxWidth: side, maxHeight: side)
                return Self.area(size.width, size.height)
            }
            if header.format == .jpeg || header.format == .webp { area = fitted(side > Int.max / 2 ? .max : side * 2) }
            let (sum, overflow) = area.addingReportingOverflow(fitted(side))
            area = overflow ? .max : sum
        }
        let (bytes, overflow) = area.multipliedReportingOverflow(by: 4 * max(frames, 1))
        // What the decoder holds besides (a progressive JPEG's coefficients), at any output size.
        let (total, overflow2) = bytes.addingReportingOverflow(max(header.decoderWorkingBytes, 0))
        return overflow || overflow2 ? .max : total
    }

    /// What decoding an image of `header` with `options` through `coders` holds in this machine's
    /// memory: ``bytes(toDecode:options:)``, twice when `coders` decode it in a worker process
    /// (``ImageCoderRegistry/isolatesDecode(of:options:)``: the worker keeps its own copy until
    /// the pixels have reached this process). `Int.max` when that overflows.
    ///
    /// ```swift
    /// let bytes = MemoryBudget.bytes(toDecode: header, options: .default, coders: coders)
    /// ```
    public static func bytes(toDecode header: ImageHeader, options: ImageDecodingOptions, coders: ImageCoderRegistry) -> Int {
        let bytes = bytes(toDecode: header, options: options)
        guard coders.isolatesDecode(of: header, options: options) else { return bytes }
        let (twice, overflow) = bytes.multipliedReportingOverflow(by: 2)
        return overflow ? .max : twice
    }

    /// `width × height` (negative sides count as 0), `Int.max` when that overflows.
    package static func area(_ width: Int, _ height: Int) -> Int {
        let (product, overflow) = max(width, 0).multipliedReportingOverflow(by: max(height, 0))
        return overflow ? .max : product
    }
}
