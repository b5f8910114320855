import WebImage

/// `format=auto`: what the client accepts, then the source's family.
///
/// AVIF when `Accept` lists `image/avif`, else WebP when it lists `image/webp` (an animated
/// source prefers WebP, which keeps the animation, over AVIF); otherwise JPEG for a JPEG
/// source, PNG for a PNG, APNG for an animated PNG (every current browser shows it, and it keeps
/// full colour and alpha), GIF for other animations, and for other sources PNG if they have
/// alpha, else JPEG. Responses to `auto` carry `Vary: Accept`.
enum FormatNegotiation {
    /// What `Accept` allows of the modern formats, as part of the result key.
    enum Preference: String, Sendable {
        case avif, webp, none
    }

    static func preference(accept: String?) -> Preference {
        guard let accept = accept?.lowercased() else { return .none }
        let types = accept.split(separator: ",").compactMap { item -> String? in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            // A weight of zero (`q=0`, `q=0.0`, `q=0.000`) means "not acceptable".
            if parts.dropFirst().contains(where: { parameter in
                let compact = parameter.replacingOccurrences(of: " ", with: "")
                return compact.hasPrefix("q=") && Double(compact.dropFirst(2)) == 0
            }) { return nil }
            return parts.first
        }
        if types.contains("image/avif") { return .avif }
        if types.contains("image/webp") { return .webp }
        return .none
    }

    static func outputFormat(_ requested: ImageParameters.Format, preference: Preference, source: ImageHeader) -> ImageFormat {
        if let fixed = requested.imageFormat { return fixed }
        let animated = source.frameCount > 1
        switch preference {
        case .avif where !animated: return .avif
        case .avif, .webp: return .webp
        case .none: break
        }
        if animated { return source.format == .apng ? .apng : .gif }
        switch source.format {
        case .jpeg: return .jpeg
        case .png: return .png
        default: return source.hasAlpha ? .png : .jpeg
        }
    }

    /// Whether `format` can hold an animation.
    static func keepsAnimation(_ format: ImageFormat) -> Bool { format == .gif || format == .webp || format == .apng }
}
