import Foundation
import Testing
import WebImage

extension HeavyTests {
/// `fetch`'s output names and resume index hold memory that does not grow with the run (issue
/// #30): `FolderNames` keeps only the names of files not in place yet and asks the folder for the
/// rest; `ManifestIndex` keeps an earlier run's manifest on disk.
@Suite("Fetch names and manifest index in bounded memory")
struct FolderNamesTests {
    /// An index of `rows` in a new file of `directory`.
    static func index(_ rows: [ManifestIndex.Row], in directory: URL) throws -> ManifestIndex {
        let index = try ManifestIndex(path: directory.appendingPathComponent(".index.partial-1").path)
        try index.insert(rows)
        return index
    }

    @Test func aNameTakenInFlightByAnEarlierRunOrByAFileGetsASuffix() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("the user's".utf8).write(to: dir.appendingPathComponent("pic.jpg"))
        let index = try Self.index([.init(url: "https://example.com/old.jpg", file: "pic-1.jpg", bytes: 5)], in: dir)
        defer { index.remove() }
        let names = FolderNames(directory: dir, recorded: index)
        #expect(await names.claim(stem: "pic", suffix: ".jpg") == "pic-2.jpg")
        #expect(await names.claim(stem: "pic", suffix: ".jpg") == "pic-3.jpg", "pic-2.jpg is in flight")
        #expect(await names.claim(stem: "other", suffix: "") == "other")
        #expect(await names.inFlight == 3)
        // pic-3.jpg is placed; pic-2.jpg's write failed: the folder answers for both from now on.
        try Data("placed".utf8).write(to: dir.appendingPathComponent("pic-3.jpg"))
        for name in ["pic-2.jpg", "pic-3.jpg", "other"] { await names.release(name) }
        #expect(await names.inFlight == 0)
        let later = FolderNames(directory: dir, recorded: index)
        #expect(await later.claim(stem: "pic", suffix: ".jpg") == "pic-2.jpg", "released unwritten, so free again")
        #expect(await later.claim(stem: "pic", suffix: ".jpg") == "pic-4.jpg")
    }

    /// A list that names one file thousands of times, with enough other names between that the
    /// suffix hints are forgotten: finding the next free suffix again costs a few look-ups, not
    /// one per suffix already taken.
    @Test func aForgottenHintCostsLogarithmicallyManyLookUps() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let names = FolderNames(directory: dir)
        for _ in 0..<3000 { _ = await names.claim(stem: "image", suffix: ".jpg") }
        for other in 0..<FolderNames.hintCapacity { _ = await names.claim(stem: "other-\(other)", suffix: ".jpg") }
        #expect(await names.hints < FolderNames.hintCapacity, "the hints were forgotten")
        let before = await names.lookups
        #expect(await names.claim(stem: "image", suffix: ".jpg") == "image-3000.jpg")
        let cost = await names.lookups - before
        #expect(cost <= 30, "\(cost) look-ups for the 3,001st image.jpg")
    }

    /// A million names, 16 loads at a time, a third of them wanting one name: only the 16 in flight
    /// are held, and the suffix hints stay under their cap.
    @Test func aMillionNamesHoldOnlyThoseInFlight() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let names = FolderNames(directory: dir)
        let loads = 16, perLoad = 62_500
        let peak = await withTaskGroup(of: Int.self) { group in
            for load in 0..<loads {
                group.addTask {
                    var peak = 0
                    for i in 0..<perLoad {
                        let stem = i % 3 == 0 ? "image" : "photo-\(load)-\(i)"
                        let name = await names.claim(stem: stem, suffix: ".jpg")
                        if i % 1000 == 0 { peak = max(peak, await names.inFlight) }
                        await names.release(name)
                    }
                    return peak
                }
            }
            return await group.reduce(0) { max($0, $1) }
        }
        #expect(peak <= loads, "\(peak) names held with \(loads) loads")
        #expect(await names.inFlight == 0, "every name is released once placed or failed")
        #expect(await names.hints <= FolderNames.hintCapacity)
    }

    /// 20,000 files that all want `pic.jpg`, placed 16 at a time without replacing (as `fetch`
    /// does): every file has its own name, and none is held once placed.
    @Test func twentyThousandPlacedFilesAreAnsweredByTheFolder() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let names = FolderNames(directory: dir)
        let placed = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<16 {
                group.addTask {
                    var mine: [String] = []
                    for _ in 0..<1250 {
                        let name = await names.claim(stem: "pic", suffix: ".jpg")
                        let descriptor = open(dir.appendingPathComponent(name).path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
                        if descriptor >= 0 { close(descriptor); mine.append(name) }
                        await names.release(name)
                    }
                    return mine
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(placed.count == 20_000, "a claimed name was taken by another load")
        #expect(Set(placed).count == 20_000)
        #expect(await names.inFlight == 0)
        #expect(await FolderNames(directory: dir).claim(stem: "pic", suffix: ".jpg") == "pic-20000.jpg")
    }

    @Test func theIndexAnswersByURLAndByFileAndIsRemoved() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let index = try ManifestIndex(path: dir.appendingPathComponent(".index.partial-1").path)
        for batch in 0..<10 {
            try index.insert((0..<10_000).map { i in
                let n = batch * 10_000 + i
                return .init(url: "https://img.example.org/\(n).jpg", file: "f-\(n).jpg", bytes: n)
            })
        }
        // A later line of a URL wins, as in the manifest.
        try index.insert([.init(url: "https://img.example.org/7.jpg", file: "again.jpg", bytes: 70)])
        #expect(index.count == 100_000)
        #expect(index.entry(for: "https://img.example.org/7.jpg") == .init(url: "https://img.example.org/7.jpg", file: "again.jpg", bytes: 70))
        #expect(index.entry(for: "https://img.example.org/99999.jpg")?.file == "f-99999.jpg")
        #expect(index.entry(for: "https://img.example.org/100000.jpg") == nil)
        #expect(index.records(file: "f-54321.jpg") && index.records(file: "again.jpg"))
        #expect(!index.records(file: "f-7.jpg") && !index.records(file: "f-100000.jpg"))
        index.remove()
        #expect(!FileManager.default.fileExists(atPath: index.path))
    }
}
}
