import Foundation
import WebImage

/// A custom JPEG decoder that ignores the data and returns `image`, full size, whatever the options.
struct StubDecoder: ImageDecoding {
    var image: Image

    func canDecode(_ format: ImageFormat) -> Bool { format == .jpeg }
    func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        ImageHeader(format: .jpeg, pixelWidth: image.pixelWidth, pixelHeight: image.pixelHeight, hasAlpha: !image.isOpaque)
    }
    func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image { image }
}
