/// Named `/img` parameter sets defined by the operator (imgproxy's presets): `/img?preset=thumb&url=…`
/// renders with `thumb`'s parameters, and parameters given in the query override the preset's.
///
/// A preset is written as imgproxy's `IMGPROXY_PRESETS` entries are, with `/img`'s parameter
/// names: `NAME=PARAMETER:VALUE[/PARAMETER:VALUE…]`, for example `thumb=w:200/h:200/fit:cover`
/// (a value may hold `:` and `,`, as `gravity:fp:0.5:0.2` and `padding:1,2,3,4` do; `/` and `=`
/// never appear in one). `preset=a:b` applies `a`, then `b` (later ones win); a preset named
/// `default` applies to every request, before the named ones. With ``onlyPresets`` (imgproxy's
/// `IMGPROXY_ONLY_PRESETS`), a request may give only `url`, `preset` and `s`.
///
/// Presets are expanded before anything else looks at the parameters: the result-cache key,
/// the ETag and the render budget see the expanded set, so `preset=thumb` and the same
/// parameters spelt out share one cache entry. The signature covers the query as sent (the
/// preset's name, not its definition).
///
/// ```swift
/// let presets = try ImagePresets(["thumb=w:200/h:200/fit:cover", "default=q:75"], maxSide: 8192)
/// let query = try presets.expand([("url", "https://example.com/a.jpg"), ("preset", "thumb"), ("w", "100")])
/// // [("q", "75"), ("h", "200"), ("fit", "cover"), ("url", "https://example.com/a.jpg"), ("w", "100")]
/// ```
public struct ImagePresets: Sendable {
    /// Why a preset cannot be used: the server refuses to start with it.
    public struct InvalidPreset: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Each preset's parameters, in the order they were written.
    public let presets: [String: [(name: String, value: String)]]
    /// Whether requests may give only `url`, `preset` and `s`.
    public let onlyPresets: Bool
    /// Presets one request may name (`preset=a:b:…`).
    public static let maxPerRequest = 8
    /// The longest preset name.
    public static let maxNameLength = 64

    /// Parses and checks `specs` (`NAME=PARAMETER:VALUE/…`): each preset must be a valid set of
    /// `/img` parameters on its own (`fit:cover` needs `w` and `h` in the same preset), under
    /// the output limit `maxSide`; `url`, `s` and `preset` cannot be preset. `watermark`: whether
    /// the server has a default watermark, which a preset's `wm` without a name needs;
    /// `watermarkNames`: the named ones a preset's `wm=NAME:…` may use.
    public init(
        _ specs: [String], onlyPresets: Bool = false, maxSide: Int = 8192, watermark: Bool = false, watermarkNames: Set<String> = []
    ) throws(InvalidPreset) {
        var presets: [String: [(name: String, value: String)]] = [:]
        for spec in specs {
            let (name, options) = try Self.parse(spec)
            guard presets[name] == nil else { throw InvalidPreset(description: "preset '\(name)' is defined more than once") }
            do throws(ImageServerError) {
                let parameters = try ImageParameters(query: [("url", "http://preset.invalid/")] + options, maxSide: maxSide)
                if let wm = parameters.watermark {
                    if let name = wm.name, !watermarkNames.contains(name) {
                        throw .badParameter("'wm' names '\(name)', which is no watermark of this server (--watermark \(name)=PATH)")
                    } else if wm.name == nil, !watermark {
                        throw .badParameter("'wm' needs a watermark image (--watermark)")
                    }
                }
            } catch {
                throw InvalidPreset(description: "preset '\(name)': \(error.message)")
            }
            presets[name] = options
        }
        if onlyPresets, presets.isEmpty { throw InvalidPreset(description: "only-presets mode needs at least one preset") }
        self.presets = presets
        self.onlyPresets = onlyPresets
    }

    /// One `NAME=PARAMETER:VALUE/…` spec, checked for form (not yet for values).
    static func parse(_ spec: String) throws(InvalidPreset) -> (String, [(name: String, value: String)]) {
        guard let equals = spec.firstIndex(of: "=") else {
            throw InvalidPreset(description: "'\(spec.prefix(80))' is not NAME=PARAMETER:VALUE/…")
        }
        let name = String(spec[..<equals]), body = spec[spec.index(after: equals)...]
        guard !name.isEmpty, name.utf8.count <= maxNameLength, name.utf8.allSatisfy(Self.isNameByte) else {
            throw InvalidPreset(description: "preset name '\(name.prefix(80))' must be 1 to \(maxNameLength) letters, digits, '-' or '_'")
        }
        guard !body.isEmpty else { throw InvalidPreset(description: "preset '\(name)' has no parameters") }
        var options: [(name: String, value: String)] = []
        for part in body.split(separator: "/", omittingEmptySubsequences: false) {
            guard let colon = part.firstIndex(of: ":"), colon != part.startIndex, !part.contains("=") else {
                throw InvalidPreset(description: "preset '\(name)': '\(part.prefix(80))' is not PARAMETER:VALUE")
            }
            let option = String(part[..<colon]), value = String(part[part.index(after: colon)...])
            guard !["url", "s", "preset"].contains(option) else {
                throw InvalidPreset(description: "preset '\(name)': '\(option)' cannot be preset")
            }
            guard !options.contains(where: { $0.name == option }) else {
                throw InvalidPreset(description: "preset '\(name)': '\(option)' is given more than once")
            }
            options.append((option, value))
        }
        return (name, options)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    /// The query with its presets expanded: the `default` preset's parameters, then those of the
    /// presets `preset=` names, each overriding the ones before, then the query's own (which
    /// override them all, and are still refused when given twice). An unknown preset, or with
    /// ``onlyPresets`` any parameter but `url`, `preset` and `s`, is a `400 bad_parameter`.
    public func expand(_ query: [(String, String)]) throws(ImageServerError) -> [(String, String)] {
        var named: String?
        var explicit: [(String, String)] = []
        for (name, value) in query {
            guard name == "preset" else {
                explicit.append((name, value))
                continue
            }
            guard named == nil else { throw .badParameter("'preset' is given more than once; name several as preset=a:b") }
            named = value
        }
        if onlyPresets, let (name, _) = explicit.first(where: { $0.0 != "url" && $0.0 != "s" }) {
            throw .badParameter("'\(name.prefix(64))' is not allowed: this server takes only url, preset and s (its parameters come from presets)")
        }
        var chosen: [[(name: String, value: String)]] = presets["default"].map { [$0] } ?? []
        if let named {
            let names = named.split(separator: ":", maxSplits: Self.maxPerRequest, omittingEmptySubsequences: false)
            guard names.count <= Self.maxPerRequest else { throw .badParameter("'preset' names more than \(Self.maxPerRequest) presets") }
            for name in names {
                guard let preset = presets[String(name)] else {
                    throw .badParameter("unknown preset '\(name.prefix(Self.maxNameLength))' in 'preset'")
                }
                chosen.append(preset)
            }
        }
        guard !chosen.isEmpty else { return explicit }
        let given = Set(explicit.map(\.0))
        var order: [String] = [], values: [String: String] = [:]
        for (name, value) in chosen.joined() where !given.contains(name) {
            if values.updateValue(value, forKey: name) == nil { order.append(name) }
        }
        return order.map { ($0, values[$0]!) } + explicit
    }
}
