import Foundation

/// `fetch --output-format webdataset`: samples written into tar shards of `shardSize` samples,
/// `00000.tar`, `00001.tar`, … (the shard of sample *n* of the input is *n* / `shardSize`, so
/// keys and shards follow the input's order whatever order the loads finish in). Each sample is
/// `{key}.{ext}` (the image, when there is one), `{key}.txt` (the caption, when there is one)
/// and `{key}.json` (``DatasetSampleJSON``), streamed into the shard's file as it comes: a shard
/// is never held in memory.
///
/// A shard is written under a hidden temporary name (``OutputFile/temporaryMarker``) and renamed
/// to its own, never replacing a file (``NoReplaceRename``), once all its samples are in (or at
/// the end of the run), beside `{shard}_stats.json`. Keys are img2dataset's: the shard number
/// (5 digits) then the sample's place in it (as many digits as `shardSize − 1` has), or the
/// `--key-col` value made safe for a tar name; a `--retry-failed` sample keeps its earlier run's key.
actor WebDatasetWriter {
    private struct OpenShard {
        var tar: TarWriter
        var stats: DatasetShardStats
        var keys: Set<String> = []
        /// The next suffix to try for a key met again: so that many samples of one key (a
        /// `--key-col` a stranger's list fills with one value) cost one look-up each, not one per
        /// earlier duplicate (10,000 of them took 15 s).
        var nextSuffix: [String: Int] = [:]
        /// A write failed part-way: the shard is dropped at the end.
        var broken = false
    }

    /// The longest `--key-col` key kept (the member name stays within ustar's 100 bytes).
    static let maxKeyLength = 80
    private let directory: URL
    let shardSize: Int
    private var open: [Int: OpenShard] = [:]
    private var closed: Set<Int> = []

    /// Starts every shard's name (and default key): empty for a whole list, `K-` for the share
    /// `fetch --shard K/N` fetches, so that N processes writing into one folder never want one name.
    let prefix: String

    init(directory: URL, shardSize: Int, prefix: String = "") {
        self.directory = directory
        self.shardSize = shardSize
        self.prefix = prefix
    }

    /// The prefix of the share `K/N` of a list (`nil`: the whole list).
    static func prefix(shard: Shard?) -> String { shard.map { "\($0.index + 1)-" } ?? "" }

    /// Refuses, before anything is fetched, a folder that holds shards of this run's names
    /// already (a second run would stop at its first shard, after downloading it: shards are
    /// never replaced). Other shares' shards (`--shard`) may be there.
    static func checkNoShards(in directory: URL, prefix: String = "") throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let digitsFollow = { (name: String) in name.dropFirst(prefix.count).first?.isNumber == true }
        if let shard = names.sorted().first(where: { $0.hasSuffix(".tar") && $0.hasPrefix(prefix) && digitsFollow($0) && !$0.hasPrefix(".") }) {
            throw CLIError("\(directory.path) holds webdataset shards already (\(shard)); write into an empty folder")
        }
    }

    /// Shard `index`'s name, prefix included (no extension).
    func name(_ index: Int) -> String { prefix + Self.shardName(index) }

    static func shardName(_ index: Int) -> String {
        let digits = String(index)
        return String(repeating: "0", count: max(0, 5 - digits.count)) + digits
    }

    /// img2dataset's key of sample `number`: shard number and place in the shard, zero-padded.
    static func defaultKey(_ number: Int, shardSize: Int) -> String {
        let place = String(number % shardSize)
        let width = String(max(shardSize - 1, 1)).count
        return shardName(number / shardSize) + String(repeating: "0", count: max(0, width - place.count)) + place
    }

    /// A `--key-col` value as a tar-safe key: ASCII letters, digits, `-` and `_` kept, anything
    /// else `_` (no `.`, which readers take for the start of the extension, and no `/`), at most
    /// ``maxKeyLength`` characters; `nil` when nothing is left.
    static func safeKey(_ value: String) -> String? {
        let cleaned = String(value.unicodeScalars.prefix(maxKeyLength).map { scalar -> Character in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == "_") ? Character(scalar) : "_"
        })
        return cleaned.isEmpty ? nil : cleaned
    }

    /// Where a sample went: `shard` (`00000.tar`) and its `key`; `path` reads `00000.tar/KEY`.
    struct Placed: Sendable {
        var shard: String
        var key: String
        var path: String { "\(shard)/\(key)" }
    }

    /// Writes one sample into its shard.
    func write(_ sample: DatasetSample) throws -> Placed {
        let index = sample.number / shardSize
        guard !closed.contains(index) else { throw CLIError("shard \(name(index)) is already closed") }
        var shard = try open[index] ?? openShard(index)
        guard !shard.broken else { throw CLIError("\(name(index)).tar is not written: an earlier sample's write failed") }
        var key = sample.fields.recordedKey ?? sample.fields.key.flatMap(Self.safeKey) ?? prefix + Self.defaultKey(sample.number, shardSize: shardSize)
        // Two samples of one key would read as one: the second gets a suffix.
        if shard.keys.contains(key) {
            var n = shard.nextSuffix[key] ?? 2
            while shard.keys.contains("\(key)_\(n)") { n += 1 }
            shard.nextSuffix[key] = n + 1
            key = "\(key)_\(n)"
        }
        shard.keys.insert(key)
        do {
            if let image = sample.image { try shard.tar.add(name: "\(key).\(sample.format ?? "bin")", data: image) }
            if let caption = sample.fields.caption { try shard.tar.add(name: "\(key).txt", data: Data(caption.utf8)) }
            try shard.tar.add(name: "\(key).json", data: DatasetSampleJSON.data(key: key, sample: sample))
        } catch {
            shard.broken = true
            open[index] = shard
            throw error
        }
        shard.stats.count += 1
        if let image = sample.image {
            shard.stats.successes += 1
            shard.stats.bytes += image.count
        } else {
            shard.stats.failedToDownload += 1
        }
        open[index] = shard
        if shard.stats.count == shardSize { try close(index) }
        return Placed(shard: name(index) + ".tar", key: key)
    }

    /// Closes every shard still open (the last, or those of an interrupted run).
    func finish() throws {
        var firstError: (any Error)?
        for index in open.keys.sorted() {
            do { try close(index) } catch { firstError = firstError ?? error }
        }
        if let firstError { throw firstError }
    }

    private func openShard(_ index: Int) throws -> OpenShard {
        let file = name(index) + ".tar"
        return OpenShard(tar: try TarWriter(path: OutputFile.temporaryPath(for: file, in: directory)), stats: DatasetShardStats(shard: name(index)))
    }

    /// Ends the shard's archive and renames it into place, then writes its stats.
    private func close(_ index: Int) throws {
        guard let shard = open.removeValue(forKey: index) else { return }
        closed.insert(index)
        let file = name(index) + ".tar"
        guard !shard.broken else {
            unlink(shard.tar.path)
            throw CLIError("\(file) was not written: a sample's write failed")
        }
        do { try shard.tar.finish() } catch {
            unlink(shard.tar.path)
            throw error
        }
        guard try OutputFile.place(shard.tar.path, in: directory, as: file) else {
            unlink(shard.tar.path)
            throw CLIError("cannot write \(file): a file has that name (webdataset shards are never replaced)")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let statsName = name(index) + "_stats.json"
        let staged = try OutputFile.stage(try encoder.encode(shard.stats), in: directory, name: statsName)
        guard try OutputFile.place(staged, in: directory, as: statsName) else {
            OutputFile.discard(staged)
            throw CLIError("cannot write \(statsName): a file has that name")
        }
    }
}
