public import Foundation
public import WebImage

/// What one `/img` request asks for, parsed and checked in one place.
///
/// `url` (required, http or https), `w` and `h` (1 … the output limit), `fit` (`inside`, the
/// default; `cover`; `fill`), `format` (`auto`, the default; `jpeg`, `png`, `webp`, `avif`,
/// `gif`), `q` (1–100), `process` (the `fetch --process` grammar) and imgproxy's geometry and
/// effect options (`enlarge`, `dpr`, `gravity`, `extend`, `padding`, `bg`, `trim`, `sharpen`,
/// `pixelate`, `blur`, `max_bytes`: see `ImageParameters+Effects.swift`) and `wm`
/// (`ImageParameters+Watermark.swift`). Unknown or repeated parameters are refused, so that one
/// image has one URL (and one cache entry). Presets (``ImagePresets``) are expanded before.
///
/// ```swift
/// let parameters = try ImageParameters(query: [("url", "https://example.com/a.jpg"), ("w", "256")], maxSide: 8192)
/// print(parameters.cacheKey(negotiated: "jpeg"))   // "img3;url=25:https://example.com/a.jpg;w=3:256;…"
/// ```
public struct ImageParameters: Sendable {
    /// How the source is fitted into `w` × `h`; none enlarges it unless `enlarge=1`.
    public enum Fit: String, Sendable, Hashable, CaseIterable {
        /// Within `w` × `h`, aspect kept.
        case inside
        /// Covers `w` × `h`, aspect kept, the overflow cropped where `gravity` says (the centre).
        case cover
        /// Exactly `w` × `h`, stretched (a smaller source only shrunk on the sides over the box,
        /// unless `enlarge=1`).
        case fill
    }

    /// `format=`: a fixed output format, or `auto` (negotiated from `Accept`).
    public enum Format: String, Sendable, Hashable, CaseIterable {
        case auto, jpeg, png, webp, avif, gif, apng
        var imageFormat: ImageFormat? { self == .auto ? nil : ImageFormat(rawValue: rawValue) }
    }

    /// The source, normalised: what is checked against the allow-list, fetched and keyed.
    public var source: SourceURL
    /// The normalised source URL.
    public var url: URL { source.url }
    public var width: Int?
    public var height: Int?
    public var fit: Fit = .inside
    public var format: Format = .auto
    public var quality: Int?
    public var process: String?
    /// `enlarge=1`: a source smaller than the box is enlarged (imgproxy's default: not).
    public var enlarge = false
    /// `dpr`: multiplies `w`, `h` and `padding` (0 < dpr ≤ ``maxDPR``).
    public var dpr = 1.0
    /// `gravity`: where `fit=cover` crops.
    public var gravity: ImageProcessors.Gravity = .center
    /// `extend=1`: pads the result to exactly `w` × `h` (× `dpr`).
    public var extend = false
    /// `extend=1:GRAVITY`: where the result sits on the padded canvas (the centre by default).
    public var extendGravity: ImageProcessors.Gravity = .center
    /// `extend=1:GRAVITY:X:Y`: pixels (× `dpr`) the result moves from where the gravity puts it,
    /// inwards from the edge a compass point names, right and down from the centre.
    public var extendOffsetX = 0, extendOffsetY = 0
    public var padding: Insets?
    /// `bg`: the colour of `extend` and `padding`, and what a JPEG result is flattened onto.
    public var background: RGBAColor?
    public var trim: Int?
    public var sharpen: Double?
    public var pixelate: Int?
    public var blur: Double?
    /// `max_bytes`: lossy results lose quality until they fit (``maxBytesQualityFloor``).
    public var maxBytes: Int?
    /// `wm`: the server's watermark over the result (``WatermarkOptions``).
    public var watermark: WatermarkOptions?
    /// The parsed `process` steps.
    public var processors: [any ImageProcessing] { (try? process.map(ImageProcessorSpec.parse)) ?? [] }

    static let names: Set<String> = Set(["url", "w", "h", "fit", "format", "q", "process", "s", "wm"]).union(effectNames)

