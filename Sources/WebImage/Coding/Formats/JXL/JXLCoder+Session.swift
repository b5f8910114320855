internal import CJxl
import Foundation

extension JXLCoder {
    /// One libjxl decoder over `bytes`, given them a piece at a time: libjxl asks for more
    /// (`JXL_DEC_NEED_MORE_INPUT`) once it has decoded every section the bytes so far complete,
    /// and before the next piece `Task.isCancelled` is looked at. The input is closed with the
    /// last piece, so the end of a file (complete, cut or damaged) is met as a one-call decode
    /// meets it: the same images and the same errors (`JXLPieceDecodeTests`). Inside a piece,
    /// libjxl's parallel sections run through ``cancellableRunner``, which stops between groups
    /// and rows of a cancelled task: a tiny file can hold a huge image.
    final class Session {
        /// 64 KB, as WebP's pieces: about 0.2–0.5 MP of a photo, a few ms of libjxl's work.
        static let pieceSize = 1 << 16

        let handle: OpaquePointer
        private let bytes: UnsafeRawBufferPointer
        private let pieceSize: Int
        /// How far into `bytes` libjxl has been given (the end of the last piece).
        private var given = 0
        /// Whether ``cancellableRunner`` refused a section of a cancelled task (libjxl then fails).
        private(set) var cancelledBySection = false

        /// `bytes` must stay valid as long as the session: the decoder reads them in place.
        init(_ bytes: UnsafeRawBufferPointer, events: UInt32, pieceSize: Int = .max) throws(ImageDecodingError) {
            try CodecLibrary.jxl.checkDecoding(.jpegXL)
            guard let handle = JxlDecoderCreate(nil) else { throw .corrupt(format: .jpegXL, reason: "cannot create decoder") }
            self.handle = handle
            self.bytes = bytes
            self.pieceSize = max(1, pieceSize)
            guard bytes.baseAddress != nil,
                  JxlDecoderSubscribeEvents(handle, Int32(JXL_DEC_BASIC_INFO.rawValue | events)) == JXL_DEC_SUCCESS,
                  JxlDecoderSetKeepOrientation(handle, 1) == JXL_DEC_SUCCESS,
                  JxlDecoderSetUnpremultiplyAlpha(handle, 1) == JXL_DEC_SUCCESS,
                  JxlDecoderSetParallelRunner(handle, Self.cancellableRunner, Unmanaged.passUnretained(self).toOpaque())
                    == JXL_DEC_SUCCESS,
                  give(from: 0)
            else { throw .corrupt(format: .jpegXL, reason: "cannot set up the decoder") }
        }

        deinit { JxlDecoderDestroy(handle) }

        /// The next event; errors and a premature end throw, and a cancelled task throws
        /// ``ImageDecodingError/cancelled`` before libjxl gets another piece.
        func next() throws(ImageDecodingError) -> JxlDecoderStatus {
            while true {
                let status = JxlDecoderProcessInput(handle)
                switch status {
                case JXL_DEC_ERROR:
                    if cancelledBySection { throw .cancelled }
                    throw .corrupt(format: .jpegXL, reason: "invalid JPEG XL data")
                case JXL_DEC_NEED_MORE_INPUT:
                    guard given < bytes.count else { throw .corrupt(format: .jpegXL, reason: "data ends early") }
                    if Task.isCancelled { throw .cancelled }
                    // Bytes libjxl has not used yet are given again, at the start of the next piece.
                    let unused = JxlDecoderReleaseInput(handle)
                    guard unused <= given, give(from: given - unused) else {
                        throw .corrupt(format: .jpegXL, reason: "invalid JPEG XL data")
                    }
                default: return status
                }
            }
        }

        /// Notes that a section was refused to a cancelled task; what the runner returns to libjxl.
        func refuseSection() -> Int32 {
            cancelledBySection = true
            return JXL_PARALLEL_RET_RUNNER_ERROR
        }

        /// Gives libjxl `bytes[start ..< end]`, `end` a piece past what it had (or the end of
        /// the file, when the input is closed too); false if libjxl refuses it.
        private func give(from start: Int) -> Bool {
            let end = bytes.count - given <= pieceSize ? bytes.count : given + pieceSize
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                  JxlDecoderSetInput(handle, base + start, end - start) == JXL_DEC_SUCCESS
            else { return false }
            given = end
            if end == bytes.count { JxlDecoderCloseInput(handle) }
            return true
        }
    }
}
