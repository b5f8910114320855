/// How ``ImageTarget/setImage(with:placeholder:options:operationKey:failureImage:transition:registry:pipeline:progress:completed:)``
/// presents a load, with SDWebImage's view option names.
///
/// ```swift
/// cell.setImage(with: request, placeholder: gray, options: [.delayPlaceholder, .showPartialPreviews])
/// ```
public struct ImageTargetOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `SDWebImageDelayPlaceholder`: show the placeholder only if the load fails (and no failure
    /// image was given), not while loading.
    public static let delayPlaceholder = ImageTargetOptions(rawValue: 1 << 0)
    /// `SDWebImageAvoidAutoSetImage`: never display the final image; the completion decides
    /// what to do with it.
    public static let avoidAutoSetImage = ImageTargetOptions(rawValue: 1 << 1)
    /// `SDWebImageProgressiveLoad` on a view: display previews while the data arrives (adds
    /// ``ImageLoadingOptions/progressiveLoad`` to the request).
    public static let showPartialPreviews = ImageTargetOptions(rawValue: 1 << 2)
    /// `SDWebImageForceTransition`: run the transition for memory-cache hits too (by default
    /// only images that had to be loaded are presented with it).
    public static let forceTransition = ImageTargetOptions(rawValue: 1 << 3)
}

/// How a final image is presented — SDWebImage's `SDWebImageTransition`: a fade, a flip, a
/// frame-by-frame reveal. The closure replaces the plain display and must display `image`
/// itself (at once or over time).
///
/// ```swift
/// let fade = ImageTransition { target, image, key in
///     (target as? FadingView)?.fade(to: image)
/// }
/// view.setImage(with: request, transition: fade)
/// ```
public struct ImageTransition: Sendable {
    /// Displays the final image on the target under the operation key.
    public let present: @MainActor @Sendable (any ImageTarget, Image, String) -> Void
    public init(_ present: @escaping @MainActor @Sendable (any ImageTarget, Image, String) -> Void) {
        self.present = present
    }
}
