internal import CJxl
import Foundation

extension JXLCoder.Session {
    /// libjxl's parallel runner for a session (`JxlDecoderSetParallelRunner`, the session as its
    /// opaque pointer): every parallel section — rows, DC groups, AC or modular groups — runs on
    /// the calling thread, one item after another, as libjxl's own sequential runner runs them
    /// (the decoder has never been given threads), with a look at `Task.isCancelled` before each
    /// item. A cancelled task gets an error back instead of the rest of the section: libjxl 0.7
    /// then returns `JXL_DEC_ERROR` from `JxlDecoderProcessInput`, and ``next()`` throws
    /// ``ImageDecodingError/cancelled`` (``cancelledBySection``), not a corrupt-file error. So
    /// a very compressible file — a solid-colour 49 MP image is a few hundred bytes, one input
    /// piece and one call — stops within one item's work (a 256² or 1024² group, a row).
    ///
    /// Only sections over a range that starts at 0 are refused. libjxl 0.7.0 returns every
    /// section's failure as a status on the decoding path except one: adaptive DC smoothing
    /// (`lib/jxl/compressed_dc.cc`, lossy files) runs rows `1 ..< ysize - 1` under `JXL_CHECK`,
    /// which traps the process on failure. It is the only section whose range does not start at 0
    /// (the others: `dec_frame.cc`, `dec_modular.cc`, `dec_external_image.cc`,
    /// `modular/transform/`), and it costs a few ms at 49 MP, so it always runs to its end.
    static let cancellableRunner: JxlParallelRunner = { opaque, call, initialize, run, start, end in
        guard let opaque, let initialize, let run else { return JXL_PARALLEL_RET_RUNNER_ERROR }
        let session = Unmanaged<JXLCoder.Session>.fromOpaque(opaque).takeUnretainedValue()
        let refusable = start == 0
        if refusable && Task.isCancelled { return session.refuseSection() }
        let initialized = initialize(call, 1)
        guard initialized == 0 else { return initialized }
        for value in start..<max(start, end) {
            if refusable && Task.isCancelled { return session.refuseSection() }
            run(call, value, 0)
        }
        return 0
    }
}
