import Foundation
import WebImage

/// Decode → process → encode for one request, timed per stage. Runs off the request's task
/// (see ``ImageServer``); throws ``ImageServerError`` only.
struct ImageRenderer: Sendable {
    var parameters: ImageParameters
    /// Steps before the resize (``ImageParameters/leadingSteps``: `trim`, `process`).
    var processors: [any ImageProcessing]
    /// Steps after the resize (``ImageParameters/finishingSteps(for:)``: effects, `extend`,
    /// `padding`, the flattening onto `bg`).
    var finishing: [any ImageProcessing] = []
    var outputFormat: ImageFormat
    var quality: Int
    var maxPixels: Int
    var maxSide: Int
    /// What happens to the source's colour profile (``ImageServerConfiguration/colorHandling``).
    var colorHandling: ColorHandling = .convertToSRGB
    /// The coders that decode and encode (``ImageServerConfiguration/coders``).
    var coders: ImageCoderRegistry = .default

    struct Timings: Sendable {
        var decode: Duration = .zero
        var process: Duration = .zero
        var encode: Duration = .zero
    }

    /// Renders `source`, decoded with `options` (``decodingOptions(_:header:)``, as priced).
    func render(_ source: Data, header: ImageHeader, options: ImageDecodingOptions) throws(ImageServerError) -> (Data, Timings) {
        if streams(header), let streamed = try renderFrameByFrame(source, header: header, options: options) { return streamed }
        var timings = Timings()
        let clock = ContinuousClock()
        let animated = keepsAnimation(header)
        let inside = insideTarget(source, header)
        var start = clock.now
        let decoded: Image
        do { decoded = try coders.decode(source, options: options) } catch { throw ImageServerError(error) }
        timings.decode = clock.now - start

        start = clock.now
        var steps = processors
        let done = inside.map { decoded.displayedSize == $0 } ?? false
        if let resize = resize, !done { steps.append(animated ? resize.steady : resize) }
        steps += finishing
        var image: Image
        do {
            image = steps.isEmpty ? decoded.oriented() : try decoded.processed(by: steps, animated: animated)
            // The output limit holds whatever the steps did (a rotation grows the canvas).
            if max(image.pixelWidth, image.pixelHeight) > maxSide {
                image = try image.processed(by: [ImageProcessors.Resize(width: maxSide, height: maxSide)], animated: animated)
            }
        } catch {
            throw ImageServerError(status: 422, code: "unprocessable", message: error.description)
        }
        timings.process = clock.now - start

        start = clock.now
        let data = try encode(image)
        timings.encode = clock.now - start
        return (data, timings)
    }

    /// Whether an animated result is rendered frame by frame (``AnimationTranscoder``): the
    /// source has a lazy animated decoder (GIF, WebP, APNG, AVIF) and the output format an
    /// animated encoder (GIF, WebP, APNG). Memory then holds a few canvases and the file, not
    /// every frame; ``RenderBudget`` prices it so. Not when the result is a lossless WebP the
    /// encode worker writes: libwebp's lossless encoder does not call its progress hook while it
    /// computes a frame's backward references (seconds for a 2 MP noise frame, measured after a
    /// 504), so written frame by frame in this process a render overran its deadline by that
    /// much. Then every frame is made first (priced so, within the output pixel limit) and the
    /// worker, which a cancel kills, writes the file.
    func streams(_ header: ImageHeader) -> Bool {
        keepsAnimation(header) && [.gif, .webp, .apng, .avif].contains(header.format)
            && !(outputFormat == .webp && quality >= 100 && coders.isolatesEncode(pixelCount: header.totalPixelCount, as: .webp, quality: 1))
    }

    /// The animation decoded, processed and encoded one frame at a time (frames beyond
    /// `options.maxFrameCount` dropped); `nil` when the source has no lazy decoder after all
    /// (an APNG whose animation chunks are broken shows as its still image).
    private func renderFrameByFrame(
        _ source: Data, header: ImageHeader, options: ImageDecodingOptions
    ) throws(ImageServerError) -> (Data, Timings)? {
        let animation: (any AnimatedImageDecoding)?
        do { animation = try coders.animatedDecoder(for: source, options: options) } catch { throw ImageServerError(error) }
        guard let animation, animation.frameCount > 1 else { return nil }
        let orientation = ImageProperties.orientation(of: source, format: header.format)
        let upright = orientation.swapsWidthAndHeight
            ? (width: animation.pixelHeight, height: animation.pixelWidth) : (width: animation.pixelWidth, height: animation.pixelHeight)
        var steps = processors
        let done = insideTarget(source, header, orientation: orientation).map { upright == $0 } ?? false
        if let resize, !done { steps.append(resize.steady) }
        steps += finishing
        let lossy = outputFormat == .webp
        let transcoder = AnimationTranscoder(format: outputFormat, quality: lossy ? Double(quality) / 100 : 1, maxFrames: options.maxFrameCount)
        do {
            let (data, spent) = try transcoder.transcode(animation, orientation: orientation, isOpaque: !header.hasAlpha) { frame in
                var image = steps.isEmpty ? frame : try frame.processed(by: steps)
                // The output limit holds whatever the steps did (a rotation grows the canvas).
                if max(image.pixelWidth, image.pixelHeight) > maxSide {
                    image = try image.processed(by: [ImageProcessors.Resize(width: maxSide, height: maxSide)])
                }
                return image
            }
            return (data, Timings(decode: spent.decode, process: spent.process, encode: spent.encode))
        } catch let error as ImageDecodingError {
            throw ImageServerError(error)
        } catch let error as ImageProcessingError {
            throw ImageServerError(status: 422, code: "unprocessable", message: error.description)
        } catch let error as ImageEncodingError {
            throw ImageServerError(error, writing: outputFormat)
        } catch {
            throw ImageServerError(status: 422, code: "unprocessable", message: "the image cannot be written as \(outputFormat)")
        }
    }

