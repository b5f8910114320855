import Foundation
import Mustache
import WebImage

/// `fetch --report FILE`: a contact sheet of every image written (thumbnail, format, pixel
/// size, bytes, time, source), the failures with their errors, and SVG charts of throughput over
/// time and of the time per image — one self-contained HTML file (``ReportTemplate``).
///
/// Thumbnails are at most 96 pixels (64 past 2,000 images), WebP at quality 50 as data URIs:
/// about 1–2 KB each, so 10,000 images stay well under 20 MB. The sheet shows the first
/// `--report-images` images (10,000, as many as `webimage report` merges) and says how many
/// more there were (the charts and totals count them all; `--jsonl` lists them): a run of
/// millions kept every thumbnail in memory until it ended.
final class FetchReport {
    /// Images shown on the sheet by default (``RecordMerge/maxThumbnails``), and at most.
    static let defaultCells = RecordMerge.maxThumbnails
    static let maxCells = 100_000

    struct Entry {
        var file: String
        var format: String
        var width: Int
        var height: Int
        var size: String
        var ms: String
        var source: String
        var thumbnail: String?
    }

    private var entries: [Entry] = []
    /// Images written beyond ``maxCells``.
    private var omitted = 0
    /// Seconds since the start at which each image finished (for the throughput chart).
    private var finishTimes: [Double] = []
    private var times: [Double] = []
    private let path: String

    init(path: String, cells: Int = FetchReport.defaultCells) {
        self.path = path
        self.cells = CellCount(limit: cells)
    }

    /// The thumbnail side for a run of about `expected` images.
    static func thumbnailSide(expected: Int?) -> Int { (expected ?? 0) > 2000 ? 64 : 96 }

    /// ``thumbnail(of:side:)`` with its decode's room reserved in `configuration`'s memory
    /// budget first (a 49 MP PNG's thumbnail decodes it whole); `nil` when there is none in time.
    static func thumbnail(of data: Data, side: Int, budget configuration: ImagePipeline.Configuration) async -> String? {
        let options = ImageDecodingOptions(firstFrameOnly: true, thumbnailMaxPixelSize: side)
        guard let header = try? ImageCoderRegistry.default.readHeader(data), Self.hasCheapThumbnail(header) else { return nil }
        let reservation: MemoryBudget.Reservation?
        do {
            reservation = try await configuration.memoryBudget?.reserve(
                MemoryBudget.bytes(toDecode: header, options: options), waitingAtMost: configuration.memoryBudgetWait)
        } catch {
            return nil
        }
        defer { reservation?.release() }
        return thumbnail(of: data, side: side)
    }

    /// Source pixels above which only a JPEG (decoded at an eighth of its size) gets a thumbnail.
    static let maxThumbnailSourcePixels = 16 << 20

    /// Whether a thumbnail of `header` costs little: a 160 KB PNG of 49 MP decodes whole, 9 s of
    /// CPU (debug) for one cell (red team, stop 53); such an image's cell shows its size and
    /// format without a picture.
    static func hasCheapThumbnail(_ header: ImageHeader) -> Bool {
        let (area, overflow) = max(header.pixelWidth, 0).multipliedReportingOverflow(by: max(header.pixelHeight, 0))
        return header.format == .jpeg || (!overflow && area <= maxThumbnailSourcePixels)
    }

    /// A small WebP of `data` as a data URI, or `nil` when it does not decode.
    static func thumbnail(of data: Data, side: Int) -> String? {
        let options = ImageDecodingOptions(firstFrameOnly: true, thumbnailMaxPixelSize: side)
        guard let image = try? ImageCoderRegistry.default.decode(data, options: options),
              let (webp, _) = try? ImageExport(maxSize: (side, side), format: .webp, lossyQuality: 0.5).export(image)
        else { return nil }
        return "data:image/webp;base64," + webp.base64EncodedString()
    }

    /// The sheet's cells taken so far, for the loads to ask before they make a thumbnail.
    let cells: CellCount

    /// Cells taken, read from the loads' tasks while ``add(_:thumbnail:at:)`` counts on the
    /// run's: a count a little stale only makes a few thumbnails that are then dropped.
    final class CellCount: Sendable {
        let limit: Int
        private let count = Locked(0)
        init(limit: Int) { self.limit = limit }
        var hasRoom: Bool { count.withLock { $0 } < limit }
        func take() { count.withLock { $0 += 1 } }
    }

