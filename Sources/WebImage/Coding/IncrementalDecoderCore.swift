import Foundation

/// The codec state of one incremental decode (a C decoder and the canvas it writes). Not
/// `Sendable`: an ``IncrementalDecoderCore`` reaches it only under its lock.
protocol IncrementalDecodingState: AnyObject {
    /// Decodes what `chunk` makes decodable; failures only stop the partial images.
    func append(_ chunk: Data, options: ImageDecodingOptions)
    /// The picture decoded so far, or `nil`.
    func partialImage(options: ImageDecodingOptions) -> Image?
}

/// What every ``IncrementalImageDecoding`` does around its codec state: holds the options and
/// keeps the state under a lock, so the decoder is `Sendable` without `@unchecked`.
final class IncrementalDecoderCore<State: IncrementalDecodingState>: Sendable {
    private let options: ImageDecodingOptions
    private let state: Locked<State>

    init(options: ImageDecodingOptions, state: sending State) {
        self.options = options
        self.state = Locked(state)
    }

    func append(_ chunk: Data) {
        let options = options
        state.withLock { $0.append(chunk, options: options) }
    }

    func partialImage() -> Image? {
        let options = options
        return state.withLock { $0.partialImage(options: options) }
    }
}
