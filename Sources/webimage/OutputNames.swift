import Foundation
import WebImage

/// Chooses a file name in the output directory for each URL: the URL's last path component,
/// with the sniffed format's extension added when it has none, and `-1`, `-2`, … before the
/// extension when another URL of the same run already took the name.
actor OutputNames {
    private var taken: Set<String> = []

    func name(for url: URL, format: ImageFormat?) -> String {
        var base = url.lastPathComponent.removingPercentEncoding ?? url.lastPathComponent
        base = String(base.map { $0 == "/" || $0 == "\\" || $0.isNewline ? "_" : $0 })
        if base.isEmpty || base == "/" || base == "." || base == ".." { base = "image" }
        var ext = (base as NSString).pathExtension
        var stem = (base as NSString).deletingPathExtension
        if ext.isEmpty, let format {
            ext = format.fileExtension
            stem = base
        }
        let suffix = ext.isEmpty ? "" : ".\(ext)"
        var candidate = stem + suffix
        var n = 1
        while taken.contains(candidate) {
            candidate = "\(stem)-\(n)\(suffix)"
            n += 1
        }
        taken.insert(candidate)
        return candidate
    }
}
