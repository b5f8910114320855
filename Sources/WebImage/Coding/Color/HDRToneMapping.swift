import Foundation

/// How HDR sources (AVIF/HEIF `nclx` transfer 16, PQ, and 18, HLG) become SDR sRGB: the transfer
/// to display light in nits, reference white at 203 nits (ITU-R BT.2408) becoming SDR white, and
/// an extended Reinhard curve that brings everything up to 1,000 nits (the usual mastering peak)
/// to 1, per channel: `L' = L (1 + L / W²) / (1 + L)`, `L = nits / 203`, `W = 1000 / 203`.
/// Brighter light clips. Per-channel mapping keeps greys grey and compresses saturated highlights
/// towards white, as most HDR-to-SDR previews do; it is not a colour-appearance model.
///
/// The curve is tabulated (4,096 points) into the profile built for the file, so HDR sources go
/// through the same LittleCMS path (and fast path) as every other colour statement.
enum HDRToneMapping {
    static let referenceWhite = 203.0
    static let peak = 1000.0

    /// `count` samples of the decoding curve for `curve` (`.pq` or `.hlg`), increasing, in [0, 1].
    static func table(for curve: ColorDescription.ToneCurve, count: Int) -> [Float] {
        (0..<count).map { index in
            let signal = Double(index) / Double(count - 1)
            let nits: Double = switch curve {
            case .pq: pqNits(signal)
            case .hlg: hlgNits(signal)
            default: signal * referenceWhite
            }
            return Float(reinhard(nits / referenceWhite))
        }
    }

    /// SMPTE ST 2084: signal → absolute luminance, 0…10,000 nits.
    static func pqNits(_ signal: Double) -> Double {
        let m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128, c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32
        let p = pow(min(max(signal, 0), 1), 1 / m2)
        return 10_000 * pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
    }

    /// BT.2100 HLG: signal → scene light (inverse OETF), then the OOTF of a 1,000-nit display
    /// (system gamma 1.2), per channel.
    static func hlgNits(_ signal: Double) -> Double {
        let a = 0.17883277, b = 1 - 4 * 0.17883277, c = 0.5 - 0.17883277 * log(4 * 0.17883277)
        let v = min(max(signal, 0), 1)
        let scene = v <= 0.5 ? v * v / 3 : (exp((v - c) / a) + b) / 12
        return peak * pow(scene, 1.2)
    }

    /// Extended Reinhard with white at ``peak``: 0 → 0, `W` → 1, increasing; clipped to 1.
    static func reinhard(_ luminance: Double) -> Double {
        let white = peak / referenceWhite
        return min(luminance * (1 + luminance / (white * white)) / (1 + luminance), 1)
    }
}
