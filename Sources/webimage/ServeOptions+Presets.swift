import Foundation
import WebImageServer

extension ServeOptions {
    /// The largest presets file (1 MB).
    static let maxPresetsFileBytes = 1 << 20

    /// `--preset`, `--presets-file`, `--only-presets` and `--watermark` (or their variables),
    /// checked now: a preset or watermark that cannot be used stops the server before it listens.
    /// Watermarks given as `http(s)://` URLs are only counted here (their names, for the
    /// presets' check); `ServeCommand` downloads them before the server starts
    /// (``watermarkURLs(_:)``).
    func presetsAndWatermark(_ env: [String: String], into c: inout ImageServerConfiguration) throws {
        var urlNames = Set<String>(), urlDefault = false
        for entry in Self.list(watermark, "WEBIMAGE_WATERMARK", env) {
            let (name, path) = Self.watermarkEntry(entry)
            if Self.watermarkURL(path) != nil {
                if let name {
                    guard c.namedWatermarks[name] == nil, urlNames.insert(name).inserted else { throw CLIError("--watermark: '\(name)' is given twice") }
                } else {
                    guard c.watermark == nil, !urlDefault else { throw CLIError("--watermark: one default watermark (PATH or URL); name the others (NAME=…)") }
                    urlDefault = true
                }
                continue
            }
            let mark: ServerWatermark
            do throws(ServerWatermark.InvalidWatermark) { mark = try ServerWatermark(contentsOf: path) } catch {
                throw CLIError("--watermark \(entry): \(error.description)")
            }
            if let name {
                guard c.namedWatermarks[name] == nil, !urlNames.contains(name) else { throw CLIError("--watermark: '\(name)' is given twice") }
                c.namedWatermarks[name] = mark
            } else {
                guard c.watermark == nil, !urlDefault else { throw CLIError("--watermark: one default watermark (PATH or URL); name the others (NAME=…)") }
                c.watermark = mark
            }
        }
        c.presets = presets.isEmpty ? Self.presetList(env["WEBIMAGE_PRESETS"] ?? "") : presets
        if let path = try Self.value(presetsFile, "WEBIMAGE_PRESETS_FILE", env) { c.presets += try Self.presetsFile(path) }
        c.onlyPresets = onlyPresets || ["1", "true", "yes"].contains(env["WEBIMAGE_ONLY_PRESETS"]?.lowercased() ?? "")
        do throws(ImagePresets.InvalidPreset) {
            _ = try ImagePresets(
                c.presets, onlyPresets: c.onlyPresets, maxSide: c.maxOutputSide, watermark: c.watermark != nil || urlDefault,
                watermarkNames: Set(c.namedWatermarks.keys).union(urlNames))
        } catch {
            throw CLIError("--preset: \(error.description)")
        }
    }

    /// The watermarks given as `http(s)://` URLs, with their names (nil: the default one).
    func watermarkURLs(_ env: [String: String]) -> [(name: String?, url: URL, entry: String)] {
        Self.list(watermark, "WEBIMAGE_WATERMARK", env).compactMap { entry in
            let (name, source) = Self.watermarkEntry(entry)
            return Self.watermarkURL(source).map { (name, $0, entry) }
        }
    }

    /// `NAME=SOURCE` when what comes before the first `=` is a watermark name, else a source
    /// (a path or URL, which may hold `=` itself).
    static func watermarkEntry(_ entry: String) -> (name: String?, source: String) {
        let split = entry.split(separator: "=", maxSplits: 1).map(String.init)
        let name = split.count == 2 && ImageParameters.WatermarkOptions.isValidName(split[0]) ? split[0] : nil
        return (name, name == nil ? entry : split[1])
    }

    /// `source` as a URL when it is one (`http://` or `https://` with a host), else nil (a path).
    static func watermarkURL(_ source: String) -> URL? {
        let lower = source.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), let url = URL(string: source), url.host?.isEmpty == false else { return nil }
        return url
    }

    /// `WEBIMAGE_PRESETS`: presets separated by commas, as imgproxy's `IMGPROXY_PRESETS`. A
    /// value may hold a comma (`padding:1,2,3,4`) but never `=`, so a piece without `=` belongs
    /// to the preset before it.
    static func presetList(_ text: String) -> [String] {
        var list: [String] = []
        for piece in text.split(separator: ",", omittingEmptySubsequences: false) {
            if piece.contains("=") || list.isEmpty { list.append(String(piece)) } else { list[list.count - 1] += "," + piece }
        }
        return list.filter { !$0.isEmpty }
    }

    /// The presets in the file at `path`: one a line; blank lines and lines starting with `#` skipped.
    static func presetsFile(_ path: String) throws -> [String] {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIError("cannot read the presets file \(path)") }
        defer { try? handle.close() }
        guard let data = try handle.read(upToCount: maxPresetsFileBytes + 1), data.count <= maxPresetsFileBytes else {
            throw CLIError("the presets file \(path) is empty or over \(maxPresetsFileBytes) bytes")
        }
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }
}
