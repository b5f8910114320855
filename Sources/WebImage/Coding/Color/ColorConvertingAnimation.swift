/// An animated decoder whose frames come out in sRGB: each frame of `base` is converted from the
/// file's profile as it is asked for, so a streamed animation is colour-managed as a full decode is.
struct ColorConvertingAnimation: AnimatedImageDecoding {
    let base: any AnimatedImageDecoding
    let profile: ColorProfile
    let isDamaged: Bool

    var format: ImageFormat { base.format }
    var pixelWidth: Int { base.pixelWidth }
    var pixelHeight: Int { base.pixelHeight }
    var frameCount: Int { base.frameCount }
    var loopCount: Int { base.loopCount }
    var repairs: ImageRepairs { isDamaged ? base.repairs.union(.damagedMetadata) : base.repairs }

    func duration(at index: Int) -> Duration { base.duration(at: index) }

    func frame(at index: Int) throws(ImageDecodingError) -> ImageFrame {
        var frame = try base.frame(at: index)
        Image.convertToSRGB(&frame.pixels, width: pixelWidth, height: pixelHeight, stride: 4 * pixelWidth, opaque: false, from: profile)
        return frame
    }
}

/// An animated decoder that can convert its frames to sRGB itself, at high precision
/// (``WideColorConversion``), and says whether it does.
protocol ColorConvertedAnimation {
    /// The profile the frames are converted from already; `nil`: they come out as stored.
    var convertedColorProfile: ColorProfile? { get }
}

extension EmbeddedColor {
    /// `animation`, converted to sRGB frame by frame when `handling` asks for it, the file has
    /// a profile that needs it, and the decoder does not convert its frames itself.
    func applied(to animation: any AnimatedImageDecoding, handling: ColorHandling) -> any AnimatedImageDecoding {
        guard handling == .convertToSRGB, let profile, !profile.isSRGB else { return animation }
        if (animation as? any ColorConvertedAnimation)?.convertedColorProfile != nil { return animation }
        return ColorConvertingAnimation(base: animation, profile: profile, isDamaged: isDamaged)
    }
}
