public import WebImage

/// The geometry and effect parameters of `/img` (imgproxy's names): parsed strictly — a bad
/// value is a `400 bad_parameter` naming the parameter, and numbers are range-checked before any
/// arithmetic, so `dpr=1e308` or `padding=99999999` is refused, never trapped on.
///
/// ```swift
/// let p = try ImageParameters(query: [("url", "https://example.com/a.jpg"), ("w", "200"), ("dpr", "2"), ("padding", "4")], maxSide: 8192)
/// p.targetWidth       // 400
/// p.padding?.top      // 8: padding is in CSS pixels too
/// ```
extension ImageParameters {
    /// `padding`: pixels per side, before `dpr`.
    public struct Insets: Sendable, Hashable {
        public var top: Int, right: Int, bottom: Int, left: Int
    }

    /// The largest `dpr`.
    public static let maxDPR = 8.0
    /// The lowest quality `max_bytes` goes down to, and the most encodes it tries.
    public static let maxBytesQualityFloor = 10
    public static let maxBytesEncodes = 6

    static let effectNames: Set<String> = [
        "enlarge", "dpr", "gravity", "extend", "padding", "bg", "trim", "sharpen", "pixelate", "blur", "max_bytes",
    ]

    /// `w` × `dpr`, rounded (at least 1).
    public var targetWidth: Int? { width.map(scaled) }
    /// `h` × `dpr`, rounded (at least 1).
    public var targetHeight: Int? { height.map(scaled) }

    func scaled(_ value: Int) -> Int { value == 0 ? 0 : max(1, Int((Double(value) * dpr).rounded())) }

    /// An offset (any sign, at most the output limit) × `dpr`.
    func scaledOffset(_ value: Int) -> Int { Int((Double(value) * dpr).rounded()) }

    mutating func parseEffects(_ seen: [String: String], maxSide: Int) throws(ImageServerError) {
        func fail(_ name: String, _ rule: String) -> ImageServerError { .badParameter("'\(name)' must be \(rule)") }
        func flag(_ name: String, _ given: String? = nil) throws(ImageServerError) -> Bool {
            guard let value = given ?? seen[name] else { return false }
            switch value {
            case "1", "true": return true
            case "0", "false": return false
            default: throw fail(name, "1, 0, true or false")
            }
        }
        func whole(_ name: String, _ range: ClosedRange<Int>) throws(ImageServerError) -> Int? {
            guard let value = seen[name] else { return nil }
            guard let number = Int(value), range.contains(number) else { throw fail(name, "a whole number from \(range.lowerBound) to \(range.upperBound)") }
            return number
        }
        func decimal(_ name: String, above low: Double, upTo high: Double) throws(ImageServerError) -> Double? {
            guard let value = seen[name] else { return nil }
            guard value.utf8.count <= 32, let number = Double(value), number.isFinite, number > low, number <= high else {
                throw fail(name, "a number over \(identifierNumber(low)) and at most \(identifierNumber(high))")
            }
            return number
        }

        enlarge = try flag("enlarge")
        if let value = try decimal("dpr", above: 0, upTo: Self.maxDPR) {
            dpr = value
            for (name, side) in [("w", width), ("h", height)] {
                guard let side else { continue }
                guard scaled(side) <= maxSide else { throw .badParameter("'dpr': '\(name)' × \(identifierNumber(value)) is over the output limit of \(maxSide) pixels") }
            }
        }
        if let value = seen["gravity"] {
            gravity = try Self.gravity(value)
            guard fit == .cover else { throw .badParameter("'gravity' places the crop of 'fit=cover'; it needs fit=cover") }
        }
        if let value = seen["extend"] {
            // `1` or imgproxy's `1:GRAVITY`: where the image sits on the canvas.
            let parts = value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            extend = try flag("extend", parts[0])
            if parts.count == 2 {
                guard extend else { throw fail("extend", "1 or 1:GRAVITY to place the image; a gravity needs extend=1") }
                // imgproxy's `1:GRAVITY:X:Y`: offsets in pixels after a compass gravity (a focal
                // point, `fp:X:Y`, has none).
                var place = parts[1]
                let pieces = place.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
                if !place.hasPrefix("fp:"), pieces.count == 3 {
                    guard let x = Int(pieces[1]), let y = Int(pieces[2]), (-maxSide...maxSide).contains(x), (-maxSide...maxSide).contains(y) else {
                        throw fail("extend", "1:GRAVITY:X:Y with X and Y whole numbers of pixels from -\(maxSide) to \(maxSide)")
                    }
                    (extendOffsetX, extendOffsetY) = (x, y)
                    place = pieces[0]
                }
                extendGravity = try Self.gravity(place, name: "extend", smart: false)
            }
        }
        if extend, width == nil || height == nil { throw .badParameter("'extend' needs both 'w' and 'h'") }
        if let value = seen["padding"] {
            let sides = value.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            guard sides.count == 1 || sides.count == 4, sides.allSatisfy({ $0.map { (0...maxSide).contains($0) } ?? false }) else {
                throw fail("padding", "one or four whole numbers (top,right,bottom,left) from 0 to \(maxSide)")
            }
            let s = sides.map { $0! }
            padding = s.count == 1 ? Insets(top: s[0], right: s[0], bottom: s[0], left: s[0]) : Insets(top: s[0], right: s[1], bottom: s[2], left: s[3])
        }
        if let value = seen["bg"] {
            guard value.first != "#", let color = RGBAColor(hex: value) else { throw fail("bg", "a colour RRGGBB or RRGGBBAA in hexadecimal") }
            background = color
        }
        trim = try whole("trim", 0...255)
        sharpen = try decimal("sharpen", above: 0, upTo: 100)
        pixelate = try whole("pixelate", 1...maxSide)
        blur = try decimal("blur", above: 0, upTo: 10_000)
        maxBytes = try whole("max_bytes", 1...(1 << 30))
    }

