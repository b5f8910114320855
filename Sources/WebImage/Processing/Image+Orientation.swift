extension Image {
    /// The pixels turned the way the EXIF ``orientation`` says the picture is meant to be seen,
    /// with ``orientation`` ``ImageOrientation/up``. Images already up are returned unchanged.
    ///
    /// Decoders report orientation without applying it (see ``Image``); apply it before writing a
    /// file that will not carry the EXIF tag, such as a re-encoded thumbnail.
    ///
    /// ```swift
    /// let upright = try ImageCoderRegistry.default.decode(photo).oriented()
    /// ```
    public func oriented() -> Image {
        // Never stopped, so never nil.
        orientedUnlessStopped(by: { false })!
    }

    /// ``oriented()`` for processing: a cancelled task stops within a band of rows and throws
    /// ``ImageProcessingError/cancelled``.
    func orientedStoppingWhenCancelled() throws(ImageProcessingError) -> Image {
        guard let upright = orientedUnlessStopped(by: { Task.isCancelled }) else { throw .cancelled }
        return upright
    }

    /// ``oriented()``, or `nil` when `stop` said so between bands of rows.
    private func orientedUnlessStopped(by stop: () -> Bool) -> Image? {
        guard orientation != .up else { return self }
        let swapsSides = orientation.swapsWidthAndHeight
        let width = swapsSides ? pixelHeight : pixelWidth, height = swapsSides ? pixelWidth : pixelHeight
        var result = self
        guard let upright = Self.reorient(
            pixels, bytesPerRow: bytesPerRow, width: pixelWidth, height: pixelHeight, orientation: orientation, unlessStoppedBy: stop)
        else { return nil }
        result.pixels = upright
        var frames: [ImageFrame] = []
        frames.reserveCapacity(self.frames.count)
        for (index, frame) in self.frames.enumerated() {
            guard let pixels = index == 0 ? upright : Self.reorient(
                frame.pixels, bytesPerRow: pixelWidth * 4, width: pixelWidth, height: pixelHeight, orientation: orientation,
                unlessStoppedBy: stop)
            else { return nil }
            frames.append(ImageFrame(pixels: pixels, duration: frame.duration))
        }
        result.frames = frames
        result.pixelWidth = width
        result.pixelHeight = height
        result.bytesPerRow = width * 4
        result.orientation = .up
        return result
    }

    /// Packed RGBA of the displayed picture: each displayed pixel fetched from its stored place.
    /// Each EXIF orientation is a flip and/or a quarter turn, so every output row reads stored
    /// pixels along one line: a start and a step, whole 4-byte pixels at a time. `stop` is asked
    /// between bands of rows (a quarter turn reads across rows: 0.1–0.4 s at 49 MP); when it says
    /// so the pixels are dropped, unfinished, and the answer is `nil`.
    static func reorient(
        _ pixels: [UInt8], bytesPerRow: Int, width w: Int, height h: Int, orientation: ImageOrientation,
        unlessStoppedBy stop: () -> Bool
    ) -> [UInt8]? {
        let swapsSides = orientation.swapsWidthAndHeight
        let outWidth = swapsSides ? h : w, outHeight = swapsSides ? w : h
        let row = bytesPerRow, px = 4
        // Stored byte offset of displayed (0, dy) = start + dy * rowStep; along the row, + step.
        let (start, step, rowStep): (Int, Int, Int) = switch orientation {
        case .upMirrored: ((w - 1) * px, -px, row)
        case .down: ((h - 1) * row + (w - 1) * px, -px, -row)
        case .downMirrored: ((h - 1) * row, px, -row)
        case .leftMirrored: (0, row, px)
        case .right: ((h - 1) * row, -row, px)
        case .rightMirrored: ((h - 1) * row + (w - 1) * px, -row, -px)
        case .left: ((w - 1) * px, row, -px)
        case .up: (0, px, row)
        }
        // Every output byte is written below, so the buffer starts uninitialised (no zero-fill pass),
        // and rows that keep their pixel order (a vertical flip) are copied whole.
        let count = outWidth * outHeight * 4
        let rowsPerBand = max(1, PixelOperations.band / max(outWidth * px, 1))
        var stopped = false
        let result = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            let target = UnsafeMutableRawBufferPointer(out)
            pixels.withUnsafeBytes { source in
                for dy in 0..<outHeight {
                    var s = start + dy * rowStep, d = dy * outWidth * px
                    if dy % rowsPerBand == 0, stop() {
                        stopped = true
                        break
                    }
                    if step == px {
                        target.baseAddress!.advanced(by: d).copyMemory(from: source.baseAddress!.advanced(by: s), byteCount: outWidth * px)
                        continue
                    }
                    var x = 0
                    if step == -px {
                        // A mirrored row (a horizontal flip): four pixels at a time, their order reversed
                        // in one vector register (one pixel at a time ran at half Pillow's speed).
                        while x + 4 <= outWidth {
                            let four = source.loadUnaligned(fromByteOffset: s - 3 * px, as: SIMD4<UInt32>.self)
                            target.storeBytes(of: SIMD4(four[3], four[2], four[1], four[0]), toByteOffset: d, as: SIMD4<UInt32>.self)
                            s -= 4 * px
                            d += 4 * px
                            x += 4
                        }
                    }
                    for _ in x..<outWidth {
                        target.storeBytes(of: source.loadUnaligned(fromByteOffset: s, as: UInt32.self), toByteOffset: d, as: UInt32.self)
                        s += step
                        d += px
                    }
                }
            }
            // Stopped, no byte counts as initialised: the buffer is freed unread.
            initialized = stopped ? 0 : count
        }
        return stopped ? nil : result
    }
}