    /// How the source is decoded (``RenderBudget`` adds the frames kept): `fit=inside` alone at the output
    /// size itself (JPEG and WebP from a reduced decode, one resampling pass, and no resize
    /// follows), or at a size that still covers the result, whatever the orientation.
    func decodingOptions(_ source: Data, header: ImageHeader) -> ImageDecodingOptions {
        var options = ImageDecodingOptions(maxPixelCount: maxPixels, firstFrameOnly: !keepsAnimation(header))
        options.colorHandling = colorHandling
        if let inside = insideTarget(source, header) { options.thumbnailMaxPixelSize = max(inside.width, inside.height) }
        else if processors.isEmpty { options.thumbnailMaxPixelSize = decodeSide(header) }
        return options
    }

    /// Whether the result is an animation: the source has frames and the output format keeps them.
    func keepsAnimation(_ header: ImageHeader) -> Bool {
        header.frameCount > 1 && FormatNegotiation.keepsAnimation(outputFormat)
    }

    /// The resize `w`, `h` (both × `dpr`) and `fit` ask for: none enlarges unless `enlarge=1`;
    /// then `cover` and `fill` produce exactly `w` × `h`. `cover` crops where `gravity` says.
    var resize: ImageProcessors.Resize? {
        let width = parameters.targetWidth, height = parameters.targetHeight, enlarge = parameters.enlarge
        guard width != nil || height != nil else { return nil }
        switch parameters.fit {
        case .inside: return .init(width: width ?? maxSide, height: height ?? maxSide, mode: .fit, upscale: enlarge)
        case .cover: return .init(width: width ?? maxSide, height: height ?? maxSide, mode: .fill, upscale: enlarge, gravity: parameters.gravity)
        case .fill: return .init(width: width ?? maxSide, height: height ?? maxSide, mode: .exact, upscale: enlarge)
        }
    }

    /// With `fit=inside` and no steps before the resize, the output size (upright, as the
    /// source's orientation turns it: `known`, or read from `source`), when it is smaller than the source.
    func insideTarget(_ source: Data, _ header: ImageHeader, orientation known: ImageOrientation? = nil) -> (width: Int, height: Int)? {
        guard processors.isEmpty, parameters.fit == .inside, let resize, header.pixelWidth > 0, header.pixelHeight > 0 else { return nil }
        let orientation = known ?? ImageProperties.orientation(of: source, format: header.format)
        let (w, h) = orientation.swapsWidthAndHeight ? (header.pixelHeight, header.pixelWidth) : (header.pixelWidth, header.pixelHeight)
        let plan = resize.plan(sourceWidth: w, sourceHeight: h)
        guard plan.width < w || plan.height < h else { return nil }
        return (plan.width, plan.height)
    }

    /// The longest side to decode at when only resizing: enough to cover the result in either
    /// orientation (EXIF may turn the picture), never more than the source.
    func decodeSide(_ header: ImageHeader) -> Int? {
        guard let resize, header.pixelWidth > 0, header.pixelHeight > 0 else { return nil }
        let w = Double(header.pixelWidth), h = Double(header.pixelHeight)
        let tw = Double(resize.width), th = Double(resize.height)
        func scale(_ sw: Double, _ sh: Double) -> Double {
            switch parameters.fit {
            case .inside: min(tw / sw, th / sh)
            case .cover, .fill: max(tw / sw, th / sh)
            }
        }
        let factor = max(scale(w, h), scale(h, w))
        guard factor < 1 else { return nil }
        return Int((max(w, h) * factor).rounded(.up)) + 1
    }
}

extension ImageProcessors.Resize {
    /// This resize for every frame of an animation: `gravity=sm` takes the centre, since a
    /// window chosen frame by frame would jump about.
    fileprivate var steady: Self {
        var resize = self
        if resize.gravity == .smart { resize.gravity = .center }
        return resize
    }
}

extension Image {
    /// Width and height once ``orientation`` is applied.
    fileprivate var displayedSize: (width: Int, height: Int) {
        orientation.swapsWidthAndHeight ? (pixelHeight, pixelWidth) : (pixelWidth, pixelHeight)
    }
}
