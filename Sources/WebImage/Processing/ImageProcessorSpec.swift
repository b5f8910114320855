/// Parses processing specs such as `resize:256x256:fill,round:12,blur:2` — the command line's
/// `--process` — into processors.
///
/// ## Grammar
/// ```
/// spec    = step *("," step)
/// step    = name *(":" argument)
/// resize:WxH[:fit|fill|exact][:upscale][:G] resize:256x256:fill:sm  (mode defaults to fit; G, where
///                                            fill crops: ce, no, so, ea, we, noea, nowe, soea,
///                                            sowe or sm, the smart crop)
/// crop:X,Y,W,H | crop:square                 crop:0,0,100,100
/// flip:h|v                                   flip:h
/// rotate:DEGREES[:COLOR]                     rotate:90, rotate:30:ffffff (clockwise; corners
///                                            transparent unless COLOR is given)
/// round:RADIUS[:BORDER_WIDTH:COLOR]          round:12, round:12:2:000000
/// circle[:BORDER_WIDTH:COLOR]                circle, circle:3:ffffff
/// blur:SIGMA                                 blur:2
/// tint:COLOR                                 tint:ff000080
/// grayscale
/// trim:THRESHOLD                             trim:10 (0–255: the border's colour is the top-left pixel's)
/// sharpen:SIGMA                              sharpen:1.5 (0–100, an unsharp mask)
/// pixelate:SIZE                              pixelate:8 (1–65535)
/// padding:ALL|T,R,B,L[:COLOR]                padding:8, padding:4,8,4,8:ffffff (0–65535 each;
///                                            transparent unless COLOR is given)
/// flatten:COLOR                              flatten:ffffff (onto an opaque colour)
/// COLOR   = RRGGBB | RRGGBBAA (hexadecimal, alpha defaults to ff)
/// ```
/// Commas separate steps, and also the numbers of `crop:X,Y,W,H`: a comma starts a new step only
/// when what follows it begins with a letter, as every processor name does and no number does
/// (`crop:0,0,10,10,blur:2` is a crop and a blur; in `round:4,zoom:2` the unknown `zoom:2` is
/// the bad step). Numbers are decimal (`blur:1.5`); sizes and crop values are whole pixels. A bad step
/// throws ``ImageProcessingError/invalidSpec(part:reason:)`` naming that step.
///
/// ```swift
/// let processors = try ImageProcessorSpec.parse("resize:256x256:fill,round:12,blur:2")
/// let thumbnail = try image.processed(by: processors)
/// ```
public enum ImageProcessorSpec {
    /// The processor names a step may start with.
    public static let names = [
        "resize", "crop", "flip", "rotate", "round", "circle", "blur", "tint", "grayscale", "trim", "sharpen", "pixelate", "padding", "flatten",
    ]

