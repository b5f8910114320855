import WebImage

/// `wm=[NAME:]OPACITY[:POSITION[:X:Y[:SCALE]]]`: imgproxy's `watermark` option, blending the
/// server's watermark image (``ServerWatermark``) over the result. Parsed strictly: every number
/// is range-checked before use, so a hostile value is a `400 bad_parameter`, never a trap.
///
/// - NAME: one of the server's named watermarks
///   (``ImageServerConfiguration/namedWatermarks``, `serve --watermark NAME=PATH`): a lower-case
///   letter, then up to 31 lower-case letters, digits, `-` or `_`. Without it, the server's
///   default watermark. `wm=NAME` alone is that watermark at full opacity.
/// - OPACITY: 0 to 1; 0 is no watermark (as imgproxy).
/// - POSITION: `ce` (the default), `no`, `so`, `ea`, `we`, `noea`, `nowe`, `soea`, `sowe`, or `re`
///   (repeated over the whole result, as imgproxy's replicate).
/// - X, Y: whole pixels of the result (not multiplied by `dpr`), from −maxSide to maxSide: the
///   distance from the edges the position names, a shift from the centre for `ce` (and along
///   the centred axis of `no`, `so`, `ea`, `we`), the gap between tiles for `re` (0 or more).
/// - SCALE: 0 (the default: the watermark's own size) or up to 1: the watermark fitted into
///   that fraction of the result's width and height, aspect kept.
///
/// ```swift
/// let p = try ImageParameters(query: [("url", "https://example.com/a.jpg"), ("wm", "logo:0.5:soea:10:10:0.25")], maxSide: 8192)
/// p.watermark?.name       // "logo"
/// p.watermark?.position   // .southEast
/// ```
extension ImageParameters {
    public struct WatermarkOptions: Sendable, Hashable {
        public enum Position: String, Sendable, Hashable, CaseIterable {
            case center = "ce", north = "no", south = "so", east = "ea", west = "we"
            case northEast = "noea", northWest = "nowe", southEast = "soea", southWest = "sowe"
            case repeated = "re"
        }

        /// The named watermark to blend; nil for the server's default one.
        public var name: String?
        public var opacity: Double
        public var position: Position = .center
        public var x = 0
        public var y = 0
        public var scale = 0.0

        /// The canonical form, for the cache key and the step's identifier.
        var identifier: String {
            (name.map { $0 + ":" } ?? "") + "\(identifierNumber(opacity)):\(position.rawValue):\(x):\(y):\(identifierNumber(scale))"
        }

        /// Whether `text` can name a watermark: a lower-case ASCII letter, then up to 31 lower-case
        /// letters, digits, `-` or `_`.
        public static func isValidName(_ text: some StringProtocol) -> Bool {
            let bytes = Array(text.utf8)
            guard (1...32).contains(bytes.count), (0x61...0x7A).contains(bytes[0]) else { return false }
            return bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D || $0 == 0x5F }
        }
    }

    /// `wm`, or `nil` when absent or of opacity 0.
    static func watermark(_ text: String?, maxSide: Int) throws(ImageServerError) -> WatermarkOptions? {
        guard let text else { return nil }
        let rule = "[NAME:]OPACITY[:POSITION[:X:Y[:SCALE]]]: a watermark name (a-z, then a-z, 0-9, - or _), "
            + "opacity from 0 to 1, a position (ce, no, so, ea, we, noea, nowe, soea, sowe, re), "
            + "X and Y whole pixels from -\(maxSide) to \(maxSide) (0 or more for re), a scale from 0 to 1"
        func fail() -> ImageServerError { .badParameter("'wm' must be \(rule)") }
        guard text.utf8.count <= 160 else { throw fail() }
        let maxSide = max(maxSide, 1)
        var parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        var name: String?
        // A name starts with a letter, an opacity never does.
        if let first = parts.first?.utf8.first, (0x61...0x7A).contains(first) || (0x41...0x5A).contains(first) {
            guard WatermarkOptions.isValidName(parts[0]) else { throw fail() }
            name = parts.removeFirst()
            if parts.isEmpty { parts = ["1"] }
        }
        guard [1, 2, 4, 5].contains(parts.count) else { throw fail() }
        func fraction(_ part: String) throws(ImageServerError) -> Double {
            guard part.utf8.count <= 32, let number = Double(part), number.isFinite, (0...1).contains(number) else { throw fail() }
            return number
        }
        var options = WatermarkOptions(name: name, opacity: try fraction(parts[0]))
        if parts.count >= 2 {
            guard let position = WatermarkOptions.Position(rawValue: parts[1]) else { throw fail() }
            options.position = position
        }
        if parts.count >= 4 {
            let low = options.position == .repeated ? 0 : -maxSide
            guard let x = Int(parts[2]), let y = Int(parts[3]), (low...maxSide).contains(x), (low...maxSide).contains(y) else { throw fail() }
            (options.x, options.y) = (x, y)
        }
        if parts.count == 5 { options.scale = try fraction(parts[4]) }
        return options.opacity == 0 ? nil : options
    }
}
