import Foundation

extension ImagePipeline {
    /// `data`'s header, read on `executor` when the pipeline has one
    /// (``Configuration/workExecutor``), like its decodes: walking a hostile file's header can
    /// take seconds — 600,000 GIF frames, 65,535 icon entries, a thousand TIFF directories (red
    /// team, stop 49) — and on a cooperative thread that stalled every other task of the
    /// process, a server's `/health` included, for as long.
    static func readHeader(_ data: Data, coders: ImageCoderRegistry, on executor: ImageWorkExecutor?) async throws(ImageDecodingError) -> ImageHeader {
        guard let executor else { return try coders.readHeader(data) }
        let result = await withTaskExecutorPreference(executor) { () -> Result<ImageHeader, ImageDecodingError> in
            do throws(ImageDecodingError) { return .success(try coders.readHeader(data)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
