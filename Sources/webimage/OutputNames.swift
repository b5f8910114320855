import Foundation
import WebImage

/// Chooses a file name in the output directory for each URL.
///
/// Without a template: the URL's last path component, with the format's extension added when it
/// has none. With `--name TEMPLATE`: `{index}` (the URL's line in the input, from 1), `{hash}`
/// (16 hex digits of a stable hash of the URL), `{basename}` (the last path component without its
/// extension) and `{ext}` (the image format's extension) are replaced. Either way, `-1`, `-2`, …
/// go before the extension when another URL of the run (a name handed out and not yet
/// released), an earlier run's manifest (``ManifestIndex``) or a file already in the folder took
/// the name (``FolderNames``; the final rename refuses to replace a file that came since, and the
/// caller asks again). Each name handed out is given back with ``release(_:)`` once its file is
/// in place or will not be written, so what is held does not grow with the run.
struct OutputNames: Sendable {
    private let folder: FolderNames
    private let template: String?

    /// The placeholders a template may use.
    static let placeholders = ["{index}", "{hash}", "{basename}", "{ext}"]

    init(folder: FolderNames, template: String? = nil) {
        self.folder = folder
        self.template = template
    }

    /// The name's file was renamed into place (or failed): the folder records it from now on.
    func release(_ name: String) async { await folder.release(name) }

    func name(for url: URL, format: ImageFormat?, index: Int = 0) async -> String {
        var base = url.lastPathComponent.removingPercentEncoding ?? url.lastPathComponent
        if base.isEmpty || base == "/" || base == "." || base == ".." { base = "image" }
        var ext = (base as NSString).pathExtension
        var stem = (base as NSString).deletingPathExtension
        if let template {
            let formatExtension = format?.fileExtension ?? (ext.isEmpty ? "bin" : ext)
            let name = template
                .replacingOccurrences(of: "{index}", with: String(index))
                .replacingOccurrences(of: "{hash}", with: StableHash.hex(url.absoluteString))
                .replacingOccurrences(of: "{basename}", with: stem.isEmpty ? "image" : stem)
                .replacingOccurrences(of: "{ext}", with: formatExtension)
            ext = (name as NSString).pathExtension
            stem = (name as NSString).deletingPathExtension
        } else if ext.isEmpty, let format {
            ext = format.fileExtension
            stem = base
        }
        if ext.utf8.count > Self.maxExtensionBytes {  // a long "extension" is part of the name
            stem = stem + "." + ext
            ext = format?.fileExtension ?? ""
        }
        stem = Self.bounded(Self.safe(stem))
        if stem.isEmpty || stem == "." || stem == ".." { stem = "image" }
        let suffix = ext.isEmpty ? "" : "." + Self.safe(ext)
        return await folder.claim(stem: stem, suffix: suffix)
    }

    /// Bytes of a name's stem (before a collision's `-N` and the extension): file systems allow
    /// 255 bytes a name, and the temporary name a file is written under first adds about 30.
    static let maxStemBytes = 150
    static let maxExtensionBytes = 16

    /// `stem`, or when longer than ``maxStemBytes`` its first 120 bytes (whole characters) and 8
    /// hex digits of its hash, so that long names that share a beginning stay apart.
    private static func bounded(_ stem: String) -> String {
        guard stem.utf8.count > maxStemBytes else { return stem }
        var cut = ""
        for character in stem {
            guard cut.utf8.count + character.utf8.count <= 120 else { break }
            cut.append(character)
        }
        return cut + "-" + StableHash.hex(stem).prefix(8)
    }

    /// No path separators, control characters or leading dots (hidden files) in a name; no
    /// Unicode format characters (bidi controls: `U+202E` made `gnp.exe` show as `exe.png`) and
    /// no leading `-`, which a shell command given the name would take for an option (red
    /// team, stop 53): each becomes `_`.
    private static func safe(_ text: String) -> String {
        var cleaned = String(text.map { character -> Character in
            let format = character.unicodeScalars.contains { $0.properties.generalCategory == .format }
            return character == "/" || character == "\\" || character.isNewline || format || (character.asciiValue.map { $0 < 0x20 } ?? false) ? "_" : character
        })
        while cleaned.hasPrefix(".") { cleaned.removeFirst() }
        if cleaned.hasPrefix("-") { cleaned = "_" + cleaned.dropFirst() }
        return cleaned
    }
}