    /// `url` is normalised (``SourceURL``); a URL with a user name or password is refused.
    public init(query: [(String, String)], maxSide: Int) throws(ImageServerError) {
        let seen = try Self.values(query, names: Self.names)
        source = try Self.source(seen["url"])
        func side(_ name: String) throws(ImageServerError) -> Int? {
            guard let value = seen[name] else { return nil }
            guard let number = Int(value), number >= 1 else { throw .badParameter("'\(name)' must be a whole number of pixels from 1") }
            guard number <= maxSide else { throw .badParameter("'\(name)' is over the output limit of \(maxSide) pixels") }
            return number
        }
        width = try side("w")
        height = try side("h")
        if let value = seen["fit"] {
            guard let fit = Fit(rawValue: value) else { throw .badParameter("'fit' must be inside, cover or fill") }
            self.fit = fit
            if fit != .inside, width == nil || height == nil { throw .badParameter("'fit=\(value)' needs both 'w' and 'h'") }
        }
        if let value = seen["format"] {
            guard let format = Format(rawValue: value) else { throw .badParameter("'format' must be auto, jpeg, png, webp, avif or gif") }
            self.format = format
        }
        if let value = seen["q"] {
            guard let q = Int(value), (1...100).contains(q) else { throw .badParameter("'q' must be a whole number from 1 to 100") }
            quality = q
        }
        if let spec = seen["process"] {
            let steps: [any ImageProcessing]
            do { steps = try ImageProcessorSpec.parse(spec) } catch { throw .badParameter("'process': \(error.description)") }
            for case let resize as ImageProcessors.Resize in steps where max(resize.width, resize.height) > maxSide {
                throw .badParameter("'process': \(resize.width)x\(resize.height) is over the output limit of \(maxSide) pixels")
            }
            process = spec
        }
        try parseEffects(seen, maxSide: maxSide)
        watermark = try Self.watermark(seen["wm"], maxSide: maxSide)
    }

    /// The query as a dictionary, refusing a name outside `names` or given twice: one resource,
    /// one URL (and one cache entry). `/info` checks its query with it too.
    static func values(_ query: [(String, String)], names: Set<String>) throws(ImageServerError) -> [String: String] {
        var seen: [String: String] = [:]
        for (name, value) in query {
            guard names.contains(name) else { throw .badParameter("unknown parameter '\(name)'") }
            guard seen[name] == nil else { throw .badParameter("'\(name)' is given more than once") }
            seen[name] = value
        }
        return seen
    }

    /// The `url` parameter, required, normalised (``SourceURL``): an absolute http, https, local or s3 URL
    /// of at most 4 KiB, without a user name or password. `/info` parses its `url` with it too.
    static func source(_ text: String?) throws(ImageServerError) -> SourceURL {
        guard let text, !text.isEmpty else { throw .badParameter("'url' is required") }
        guard text.utf8.count <= 4096, let url = URL(string: text) else {
            throw ImageServerError(status: 400, code: "invalid_url", message: "'url' must be an absolute http, https, local or s3 URL")
        }
        do throws(SourceURL.Problem) {
            return try SourceURL(url)
        } catch .dotSegment {
            // Only local and s3 paths keep their dot segments to refuse them: a way out of the root.
            throw ImageServerError(status: 403, code: "source_not_allowed", message: "'url': the path has a '.' or '..' segment")
        } catch .notHTTP {
            throw ImageServerError(status: 400, code: "invalid_url", message: "'url' must be an absolute http, https, local or s3 URL")
        } catch {
            throw ImageServerError(status: 400, code: "invalid_url", message: "'url': \(error.description)")
        }
    }

    /// Every parameter that changes the result, parsed and canonical, and the output format
    /// negotiated for this request: the result cache's key (and, with the source's digest, the
    /// ETag's input). Each field is length-prefixed (`KeyEncoding`), so no value can pass for
    /// a separator: `url=…%3Fa%26w%3D4` and `url=…%3Fa&w=4` have different keys. `process` is
    /// keyed by its processors' identifiers, so two spellings of one spec share an entry.
    /// `color`: the server's `ColorHandling` — part of the key when it is not the default, so
    /// results rendered under another setting are never served (a cache folder outlives a restart).
    /// `img3`: `fit=cover|fill` stopped enlarging by default, so no `img2` entry is served again.
    /// `watermark`: the server's ``ServerWatermark/digest``, keyed with `wm` (a field only keys
    /// with a watermark have: keys without one are those of before).
    /// `rendering`: the server's settings that change the pixels or bytes of a result (the
    /// default quality, the largest side, the frames kept), keyed when not the defaults: a
    /// `--cache-dir` kept across a restart with other flags served the old renders, under the
    /// same strong ETag.
    public func cacheKey(
        negotiated: String, color: ColorHandling = .convertToSRGB, watermark digest: String? = nil, rendering: String? = nil
    ) -> String {
        var key = KeyEncoding("img3")
        key.add("url", source.url.absoluteString)
        key.add("w", width.map(String.init))
        key.add("h", height.map(String.init))
        key.add("fit", fit.rawValue)
        key.add("format", format.rawValue)
        key.add("negotiated", negotiated)
        key.add("q", quality.map(String.init))
        key.add("process", list: process == nil ? nil : processors.map(\.identifier))
        addEffects(to: &key)
        if color != .convertToSRGB { key.add("color", color.rawValue) }
        if let watermark { key.add("wm", (digest ?? "-") + ":" + watermark.identifier) }
        if let rendering { key.add("render", rendering) }
        return key.text
    }
}
