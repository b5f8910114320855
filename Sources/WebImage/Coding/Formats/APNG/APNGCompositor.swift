/// Composites decoded APNG frame regions onto the canvas with the frame's blend operation, and
/// disposes of them afterwards, in premultiplied RGBA8 (see ``Image``).
///
/// *source* replaces the region; *over* draws it over the canvas (`out = src + dst · (1 − αsrc)`,
/// rounded exactly like ``PixelOperations/premultiply(_:)``). Disposal *background* clears the
/// region to transparent black, *previous* restores what the region held before the frame
/// (on the first frame it counts as *background*, as the specification says).
struct APNGCompositor {
    let width: Int, height: Int
    private(set) var canvas: [UInt8]
    private var saved: [UInt8]?
    private var pending: (frame: APNGAnimation.Frame, dispose: APNGAnimation.DisposeOp)?

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        canvas = [UInt8](repeating: 0, count: width * height * 4)
    }

    /// Applies the previous frame's disposal, then draws `region` (premultiplied, `frame.width`
    /// × `frame.height`). Afterwards ``canvas`` shows the frame.
    mutating func draw(_ region: [UInt8], frame: APNGAnimation.Frame, isFirst: Bool) {
        disposePending()
        let dispose = isFirst && frame.dispose == .previous ? .background : frame.dispose
        if dispose == .previous { saved = rows(of: frame) }
        pending = (frame, dispose)
        region.withUnsafeBufferPointer { src in
            canvas.withUnsafeMutableBufferPointer { dst in
                for row in 0..<frame.height {
                    let s = row * frame.width * 4, d = ((frame.y + row) * width + frame.x) * 4
                    if frame.blend == .source {
                        UnsafeMutableRawPointer(dst.baseAddress! + d).copyMemory(from: src.baseAddress! + s, byteCount: frame.width * 4)
                        continue
                    }
                    for i in 0..<frame.width {
                        let p = s + i * 4, q = d + i * 4
                        let alpha = UInt32(src[p + 3])
                        if alpha == 255 {
                            dst[q] = src[p]; dst[q + 1] = src[p + 1]; dst[q + 2] = src[p + 2]; dst[q + 3] = 255
                        } else if alpha != 0 {
                            let keep = 255 - alpha
                            for c in 0..<4 {
                                let t = UInt32(dst[q + c]) * keep + 128
                                dst[q + c] = UInt8(min(255, UInt32(src[p + c]) + ((t + (t >> 8)) >> 8)))
                            }
                        }
                    }
                }
            }
        }
    }

    private mutating func disposePending() {
        guard let (frame, dispose) = pending else { return }
        pending = nil
        switch dispose {
        case .none: break
        case .background:
            for row in 0..<frame.height {
                let d = ((frame.y + row) * width + frame.x) * 4
                canvas.replaceSubrange(d..<(d + frame.width * 4), with: repeatElement(0, count: frame.width * 4))
            }
        case .previous:
            guard let saved else { return }
            for row in 0..<frame.height {
                let d = ((frame.y + row) * width + frame.x) * 4, s = row * frame.width * 4
                canvas.replaceSubrange(d..<(d + frame.width * 4), with: saved[s..<(s + frame.width * 4)])
            }
            self.saved = nil
        }
    }

    /// A copy of the canvas under the frame's region.
    private func rows(of frame: APNGAnimation.Frame) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(frame.width * frame.height * 4)
        for row in 0..<frame.height {
            let d = ((frame.y + row) * width + frame.x) * 4
            out.append(contentsOf: canvas[d..<(d + frame.width * 4)])
        }
        return out
    }
}