    func add(_ record: FetchRecord, thumbnail: String?, at elapsed: Double) {
        guard record.status == "ok" else { return }
        finishTimes.append(elapsed)
        times.append(record.ms ?? 0)
        guard entries.count < cells.limit else {
            omitted += 1
            return
        }
        cells.take()
        entries.append(Entry(
            file: record.file ?? "", format: record.format ?? "", width: record.width ?? 0, height: record.height ?? 0,
            size: ByteCountFormatter.string(fromByteCount: Int64(record.bytes ?? 0), countStyle: .file),
            ms: String(format: "%.0f", record.ms ?? 0), source: record.source ?? "", thumbnail: thumbnail))
    }

    func write(summary: FetchSummary) throws {
        let template = try MustacheTemplate(string: ReportTemplate.page)
        let html = template.render(context(summary))
        do { try Data(html.utf8).write(to: URL(fileURLWithPath: path)) } catch {
            throw CLIError("cannot write the report \(path): \(error.localizedDescription)")
        }
    }

    private func context(_ summary: FetchSummary) -> [String: Any] {
        let seconds = max(summary.seconds, 0.001)
        let (points, peak) = ReportCharts.throughput(finishTimes, seconds: seconds)
        let side = Self.thumbnailSide(expected: entries.count)
        let sections = stride(from: 0, to: entries.count, by: 500).map { start in
            ["images": Array(entries[start..<min(start + 500, entries.count)])]
        }
        return [
            "generated": ISO8601DateFormatter().string(from: Date()),
            "seconds": String(format: "%.2f", summary.seconds), "rate": String(format: "%.1f", summary.imagesPerSecond),
            "totalBytes": ByteCountFormatter.string(fromByteCount: Int64(summary.bytes), countStyle: .file),
            "requested": summary.requested, "succeeded": summary.succeeded, "failed": summary.failed,
            "skipped": summary.skipped, "duplicates": summary.duplicates, "fromNetwork": summary.fromNetwork,
            "fromDisk": summary.fromDisk, "fromMemory": summary.fromMemory, "revalidated": summary.revalidated,
            "throughputPoints": points, "throughputMax": String(format: "%.0f", peak),
            "histogram": ReportCharts.histogram(times),
            "hasFailures": !summary.failures.isEmpty,
            "failures": summary.failures.map { ["line": $0.line.map(String.init) ?? "", "url": $0.url, "error": $0.error] },
            "sections": sections, "cellWidth": side + 40, "thumbnailSide": side,
            "omitted": omitted > 0 ? "\(omitted) more images were written; the sheet shows the first \(cells.limit) (`--jsonl` lists every one)." : "",
        ]
    }
}

/// The numbers behind the report's two SVG charts (640 × 180, plot area x 40–630, y 10–150).
enum ReportCharts {
    /// Images finished per second in up to 60 buckets over the run, as polyline points; and the peak rate.
    static func throughput(_ finishTimes: [Double], seconds: Double) -> (String, Double) {
        // Times come from records anyone may have written: clamped before any conversion to Int.
        let seconds = seconds.isFinite ? min(max(seconds, 0), FetchRecord.maxSeconds) : 0
        let buckets = max(1, min(60, Int(seconds.rounded(.up) * 4)))
        let width = max(seconds / Double(buckets), 1e-9)
        var counts = [Int](repeating: 0, count: buckets)
        for time in finishTimes where time.isFinite {
            counts[Int(min(max(time / width, 0), Double(buckets - 1)))] += 1
        }
        let rates = counts.map { Double($0) / width }
        let peak = max(rates.max() ?? 0, 1)
        let points = rates.enumerated().map { index, rate in
            let x = 40 + 590 * (Double(index) + 0.5) / Double(buckets)
            return String(format: "%.1f,%.1f", x, 150 - 140 * rate / peak)
        }
        return (points.joined(separator: " "), peak)
    }

    struct Bar {
        var x: Int, y: Int, width: Int, height: Int, labelY: Int
        var label: String
        var count: Int
    }

    static let bounds: [(Double, String)] = [
        (10, "<10ms"), (25, "<25ms"), (50, "<50ms"), (100, "<100ms"), (250, "<250ms"), (500, "<0.5s"),
        (1000, "<1s"), (2500, "<2.5s"), (.infinity, "≥2.5s"),
    ]

    /// Counts of image times per bucket, as bars.
    static func histogram(_ times: [Double]) -> [Bar] {
        var counts = [Int](repeating: 0, count: bounds.count)
        for time in times { counts[bounds.firstIndex { time < $0.0 } ?? bounds.count - 1] += 1 }
        let top = max(counts.max() ?? 0, 1)
        let slot = 590 / bounds.count
        return counts.enumerated().map { index, count in
            let height = Int(130 * Double(count) / Double(top))
            return Bar(x: 44 + index * slot, y: 150 - height, width: slot - 8, height: height, labelY: max(20, 146 - height),
                       label: bounds[index].1, count: count)
        }
    }
}
