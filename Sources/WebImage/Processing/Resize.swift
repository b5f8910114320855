extension ImageProcessors {
    /// Scales the image to a target size in pixels with ``Resampler`` (area averaging where it
    /// shrinks, bilinear where it grows).
    ///
    /// - ``Mode/fit``: the whole image inside `width × height`, aspect ratio kept.
    /// - ``Mode/fill``: covers `width × height`, aspect ratio kept; what overflows is cropped
    ///   evenly from both sides (the centre is kept). Only the kept part is resampled.
    /// - ``Mode/exact``: exactly `width × height`, aspect ratio ignored.
    ///
    /// With `upscale` false (the default) the image is never enlarged: `fit` and `fill` keep a
    /// smaller image at its size (`fill` still crops it to the target's shape if it overflows),
    /// `exact` limits each side to the source's. `gravity` places `fill`'s window (the centre by
    /// default, see ``ImageProcessors/Gravity``; ``Gravity/smart`` looks at the pixels, see
    /// ``ImageProcessors/SmartCrop``). Identifier: `resize(256x256,fill,upscale:false)`, with
    /// `,gravity:no` appended when the gravity is not the centre.
    ///
    /// ```swift
    /// let thumbnail = try image.processed(by: [.resize(width: 256, height: 256)])
    /// let cover = try image.processed(by: [.resize(width: 1200, height: 630, mode: .fill, upscale: true)])
    /// ```
    public struct Resize: ImageProcessing, Hashable {
        public enum Mode: String, Sendable, Hashable, CaseIterable {
            case fit, fill, exact
        }

        public var width: Int
        public var height: Int
        public var mode: Mode
        public var upscale: Bool
        /// Where `fill` keeps its window; the other modes keep the whole image.
        public var gravity: Gravity

        public init(width: Int, height: Int, mode: Mode = .fit, upscale: Bool = false, gravity: Gravity = .center) {
            self.width = width
            self.height = height
            self.mode = mode
            self.upscale = upscale
            self.gravity = gravity
        }

        public var identifier: String {
            let placed = mode == .fill && gravity != .center ? ",gravity:\(gravity.identifier)" : ""
            return "resize(\(width)x\(height),\(mode.rawValue),upscale:\(upscale)\(placed))"
        }

        public func process(_ image: Image) throws(ImageProcessingError) -> Image {
            try checkInput(image)
            guard width > 0, height > 0 else {
                throw .invalidParameter(processor: identifier, reason: "the target size must be positive, not \(width) × \(height)")
            }
            let plan = plan(sourceWidth: image.pixelWidth, sourceHeight: image.pixelHeight)
            try checkOutputSize(width: plan.width, height: plan.height)
            var source = image
            if var crop = plan.crop {
                if gravity == .smart {
                    let origin = SmartCrop.origin(of: image, keep: (crop.width, crop.height))
                    crop.x = origin.x
                    crop.y = origin.y
                }
                source = try Crop(.rect(x: crop.x, y: crop.y, width: crop.width, height: crop.height)).process(image)
            }
            let pixels = plan.width == source.pixelWidth && plan.height == source.pixelHeight ? source.packedPixels
                : Resampler.resample(source.pixels, width: source.pixelWidth, height: source.pixelHeight,
                                     bytesPerRow: source.bytesPerRow, toWidth: plan.width, toHeight: plan.height)
            return image.replacing(pixels: pixels, width: plan.width, height: plan.height, isOpaque: source.isOpaque)
        }

        /// The smart crop's attention map (``SmartCrop/workingBytes``) for `fill` with ``Gravity/smart``.
        public func workingBytes(width: Int, height: Int) -> Int {
            mode == .fill && gravity == .smart ? SmartCrop.workingBytes : 0
        }

        public func outputSize(width: Int, height: Int) -> (width: Int, height: Int) {
            guard width > 0, height > 0 else { return (width, height) }
            let plan = plan(sourceWidth: width, sourceHeight: height)
            return (plan.width, plan.height)
        }

        /// The output size and, for `fill`, the part of the source that is kept (placed by `gravity`).
        package func plan(sourceWidth w: Int, sourceHeight h: Int) -> (width: Int, height: Int, crop: (x: Int, y: Int, width: Int, height: Int)?) {
            let sx = Double(width) / Double(w), sy = Double(height) / Double(h)
            func scaled(_ side: Int, _ factor: Double) -> Int {
                let value = (Double(side) * factor).rounded()
                return value >= Double(Int32.max) ? Int(Int32.max) : max(1, Int(value))
            }
            switch mode {
            case .fit:
                let factor = upscale ? min(sx, sy) : min(sx, sy, 1)
                return (scaled(w, factor), scaled(h, factor), nil)
            case .fill:
                let factor = upscale ? max(sx, sy) : min(max(sx, sy), 1)
                let outW = min(width, scaled(w, factor)), outH = min(height, scaled(h, factor))
                let keepW = min(w, max(1, Int((Double(outW) / factor).rounded())))
                let keepH = min(h, max(1, Int((Double(outH) / factor).rounded())))
                guard keepW != w || keepH != h else { return (outW, outH, nil) }
                let origin = gravity.origin(keep: (keepW, keepH), total: (w, h))
                return (outW, outH, (origin.x, origin.y, keepW, keepH))
            case .exact:
                return upscale ? (width, height, nil) : (min(width, w), min(height, h), nil)
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Resize {
    /// Scales to `width × height` pixels as `mode` says, enlarging only when `upscale` is true;
    /// `fill` keeps the window `gravity` places.
    ///
    /// ```swift
    /// let avatar = try image.processed(by: [.resize(width: 96, height: 96, mode: .fill)])
    /// let banner = try image.processed(by: [.resize(width: 1200, height: 300, mode: .fill, gravity: .north)])
    /// ```
    public static func resize(
        width: Int, height: Int, mode: ImageProcessors.Resize.Mode = .fit, upscale: Bool = false,
        gravity: ImageProcessors.Gravity = .center
    ) -> Self {
        .init(width: width, height: height, mode: mode, upscale: upscale, gravity: gravity)
    }
}
