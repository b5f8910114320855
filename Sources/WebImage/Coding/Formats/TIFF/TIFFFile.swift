internal import CTiff
import Foundation
#if canImport(Logging)
import Logging  // absent in scripts/fuzz's standalone build of the Coding layer
#endif

/// One TIFF opened with libtiff straight from bytes in memory (`TIFFClientOpenExt`).
///
/// libtiff reports errors and warnings through handlers; the ones installed here (per file,
/// through `TIFFOpenOptions`) format the message into this object instead of printing to
/// stderr, and return "handled" so libtiff's global handlers never run. The first error becomes
/// the ``ImageDecodingError/corrupt(format:reason:)`` reason; warnings go to swift-log at debug
/// level. libtiff never aborts on bad data: every reading call returns a status.
///
/// - note: Not thread-safe and not `Sendable`; it borrows `bytes`, which must outlive it.
final class TIFFFile {
    /// The client data handed to libtiff's callbacks: the bytes, the read position, the messages.
    struct State {
        var bytes: UnsafeRawBufferPointer
        var offset: Int
        var firstError: String?
        var warnings: [String]
    }

    let tiff: OpaquePointer
    /// The largest single buffer libtiff, or a strip or tile read through ``readSamples(_:_:)``, may take.
    let maxAllocation: Int
    private let state: UnsafeMutablePointer<State>
    #if canImport(Logging)
    private static let logger = Logger(label: "webimage.tiff")
    #endif

    /// Opens the file and reads its first directory. `maxAllocation` caps any single buffer
    /// libtiff allocates for itself (strip and tile buffers, tag arrays).
    init(_ bytes: UnsafeRawBufferPointer, maxAllocation: Int) throws(ImageDecodingError) {
        self.maxAllocation = maxAllocation
        state = .allocate(capacity: 1)
        state.initialize(to: State(bytes: bytes, offset: 0, firstError: nil, warnings: []))
        let options = TIFFOpenOptionsAlloc()
        defer { TIFFOpenOptionsFree(options) }
        TIFFOpenOptionsSetMaxSingleMemAlloc(options, tmsize_t(maxAllocation))
        TIFFOpenOptionsSetErrorHandlerExtR(options, Self.onError, state)
        TIFFOpenOptionsSetWarningHandlerExtR(options, Self.onWarning, state)
        // The map callback hands libtiff the bytes themselves, so strips are decoded where they
        // are (no copy into a read buffer); libtiff treats mapped memory as read-only. "O" loads
        // strip and tile offsets on demand, not with each directory: a thousand directories
        // sharing a 600,000-entry offset array took 12 s to walk for the header (red team).
        guard let tiff = TIFFClientOpenExt(
            "memory", "rO", state, Self.read, Self.write, Self.seek, Self.close, Self.size, Self.map, Self.unmap, options)
        else {
            let reason = state.pointee.firstError ?? "not a readable TIFF"
            state.deinitialize(count: 1)
            state.deallocate()
            throw .corrupt(format: .tiff, reason: reason)
        }
        self.tiff = tiff
    }

