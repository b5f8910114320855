internal import CJxl

extension JXLCoder {
    /// The pixels libjxl decodes for the frames a decode keeps, layer by layer, refused past
    /// `options`' pixel limit before any is decoded. A JPEG XL frame is made of layers: frames
    /// of zero duration blended into the next, each of its own size (a crop may be larger than
    /// the image), with its extra channels. The header counts only the frames shown, so before,
    /// 1,000 layers of 1400 × 1400 in an 88 KB file decoded as one frame for 28 s of CPU, twenty
    /// 32768² layers of a 64 × 64 image (20 KB) for 11 s, and 256 extra channels (740 bytes)
    /// for 4 s (red team, stop 52). Each layer counts its area, times one more for each four
    /// extra channels.
    static func checkLayers(_ bytes: UnsafeRawBufferPointer, frames shown: Int, extraChannels: Int, options: ImageDecodingOptions) throws(ImageDecodingError) {
        let decoder = try Session(bytes, events: JXL_DEC_FRAME.rawValue)
        guard JxlDecoderSetCoalescing(decoder.handle, 0) == JXL_DEC_SUCCESS else {
            throw .corrupt(format: .jpegXL, reason: "cannot set up the decoder")
        }
        let kept = options.framesToDecode(of: shown), weight = 1 + extraChannels / 4
        var pixels = 0, layers = 0, displayed = 0
        var info = JxlBasicInfo()
        while displayed < kept {
            let status = try decoder.next()
            if status == JXL_DEC_SUCCESS { break }
            if status == JXL_DEC_BASIC_INFO { _ = JxlDecoderGetBasicInfo(decoder.handle, &info); continue }
            guard status == JXL_DEC_FRAME else { continue }
            var header = JxlFrameHeader()
            guard JxlDecoderGetFrameHeader(decoder.handle, &header) == JXL_DEC_SUCCESS else {
                throw .corrupt(format: .jpegXL, reason: "invalid frame header")
            }
            layers += 1
            let (area, o1) = Int(header.layer_info.xsize).multipliedReportingOverflow(by: Int(header.layer_info.ysize))
            let (weighted, o2) = area.multipliedReportingOverflow(by: weight)
            let (sum, o3) = pixels.addingReportingOverflow(weighted)
            guard !o1, !o2, !o3, sum <= options.maxPixelCount else {
                throw .tooManyPixels(width: Int(info.xsize), height: Int(info.ysize), frames: layers, limit: options.maxPixelCount)
            }
            pixels = sum
            // A frame is shown when it lasts (an animation's) or is the last; stills show one.
            if header.is_last != 0 || (info.have_animation != 0 && header.duration != 0) { displayed += 1 }
        }
    }
}
