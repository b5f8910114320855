import CLcms2
import Foundation

/// LittleCMS 2, behind a safe API: opens ICC profiles, reads what ``ColorProfile`` reports, and
/// keeps one transform to sRGB per profile and pixel layout (building one costs about a
/// millisecond; converting with it, a few nanoseconds per pixel).
///
/// Every call uses one LittleCMS context whose error handler only counts (LittleCMS's error
/// paths return `NULL`/`false`; none aborts). The cache holds at most ``capacity`` profiles and
/// forgets the oldest first.
final class ColorTransforms: Sendable {
    static let shared = ColorTransforms()
    static let capacity = 32

    struct Facts: Sendable {
        var colorSpace: ColorProfile.ColorSpace
        var description: String
        var isSRGB: Bool
    }

    /// The layouts a transform reads and writes.
    enum Layout: Hashable, Sendable {
        /// RGBA8 with alpha 255 everywhere, in place.
        case opaqueRGBA
        /// Premultiplied RGBA8, in place (alpha copied).
        case premultipliedRGBA
        /// One grey byte per pixel in, RGB8 out.
        case grayToRGB
        /// CMYK8 in (`inverted`: Adobe's JPEG convention, 0 = full ink), RGB8 out.
        case cmykToRGB(inverted: Bool)
        /// RGBA16 in host byte order, straight (not premultiplied) alpha, in place (alpha
        /// copied): 16-bit sources convert before they are narrowed to 8 bits.
        case rgba16
        /// RGBA16 whose R = G = B is a grey value, in host byte order, through a grey profile,
        /// in place: RGB written, alpha left as it is (the 16-bit path of grey sources).
        case grayInRGBA16
    }

    private struct Entry {
        /// `nil` inside: the profile is unusable. `nil` outside: not read yet (an entry made
        /// for a transform after the profile's first entry was evicted).
        var facts: Facts??
        var transforms: [Layout: ColorTransform] = [:]
        var lastUse: UInt64
    }

    private let context: ColorContext
    /// Keyed by the profile's bytes as an array, not as `Data`: a `Data` stores its buffer's
    /// address with the enum's case in the pointer's spare bits, so LeakSanitizer, which looks
    /// for plain addresses, reported every cached profile as leaked (a false report: the table
    /// holds at most ``capacity`` of them).
    private let entries = Locked<(table: [ProfileKey: Entry], clock: UInt64)>(([:], 0))

    /// A profile's bytes as a dictionary key, hashed as one block of bytes (an array of bytes
    /// hashes element by element: 0.2 ms a look-up for a 3 KB profile).
    private struct ProfileKey: Hashable {
        let bytes: [UInt8]
        init(_ data: Data) { bytes = [UInt8](data) }
        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    private init() { context = ColorContext() }

    /// What the profile is, or `nil` when LittleCMS cannot use it to convert to sRGB.
    func facts(for icc: Data) -> Facts? {
        guard icc.count <= ColorProfile.maxByteCount else { return nil }
        let key = ProfileKey(icc)
        if let known = entries.withLock({ state -> Facts?? in
            state.clock &+= 1
            state.table[key]?.lastUse = state.clock
            return state.table[key]?.facts ?? nil
        }) { return known }
        // Only usable profiles are remembered: a file's garbage (any bytes at all) is refused
        // again next time, at the price of one failed open, and never fills the cache.
        guard let read = readFacts(icc) else { return nil }
        let (facts, probe) = read
        // The transform the sRGB probe built is the one a conversion of this profile's commonest
        // layout needs next: kept, so a decode that converts does not build it a second time
        // (half of the set-up a process paid for its first tagged image).
        store(key) {
            $0.facts = .some(facts)
            if let probe, $0.transforms[probe.layout] == nil { $0.transforms[probe.layout] = probe }
        }
        return facts
    }

    /// The transform from `profile` to sRGB for `layout`, built once and shared.
    func transform(from profile: ColorProfile, layout: Layout) -> ColorTransform? {
        let key = ProfileKey(profile.data)
        if let known = entries.withLock({ $0.table[key]?.transforms[layout] }) { return known }
        guard let built = context.withProfile(profile.data, { source in
            ColorTransform(context: context, source: source, layout: layout)
        }) ?? nil else { return nil }
        store(key) { $0.transforms[layout] = built }
        return built
    }

    /// The serialised ICC profile LittleCMS builds for `description` (see ``ColorContext/rgbProfile(_:)``).
    func buildRGBProfile(_ description: ColorDescription) -> Data? { context.rgbProfile(description) }

    private func store(_ key: ProfileKey, _ update: (inout Entry) -> Void) {
        entries.withLock { state in
            state.clock &+= 1
            var entry = state.table[key] ?? Entry(lastUse: state.clock)
            update(&entry)
            entry.lastUse = state.clock
            state.table[key] = entry
            if state.table.count > Self.capacity, let oldest = state.table.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                state.table[oldest.key] = nil
            }
        }
    }

    /// The profile's facts, with the transform its sRGB check built (`nil` when no transform
    /// is needed to answer: colour spaces WebImage does not convert).
    private func readFacts(_ icc: Data) -> (Facts, ColorTransform?)? {
        context.withProfile(icc) { profile -> (Facts, ColorTransform?)? in
            let space: ColorProfile.ColorSpace
            switch cmsGetColorSpace(profile) {
            case cmsSigRgbData: space = .rgb
            case cmsSigGrayData: space = .gray
            case cmsSigCmykData: space = .cmyk
            default: space = .other
            }
            let description = context.description(of: profile)
            guard space != .other else { return (Facts(colorSpace: space, description: description, isSRGB: false), nil) }
            // A profile that cannot be turned into a transform is of no use (and not trusted).
            let probeLayout: Layout = switch space {
            case .gray: .grayToRGB
            case .cmyk: .cmykToRGB(inverted: true)  // as JPEG hands CMYK out: the layout it converts with
            default: .opaqueRGBA
            }
            guard let probe = ColorTransform(context: context, source: profile, layout: probeLayout) else { return nil }
            return (Facts(colorSpace: space, description: description, isSRGB: space == .rgb && probe.isIdentityOnProbeColors()), probe)
        } ?? nil
    }
}
