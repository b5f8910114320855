import Foundation
import WebImage

extension ImageRenderer {
    /// Whether `quality` applies to the output format (JPEG, lossy WebP, AVIF).
    var isLossy: Bool { outputFormat == .jpeg || outputFormat == .webp || outputFormat == .avif }

    /// The image written as ``outputFormat`` at ``quality``. With `max_bytes` and a lossy format,
    /// a result over the limit is written again at lower qualities — a binary search between
    /// ``ImageParameters/maxBytesQualityFloor`` and the quality asked, at most
    /// ``ImageParameters/maxBytesEncodes`` encodes in all — and the best that fits is kept; when
    /// none fits, the one at the floor (imgproxy answers its smallest too). PNG and GIF results
    /// are written once: their size does not follow a quality.
    func encode(_ image: Image) throws(ImageServerError) -> Data {
        func write(_ quality: Int) throws(ImageServerError) -> Data {
            do {
                return try coders.encode(image, as: outputFormat, quality: isLossy ? Double(quality) / 100 : 1)
            } catch {
                throw ImageServerError(error, writing: outputFormat)
            }
        }
        let first = try write(quality)
        guard let limit = parameters.maxBytes, isLossy, first.count > limit else { return first }
        let floor = min(ImageParameters.maxBytesQualityFloor, quality)
        var low = floor, high = quality - 1, encodes = 1
        var fitting: Data?, smallest = first
        if floor < quality {
            // The floor first: when even it is over, nothing between helps.
            let atFloor = try write(floor)
            encodes += 1
            smallest = atFloor
            guard atFloor.count <= limit else { return atFloor }
            fitting = atFloor
            low = floor + 1
        }
        while low <= high, encodes < ImageParameters.maxBytesEncodes {
            if Task.isCancelled { throw .processingTimeout }
            let middle = low + (high - low + 1) / 2
            let data = try write(middle)
            encodes += 1
            if data.count <= limit {
                fitting = data
                low = middle + 1
            } else {
                high = middle - 1
            }
            if data.count < smallest.count { smallest = data }
        }
        return fitting ?? smallest
    }
}
