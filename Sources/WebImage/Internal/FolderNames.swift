package import Foundation

/// Free names in an output folder, in memory that does not grow with the files written: the
/// folder itself records the names its files took (a candidate is looked up with `lstat`), an
/// earlier run's manifest records the names it gave (``ManifestIndex``, on disk), and only the
/// names handed out whose files are not in place yet are held here (``inFlight``: at most one a
/// load being written). A name is released once its file was renamed in, or its write failed.
///
/// `-1`, `-2`, … go before the extension when a name is taken. Where the search for a base name's
/// free suffix starts is remembered for up to ``hintCapacity`` base names, then all forgotten (a
/// hint only: a thousand URLs that all want `image.jpg` cost one look-up each, not a thousand); a
/// forgotten hint starts from the bare name again, which is only slower. Another process may still take a
/// name between the look-up and the rename: the caller's no-replace rename refuses, and it asks
/// again.
///
/// ```swift
/// let names = FolderNames(directory: output)
/// let name = await names.claim(stem: "photo", suffix: ".jpg")  // "photo.jpg", or "photo-1.jpg" if taken
/// // … rename the staged file to `name` without replacing …
/// await names.release(name)
/// ```
package actor FolderNames {
    /// Base names whose next suffix is remembered.
    package static let hintCapacity = 4096

    private let directory: String
    private let recorded: ManifestIndex?
    /// Names handed out whose files are not in the folder yet.
    private var claimed: Set<String> = []
    /// Where the suffix search of a base name starts next (0: the bare name).
    private var nextSuffix: [String: Int] = [:]

    /// `recorded`: the names an earlier run's manifest gave, taken too.
    package init(directory: URL, recorded: ManifestIndex? = nil) {
        self.directory = directory.path
        self.recorded = recorded
    }

    /// The first free name of `stem` + `suffix`, `stem-1` + `suffix`, …, held until ``release(_:)``.
    package func claim(stem: String, suffix: String) -> String {
        let base = stem + suffix
        func name(_ n: Int) -> String { n == 0 ? base : "\(stem)-\(n)\(suffix)" }
        var n = nextSuffix[base] ?? searchStart(name)
        while true {
            let candidate = name(n)
            n += 1
            guard isFree(candidate) else { continue }
            if nextSuffix[base] == nil, nextSuffix.count >= Self.hintCapacity { nextSuffix.removeAll(keepingCapacity: true) }
            nextSuffix[base] = n
            claimed.insert(candidate)
            return candidate
        }
    }

    /// The name's file is in the folder now (or will not be written): the folder answers for it.
    package func release(_ name: String) { claimed.remove(name) }

    /// Where to start looking for a free suffix of a base name with no hint (new, or its hint
    /// forgotten): 0, 1, 2, 4, … up to a free one, then halving the gap back to the first free one
    /// after a taken one. Suffixes taken in a row (as a run takes them) cost O(log n) look-ups, not
    /// n: a list that names one file a million times, with enough other names between to make the
    /// hints be forgotten again and again, would otherwise cost a look-up per taken suffix each time.
    private func searchStart(_ name: (Int) -> String) -> Int {
        if isFree(name(0)) { return 0 }
        var taken = 0, free = 1
        while !isFree(name(free)) {
            taken = free
            guard free < Int.max / 2 else { return free }
            free *= 2
        }
        while free - taken > 1 {
            let middle = taken + (free - taken) / 2
            if isFree(name(middle)) { free = middle } else { taken = middle }
        }
        return free
    }

    /// Names handed out and not released.
    package var inFlight: Int { claimed.count }

    /// Names looked up so far (in memory, in the index and in the folder).
    package private(set) var lookups = 0

    /// Base names whose next suffix is remembered (at most ``hintCapacity``).
    package var hints: Int { nextSuffix.count }

    /// Not handed out, not recorded by an earlier run, and no entry of the folder has it (a
    /// dangling link counts: a no-replace rename refuses it too). An `lstat` that fails for another
    /// reason than a missing entry (a name too long) lets the rename report the error.
    private func isFree(_ name: String) -> Bool {
        lookups += 1
        if claimed.contains(name) || recorded?.records(file: name) == true { return false }
        var status = stat()
        return lstat(directory + "/" + name, &status) != 0
    }
}