    /// `ce`, `no`, …, `fp:X:Y` with X and Y in 0–1, or, where `smart` allows, `sm` (the smart
    /// crop). `name` is the parameter a refusal names (`extend` takes a gravity after `1:`).
    static func gravity(_ text: String, name: String = "gravity", smart: Bool = true) throws(ImageServerError) -> ImageProcessors.Gravity {
        if let compass = ImageProcessors.Gravity.compassNames[text] { return compass }
        if smart, text == "sm" { return .smart }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "fp",
              let x = Double(parts[1]), let y = Double(parts[2]), (0...1).contains(x), (0...1).contains(y) else {
            let names = smart ? "ce, no, so, ea, we, noea, nowe, soea, sowe, sm" : "ce, no, so, ea, we, noea, nowe, soea, sowe"
            let prefix = name == "gravity" ? "" : "1:"
            throw .badParameter("'\(name)' must be \(prefix)GRAVITY with GRAVITY \(names) or fp:X:Y with X and Y from 0 to 1")
        }
        return .focalPoint(x: x, y: y)
    }

    /// Steps before the resize: `trim`, then `process`.
    package var leadingSteps: [any ImageProcessing] {
        (trim.map { [ImageProcessors.Trim(threshold: $0)] } ?? []) + processors
    }

    /// Steps after the resize, in imgproxy's order: `blur`, `sharpen`, `pixelate`, `extend`,
    /// `padding` (both painted with `bg`, transparent without it), the watermark (`wm`, when the
    /// server has `watermark`), and, when `format` has no alpha (JPEG) and `bg` is given, the
    /// flattening onto `bg`.
    package func finishingSteps(for format: ImageFormat, watermark mark: ServerWatermark? = nil) -> [any ImageProcessing] {
        var steps: [any ImageProcessing] = []
        if let blur { steps.append(ImageProcessors.GaussianBlur(radius: blur)) }
        if let sharpen { steps.append(ImageProcessors.Sharpen(sigma: sharpen)) }
        if let pixelate { steps.append(ImageProcessors.Pixelate(size: pixelate)) }
        let paint = background ?? .clear
        if extend, let targetWidth, let targetHeight {
            steps.append(ImageProcessors.Extend(
                width: targetWidth, height: targetHeight, background: paint, gravity: extendGravity,
                offsetX: scaledOffset(extendOffsetX), offsetY: scaledOffset(extendOffsetY)))
        }
        if let padding {
            steps.append(ImageProcessors.Padding(
                top: scaled(padding.top), right: scaled(padding.right), bottom: scaled(padding.bottom), left: scaled(padding.left), background: paint))
        }
        if let watermark, let mark { steps.append(WatermarkStep(watermark: mark, options: watermark)) }
        if format == .jpeg, let background { steps.append(ImageProcessors.Flatten(background)) }
        return steps
    }

    /// The effect parameters' fields of the result cache's key, each canonical.
    func addEffects(to key: inout KeyEncoding) {
        key.add("enlarge", enlarge ? "1" : "0")
        key.add("dpr", identifierNumber(dpr))
        key.add("gravity", gravity.identifier)
        let offsets = extendOffsetX == 0 && extendOffsetY == 0 ? "" : ":\(extendOffsetX):\(extendOffsetY)"
        key.add("extend", extend ? (extendGravity == .center && offsets.isEmpty ? "1" : "1:" + extendGravity.identifier + offsets) : "0")
        key.add("padding", padding.map { "\($0.top),\($0.right),\($0.bottom),\($0.left)" })
        key.add("bg", background?.hex)
        key.add("trim", trim.map(String.init))
        key.add("sharpen", sharpen.map(identifierNumber))
        key.add("pixelate", pixelate.map(String.init))
        key.add("blur", blur.map(identifierNumber))
        key.add("max_bytes", maxBytes.map(String.init))
    }
}
