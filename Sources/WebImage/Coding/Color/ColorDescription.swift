import Foundation

/// A colour space a file states with numbers instead of an ICC profile — AVIF/HEIF `nclx`
/// code points, PNG `gAMA` + `cHRM`, BMP's calibrated endpoints and gammas — turned into an
/// equivalent ICC profile by LittleCMS, so every source converts through the one ICC path.
///
/// Every value comes from the file: ``profile()`` checks them (finite, chromaticities inside the
/// unit triangle, gammas 0.1…10) before any arithmetic, and gives `nil` for anything else.
struct ColorDescription: Hashable, Sendable {
    /// CIE 1931 xy.
    struct Chromaticity: Hashable, Sendable {
        var x: Double
        var y: Double
    }

    /// How stored values map to linear light (the decoding direction).
    enum ToneCurve: Hashable, Sendable {
        /// IEC 61966-2-1: linear below 0.04045, then ((v + 0.055) / 1.055)^2.4.
        case sRGB
        /// v^gamma (2.2, 2.8, a PNG's 1 / gAMA, a BMP's per-channel gamma).
        case gamma(Double)
        /// HDR, SMPTE ST 2084 (PQ), tone-mapped to SDR: see ``HDRToneMapping``.
        case pq
        /// HDR, ARIB STD-B67 / BT.2100 hybrid log-gamma, tone-mapped to SDR: see ``HDRToneMapping``.
        case hlg
    }

    var white: Chromaticity
    var red: Chromaticity
    var green: Chromaticity
    var blue: Chromaticity
    /// One curve for all channels, or one each for red, green and blue.
    var curves: [ToneCurve]
    /// The built profile's description tag.
    var name: String

    static let d65 = Chromaticity(x: 0.3127, y: 0.3290)
    /// BT.709 / sRGB primaries.
    static let bt709 = (red: Chromaticity(x: 0.64, y: 0.33), green: Chromaticity(x: 0.30, y: 0.60), blue: Chromaticity(x: 0.15, y: 0.06))

    /// Whether this is sRGB itself (BT.709 primaries, D65, the sRGB curve) to within `tolerance`
    /// in xy: such files are untagged, converting them would change nothing.
    func isSRGB(tolerance: Double = 0.0015) -> Bool {
        let pairs = [(white, Self.d65), (red, Self.bt709.red), (green, Self.bt709.green), (blue, Self.bt709.blue)]
        guard pairs.allSatisfy({ abs($0.0.x - $0.1.x) <= tolerance && abs($0.0.y - $0.1.y) <= tolerance }) else { return false }
        return curves.allSatisfy { $0 == .sRGB }
    }

    /// Whether every number is one LittleCMS can build a profile from without dividing by zero
    /// or overflowing: finite chromaticities with 0 < x, 0 < y, x + y ≤ 1, and gammas in 0.1…10.
    var isUsable: Bool {
        let points = [white, red, green, blue]
        guard points.allSatisfy({ $0.x.isFinite && $0.y.isFinite && $0.x > 0 && $0.y > 0.0001 && $0.x + $0.y <= 1.0001 }) else { return false }
        guard curves.count == 1 || curves.count == 3 else { return false }
        return curves.allSatisfy { curve in
            if case .gamma(let g) = curve { return g.isFinite && (0.1...10).contains(g) }
            return true
        }
    }

    /// The ICC profile LittleCMS builds for this description (deterministic bytes, so the
    /// transform cache recognises it), or `nil` when the numbers are unusable or degenerate
    /// (three primaries on a line). Built profiles are kept: at most ``cacheCapacity`` of them.
    func profile() -> ColorProfile? {
        guard isUsable else { return nil }
        if let known = Self.built.withLock({ $0[self] }) { return known.flatMap { ColorProfile(iccData: Data($0)) } }
        let profile = ColorTransforms.shared.buildRGBProfile(self).flatMap { ColorProfile(iccData: $0) }
        Self.built.withLock { table in
            if table.count >= Self.cacheCapacity { table.removeAll(keepingCapacity: true) }
            table[self] = .some(profile.map { [UInt8]($0.data) })
        }
        return profile
    }

    static let cacheCapacity = 64
    /// The built profiles' bytes (`nil` inside: unusable numbers), kept as arrays, not as `Data`
    /// or ``ColorProfile``: a `Data` keeps its buffer's address in the pointer's spare bits, so
    /// LeakSanitizer, which looks for plain addresses, reported every kept profile as leaked
    /// (the fuzzer stopped on it, as on the transform cache's keys before).
    private static let built = Locked<[ColorDescription: [UInt8]?]>([:])
}
