import CGIF
import Foundation

extension PlainDecode {
    /// giflib's `DGifSlurp` (every frame's indices, interlacing undone), then the compositing
    /// any GIF decoder must do to give each frame as RGBA: palette look-up, the transparent
    /// index kept from the canvas, disposal 2 (clear the rectangle) and 3 (restore), one copy
    /// of the canvas per frame. Frames are assumed inside the canvas (true of the fixture).
    static func gif(_ data: Data) -> [[UInt8]] {
        data.withUnsafeBytes { raw in
            var input = SlurpInput(bytes: raw, offset: 0)
            return withUnsafeMutablePointer(to: &input) { user in
                var error: Int32 = 0
                let gif = DGifOpen(user, slurpRead, &error)!
                defer { DGifCloseFile(gif, &error) }
                precondition(DGifSlurp(gif) == GIF_OK)
                return composite(gif)
            }
        }
    }

    private static func composite(_ gif: UnsafeMutablePointer<GifFileType>) -> [[UInt8]] {
        let width = Int(gif.pointee.SWidth), height = Int(gif.pointee.SHeight)
        var canvas = [UInt8](repeating: 0, count: width * height * 4)
        var frames: [[UInt8]] = []
        for index in 0..<Int(gif.pointee.ImageCount) {
            let saved = gif.pointee.SavedImages[index]
            let desc = saved.ImageDesc
            var control = GraphicsControlBlock(DisposalMode: 0, UserInputFlag: false, DelayTime: 0, TransparentColor: -1)
            _ = DGifSavedExtensionToGCB(gif, Int32(index), &control)
            let map = (desc.ColorMap ?? gif.pointee.SColorMap)!.pointee
            let left = Int(desc.Left), top = Int(desc.Top), w = Int(desc.Width), h = Int(desc.Height)
            let previous = control.DisposalMode == DISPOSE_PREVIOUS ? canvas : nil
            canvas.withUnsafeMutableBufferPointer { out in
                for y in 0..<h {
                    for x in 0..<w {
                        let i = Int32(saved.RasterBits![y * w + x])
                        guard i != control.TransparentColor, i < map.ColorCount else { continue }
                        let color = map.Colors![Int(i)], o = ((top + y) * width + left + x) * 4
                        out[o] = color.Red; out[o + 1] = color.Green; out[o + 2] = color.Blue; out[o + 3] = 255
                    }
                }
            }
            frames.append(canvas)
            if control.DisposalMode == DISPOSE_BACKGROUND {
                for y in top..<top + h { canvas.replaceSubrange((y * width + left) * 4..<(y * width + left + w) * 4, with: repeatElement(0, count: w * 4)) }
            } else if let previous {
                canvas = previous
            }
        }
        return frames
    }

    private struct SlurpInput {
        var bytes: UnsafeRawBufferPointer
        var offset: Int
    }

    private static let slurpRead: InputFunc = { gif, buffer, count in
        let input = gif!.pointee.UserData!.assumingMemoryBound(to: SlurpInput.self)
        let n = min(Int(count), input.pointee.bytes.count - input.pointee.offset)
        guard n > 0 else { return 0 }
        UnsafeMutableRawPointer(buffer!).copyMemory(from: input.pointee.bytes.baseAddress! + input.pointee.offset, byteCount: n)
        input.pointee.offset += n
        return Int32(n)
    }
}
