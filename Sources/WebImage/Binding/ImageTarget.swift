/// Something that shows an image: a view, a grid cell, a terminal region — SDWebImage's view
/// categories and AlamofireImage's `UIImageView` extension, without UIKit.
///
/// A target only draws what it is given; loading, cancelling and the stale-result guard are
/// done by ``ImageTarget/setImage(with:placeholder:options:operationKey:failureImage:transition:registry:pipeline:progress:completed:)``.
/// Every call arrives on the main actor, in order: the placeholder at once, then progress and
/// previews, then the final image or the failure image.
///
/// ```swift
/// @MainActor final class Cell: ImageTarget {
///     var image: Image?
///     func display(_ image: Image?, as presentation: ImagePresentation, forKey key: String) {
///         self.image = image
///     }
/// }
/// cell.setImage(with: ImageRequest(url: url), placeholder: gray)
/// ```
@MainActor
public protocol ImageTarget: AnyObject {
    /// Shows `image` (nil clears) for the operation key `key` (``ImageOperationKey/image`` unless
    /// the caller named another, such as a background).
    func display(_ image: Image?, as presentation: ImagePresentation, forKey key: String)
    /// The download advanced. The default does nothing.
    func displayProgress(_ progress: DownloadProgress, forKey key: String)
    /// The load failed; called after the failure image (if any) was displayed. The default does nothing.
    func displayFailure(_ error: ImagePipelineError, forKey key: String)
}

extension ImageTarget {
    public func displayProgress(_ progress: DownloadProgress, forKey key: String) {}
    public func displayFailure(_ error: ImagePipelineError, forKey key: String) {}
}

/// What a displayed image is.
public enum ImagePresentation: String, Sendable, Hashable {
    /// Shown while loading (or, with ``ImageTargetOptions/delayPlaceholder``, after a failure).
    case placeholder
    /// A progressive preview of the image still loading.
    case preview
    /// The loaded image.
    case final
    /// The failure image, after the load failed.
    case failure
}

/// Names of the operation slots of a target: one running load per slot (SDWebImage's
/// `sd_latestOperationKey`). A target may use several, e.g. an image and a background.
public enum ImageOperationKey {
    /// The main image of a target (the default).
    public static let image = "image"
    /// A second, independent slot — SDWebImage's background image of a button.
    public static let background = "background"
}
