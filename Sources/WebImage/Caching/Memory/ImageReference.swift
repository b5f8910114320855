/// A decoded image in a shared box: what "still in use" means for the memory cache's weak
/// layer. Hold it while the image is used (on screen, in a response being written); after the
/// cache evicts the image, a look-up still finds it as long as some holder keeps the box.
///
/// ```swift
/// let reference = cache.reference(forKey: key)   // or: cache.insert(ImageReference(image), forKey: key)
/// render(reference?.image)
/// ```
public final class ImageReference: Sendable {
    public let image: Image

    public init(_ image: Image) {
        self.image = image
    }
}

/// A weak reference to an evicted image's box (lives only inside the cache's mutex).
struct WeakImageReference {
    weak var reference: ImageReference?

    init(_ reference: ImageReference) {
        self.reference = reference
    }
}
