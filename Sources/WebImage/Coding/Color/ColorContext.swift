import CLcms2
import Foundation

/// The one LittleCMS context WebImage uses: errors are dropped there (LittleCMS reports them and
/// returns `NULL` or `false`, which the callers check), and profiles are opened from memory only.
///
/// `@unchecked Sendable`: the context is created once and never changed; LittleCMS lets several
/// threads open profiles and build transforms in one context at once (that is what its `THR`
/// functions are for). Profiles opened here live only inside one ``withProfile(_:_:)`` call.
final class ColorContext: @unchecked Sendable {
    let handle: cmsContext?

    init() {
        handle = cmsCreateContext(nil, nil)
        cmsSetLogErrorHandlerTHR(handle) { _, _, _ in }
    }

    deinit { cmsDeleteContext(handle) }

    /// Opens `icc`, runs `body` with it, and closes it; `nil` when LittleCMS refuses the bytes,
    /// or when they hold more stages or curve segments than LittleCMS can build a transform from
    /// in bounded time (``ICCProfileLimits``).
    func withProfile<Result>(_ icc: Data, _ body: (cmsHPROFILE) -> Result) -> Result? {
        guard !icc.isEmpty, let size = cmsUInt32Number(exactly: icc.count), ICCProfileLimits.allows(icc) else { return nil }
        // LittleCMS copies the bytes it is given (the profile never points into `icc`).
        let opened = icc.withUnsafeBytes { cmsOpenProfileFromMemTHR(handle, $0.baseAddress, size) }
        guard let opened else { return nil }
        defer { cmsCloseProfile(opened) }
        return body(opened)
    }

    /// A new sRGB profile (cheap: built in memory), for one transform's construction.
    func sRGB() -> cmsHPROFILE? { cmsCreate_sRGBProfileTHR(handle) }

    /// The profile's description tag in English, or "" (at most 255 bytes are read).
    func description(of profile: cmsHPROFILE) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let written = cmsGetProfileInfoASCII(profile, cmsInfoDescription, "en", "US", &buffer, cmsUInt32Number(buffer.count))
        guard written > 0 else { return "" }
        buffer[buffer.count - 1] = 0
        let text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return text.trimmingCharacters(in: .whitespacesAndNewlines.union(.controlCharacters))
    }
}