    /// The processors `spec` describes, in order.
    public static func parse(_ spec: String) throws(ImageProcessingError) -> [any ImageProcessing] {
        guard !spec.trimmingWhitespace.isEmpty else { throw .invalidSpec(part: spec, reason: "the spec is empty") }
        var steps: [String] = []
        for piece in spec.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            if steps.isEmpty || piece.trimmingWhitespace.first?.isLetter == true {
                steps.append(piece)
            } else {
                steps[steps.count - 1] += "," + piece
            }
        }
        return try steps.map { step throws(ImageProcessingError) in try parseStep(step.trimmingWhitespace) }
    }

    private static func parseStep(_ step: String) throws(ImageProcessingError) -> any ImageProcessing {
        let fields = step.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let arguments = Array(fields.dropFirst())
        func fail(_ reason: String) -> ImageProcessingError { .invalidSpec(part: step, reason: reason) }
        func expect(_ counts: ClosedRange<Int>, _ usage: String) throws(ImageProcessingError) {
            guard counts.contains(arguments.count) else { throw fail("expected \(usage)") }
        }
        func number(_ text: String, _ what: String) throws(ImageProcessingError) -> Double {
            guard let value = Double(text), value.isFinite else { throw fail("\(what) '\(text)' is not a number") }
            return value
        }
        func color(_ text: String) throws(ImageProcessingError) -> RGBAColor {
            guard let value = RGBAColor(hex: text) else { throw fail("'\(text)' is not a colour (RRGGBB or RRGGBBAA)") }
            return value
        }
        func border(_ from: Int) throws(ImageProcessingError) -> ImageProcessors.Border? {
            guard arguments.count > from else { return nil }
            let width = try number(arguments[from], "the border width")
            guard width >= 0 else { throw fail("the border width must be 0 or more") }
            return .init(width: width, color: try color(arguments[from + 1]))
        }

        switch fields[0] {
        case "resize":
            try expect(1...4, "resize:WIDTHxHEIGHT[:fit|fill|exact][:upscale][:GRAVITY]")
            let size = arguments[0].lowercased().split(separator: "x", omittingEmptySubsequences: false).map { Int($0) }
            guard size.count == 2, let width = size[0], let height = size[1], width > 0, height > 0 else {
                throw fail("'\(arguments[0])' is not a size such as 256x256")
            }
            var mode = ImageProcessors.Resize.Mode.fit, upscale = false, gravity = ImageProcessors.Gravity.center
            for option in arguments.dropFirst() {
                if let parsed = ImageProcessors.Resize.Mode(rawValue: option) { mode = parsed }
                else if option == "upscale" { upscale = true }
                else if option == "sm" { gravity = .smart }
                else if let compass = ImageProcessors.Gravity.compassNames[option] { gravity = compass }
                else { throw fail("'\(option)' is neither fit, fill, exact, upscale nor a gravity (ce, no, …, sm)") }
            }
            return .resize(width: width, height: height, mode: mode, upscale: upscale, gravity: gravity)
        case "crop":
            try expect(1...1, "crop:X,Y,WIDTH,HEIGHT or crop:square")
            if arguments[0] == "square" { return .cropToSquare() }
            let values = arguments[0].split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            guard values.count == 4, let x = values[0], let y = values[1], let width = values[2], let height = values[3] else {
                throw fail("expected four whole numbers X,Y,WIDTH,HEIGHT")
            }
            guard x >= 0, y >= 0, width > 0, height > 0 else { throw fail("X and Y must be 0 or more, WIDTH and HEIGHT positive") }
            return .crop(x: x, y: y, width: width, height: height)
        case "flip":
            try expect(1...1, "flip:h or flip:v")
            switch arguments[0] {
            case "h", "horizontal": return .flip(.horizontal)
            case "v", "vertical": return .flip(.vertical)
            default: throw fail("'\(arguments[0])' is neither h nor v")
            }
        case "rotate":
            try expect(1...2, "rotate:DEGREES[:COLOR]")
            let degrees = try number(arguments[0], "the angle")
            return .rotate(degrees: degrees, background: arguments.count > 1 ? try color(arguments[1]) : .clear)
        case "round":
            guard arguments.count == 1 || arguments.count == 3 else { throw fail("expected round:RADIUS[:BORDER_WIDTH:COLOR]") }
            let radius = try number(arguments[0], "the radius")
            guard radius >= 0 else { throw fail("the radius must be 0 or more") }
            return .roundedCorners(radius: radius, border: try border(1))
        case "circle":
            guard arguments.isEmpty || arguments.count == 2 else { throw fail("expected circle[:BORDER_WIDTH:COLOR]") }
            return .circle(border: try border(0))
        case "blur":
            try expect(1...1, "blur:SIGMA")
            let sigma = try number(arguments[0], "the radius")
            guard sigma >= 0, sigma <= 10_000 else { throw fail("the radius must be between 0 and 10000") }
            return .gaussianBlur(radius: sigma)
        case "tint":
            try expect(1...1, "tint:COLOR")
            return .tint(try color(arguments[0]))
        case "grayscale":
            try expect(0...0, "grayscale without arguments")
            return .grayscale()
        case "trim":
            try expect(1...1, "trim:THRESHOLD")
            guard let threshold = Int(arguments[0]), (0...255).contains(threshold) else { throw fail("the threshold must be a whole number from 0 to 255") }
            return .trim(threshold: threshold)
        case "sharpen":
            try expect(1...1, "sharpen:SIGMA")
            let sigma = try number(arguments[0], "the sigma")
            guard sigma >= 0, sigma <= 100 else { throw fail("the sigma must be between 0 and 100") }
            return .sharpen(sigma: sigma)
        case "pixelate":
            try expect(1...1, "pixelate:SIZE")
            guard let size = Int(arguments[0]), (1...65_535).contains(size) else { throw fail("the size must be a whole number from 1 to 65535") }
            return .pixelate(size: size)
        case "padding":
            try expect(1...2, "padding:ALL or padding:TOP,RIGHT,BOTTOM,LEFT, then :COLOR if wanted")
            let sides = arguments[0].split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            guard sides.count == 1 || sides.count == 4, sides.allSatisfy({ $0.map { (0...65_535).contains($0) } ?? false }) else {
                throw fail("expected one or four whole numbers from 0 to 65535")
            }
            let s = sides.map { $0! }, background = arguments.count > 1 ? try color(arguments[1]) : .clear
            return s.count == 1 ? .padding(top: s[0], right: s[0], bottom: s[0], left: s[0], background: background)
                : .padding(top: s[0], right: s[1], bottom: s[2], left: s[3], background: background)
        case "flatten":
            try expect(1...1, "flatten:COLOR")
            return .flatten(try color(arguments[0]))
        default:
            throw fail("unknown processor; expected one of \(names.joined(separator: ", "))")
        }
    }
}

extension StringProtocol {
    var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