    deinit {
        TIFFClose(tiff)
        #if canImport(Logging)
        for warning in state.pointee.warnings { Self.logger.debug("libtiff warning", metadata: ["message": "\(warning)"]) }
        #endif
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The error for a failed libtiff call: the message its error handler received.
    func failure(_ fallback: String) -> ImageDecodingError {
        .corrupt(format: .tiff, reason: state.pointee.firstError ?? fallback)
    }

    /// Selects directory `index` (0-based).
    func select(_ index: Int) throws(ImageDecodingError) {
        guard TIFFSetDirectory(tiff, tdir_t(index)) == 1 else { throw failure("cannot read page \(index)") }
    }

    /// Moves to the next directory; `false` after the last one (or at a broken link).
    func nextDirectory() -> Bool { TIFFReadDirectory(tiff) == 1 }

    /// Why libtiff's RGBA interface cannot convert the current directory; `nil` when it can.
    func rgbaRefusal() -> String? {
        var message = [CChar](repeating: 0, count: 1024)
        guard TIFFRGBAImageOK(tiff, &message) != 1 else { return nil }
        return String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Decodes the current directory through libtiff's RGBA interface into `raster` (`width ×
    /// height` RGBA8, premultiplied by libtiff, top row first in the order stored: the orientation
    /// tag is reported, not applied). Check ``rgbaRefusal()`` first.
    func readRGBA(_ page: Page, into raster: UnsafeMutableRawBufferPointer) throws(ImageDecodingError) {
        // Sides are 32-bit tags: their product (× 4) can pass Int.max.
        let (area, overflow) = page.width.multipliedReportingOverflow(by: page.height)
        guard !overflow, raster.count / 4 >= area else { throw .corrupt(format: .tiff, reason: "raster too small") }
        // Asking for the file's own orientation makes libtiff copy rows and columns as stored.
        let status = TIFFReadRGBAImageOriented(
            tiff, UInt32(page.width), UInt32(page.height), raster.baseAddress?.assumingMemoryBound(to: UInt32.self),
            Int32(page.orientation.rawValue), 1)
        guard status == 1 else { throw failure("cannot decode the pixels") }
    }

    // MARK: - libtiff callbacks (C function pointers: no captures, state through the client data)

    private static func state(_ handle: thandle_t?) -> UnsafeMutablePointer<State>? {
        handle?.assumingMemoryBound(to: State.self)
    }

    private static let read: TIFFReadWriteProc = { handle, buffer, count in
        guard let input = state(handle), let buffer, count > 0, let base = input.pointee.bytes.baseAddress else { return 0 }
        let available = min(Int(count), input.pointee.bytes.count - input.pointee.offset)
        guard available > 0 else { return 0 }
        buffer.copyMemory(from: base + input.pointee.offset, byteCount: available)
        input.pointee.offset += available
        return tmsize_t(available)
    }

    private static let write: TIFFReadWriteProc = { _, _, _ in 0 }

    private static let seek: TIFFSeekProc = { handle, offset, whence in
        guard let input = state(handle) else { return toff_t.max }
        let base: Int
        switch whence {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = input.pointee.offset
        case SEEK_END: base = input.pointee.bytes.count
        default: return toff_t.max
        }
        // Offsets are unsigned; a "negative" relative seek arrives as a huge value that wraps.
        let target = Int(truncatingIfNeeded: UInt64(base) &+ offset)
        guard target >= 0 else { return toff_t.max }
        input.pointee.offset = min(target, input.pointee.bytes.count)
        return toff_t(target)
    }

    private static let close: TIFFCloseProc = { _ in 0 }

    private static let size: TIFFSizeProc = { handle in toff_t(state(handle)?.pointee.bytes.count ?? 0) }

    private static let map: TIFFMapFileProc = { handle, base, size in
        guard let input = state(handle), let base, let size, let address = input.pointee.bytes.baseAddress else { return 0 }
        base.pointee = UnsafeMutableRawPointer(mutating: address)
        size.pointee = toff_t(input.pointee.bytes.count)
        return 1
    }

    private static let unmap: TIFFUnmapFileProc = { _, _, _ in }

    private static let onError: TIFFErrorHandlerExtR = { _, user, module, format, arguments in
        guard let sink = user?.assumingMemoryBound(to: State.self) else { return 1 }
        if sink.pointee.firstError == nil { sink.pointee.firstError = message(module, format, arguments) }
        return 1
    }

    private static let onWarning: TIFFErrorHandlerExtR = { _, user, module, format, arguments in
        guard let sink = user?.assumingMemoryBound(to: State.self) else { return 1 }
        if sink.pointee.warnings.count < 16 { sink.pointee.warnings.append(message(module, format, arguments)) }
        return 1
    }

    private static func message(
        _ module: UnsafePointer<CChar>?, _ format: UnsafePointer<CChar>?, _ arguments: CVaListPointer?
    ) -> String {
        guard let format, let arguments else { return "libtiff error" }
        var buffer = [CChar](repeating: 0, count: 512)
        _ = vsnprintf(&buffer, buffer.count, format, arguments)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let module else { return text }
        return "\(String(cString: module)): \(text)"
    }
}
