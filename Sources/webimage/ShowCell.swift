import Foundation
import WebImage
import WebImageTerminal

/// One cell of `webimage show`: an `ImageTarget` bound through the binding layer. It shows
/// the placeholder at once, a progress caption while loading, previews, the final image
/// (animations played with their frame delays and loop count) or the failure mark.
@MainActor
final class ShowCell: ImageTarget {
    enum Status: Equatable {
        case empty
        case loading(Double?)
        case done(String, detail: String)
        case failed(String)
    }

    let index: Int
    private unowned let screen: ShowScreen
    private var bound: ImageRequest?
    private var name = ""
    private(set) var status = Status.empty
    private var source: Image?
    /// Pictures drawn so far, by frame; an animation's while they fit ``pictureCacheBytes``.
    private var pictures: [Int: (picture: TerminalPicture, width: Int)] = [:]
    private var picturesBytes = 0
    private var cachesEveryFrame = true
    private var frame = 0
    private var player: Task<Void, Never>?

    init(index: Int, screen: ShowScreen) {
        self.index = index
        self.screen = screen
    }

    var isLoading: Bool { if case .loading = status { true } else { false } }
    var isBound: Bool { bound != nil }

    func bind(_ request: ImageRequest) {
        guard bound?.imageKey != request.imageKey else { return }
        bound = request
        name = TerminalText.safe(request.url.lastPathComponent)
        status = .loading(nil)
        setImage(
            with: request, placeholder: screen.placeholder, options: .showPartialPreviews, failureImage: screen.failureImage,
            registry: screen.registry, pipeline: screen.pipeline,
            completed: { [weak self] result in
                guard let self, case .success(let response) = result else { return }
                let image = response.image
                let frames = image.frameCount > 1 ? " \(image.frameCount)f" : ""
                self.status = .done("\(image.pixelWidth)×\(image.pixelHeight)", detail: " \(image.format.rawValue)\(frames)")
                self.screen.setNeedsDisplay(self)
            })
    }

    func unbind(redraw: Bool = true) {
        cancelImageLoad(registry: screen.registry)
        stopPlayer()
        bound = nil
        status = .empty
        source = nil
        forgetPictures()
        if redraw { screen.setNeedsDisplay(self) }
    }

    /// The cell's size changed: pictures are encoded again from the source.
    func layoutChanged() { forgetPictures() }

    // MARK: ImageTarget

    func display(_ image: Image?, as presentation: ImagePresentation, forKey key: String) {
        stopPlayer()
        source = image
        forgetPictures()
        frame = 0
        if let image, let request = bound, presentation == .final, image.frameCount > 1, screen.animates { play(request) }
        screen.setNeedsDisplay(self)
    }

    func displayProgress(_ progress: DownloadProgress, forKey key: String) {
        status = .loading(progress.fraction)
        screen.setNeedsDisplay(self)
    }

    func displayFailure(_ error: ImagePipelineError, forKey key: String) {
        status = .failed(Self.shortText(error))
        screen.setNeedsDisplay(self)
    }

    // MARK: Drawing

    /// The image rows and the caption, each padded to the cell's width (half-blocks, or blank
    /// image rows for a graphics protocol, which ``draw()`` then fills).
    func lines() -> [String] {
        let layout = screen.layout
        var lines: [String] = []
        if screen.options.graphics == .blocks, let (picture, width) = currentPicture() {
            let pad = String(repeating: " ", count: max(0, layout.cellColumns - width))
            lines = picture.lines.prefix(layout.imageRows).map { $0 + pad }
        }
        let blank = String(repeating: " ", count: layout.cellColumns)
        while lines.count < layout.imageRows { lines.append(blank) }
        lines.append(caption(width: layout.cellColumns))
        return lines
    }

    /// Escape sequences that draw the cell where the layout puts it.
    func draw() -> String {
        let (row, column) = screen.layout.origin(of: index)
        var out = ""
        for (offset, line) in lines().enumerated() { out += "\u{1B}[\(row + offset);\(column)H\u{1B}[0m" + line }
        guard screen.options.graphics != .blocks else { return out }
        if screen.options.graphics == .kitty { out += "\u{1B}_Ga=d,d=I,i=\(index + 1),q=2\u{1B}\\" }
        if let (picture, _) = currentPicture() { out += "\u{1B}[\(row);\(column)H" + picture.lines.joined() }
        return out
    }

    private func caption(width: Int) -> String {
        let text: String
        var colour = ""
        switch status {
        case .empty: text = ""
        case .loading(let fraction): text = Self.fit(name, fraction.map { "\(Int($0 * 100))%" } ?? "…", width: width)
        case .done(let size, let detail):
            text = name.count + size.count + detail.count < width ? name + " " + size + detail : Self.fit(name, size, width: width)
        case .failed(let message):
            text = "✗ " + message
            colour = "\u{1B}[31m"
        }
        let shown = String(text.prefix(width))
        return colour + shown + String(repeating: " ", count: width - shown.count) + "\u{1B}[0m"
    }

    /// The error in a few words, for a caption.
    static func shortText(_ error: ImagePipelineError) -> String {
        switch error {
        case .loadingFailed(.badStatusCode(let code)): "HTTP \(code)"
        case .loadingFailed(.timedOut): "timed out"
        case .loadingFailed(.transport): "connection failed"
        case .decodingFailed: "not an image"
        default: TerminalText.safe(error.description)
        }
    }

    /// `name suffix` in `width` columns, the name shortened with `…` so the suffix stays whole.
    static func fit(_ name: String, _ suffix: String, width: Int) -> String {
        guard name.count + 1 + suffix.count > width else { return name + " " + suffix }
        let room = width - suffix.count - 2
        return room > 0 ? name.prefix(room) + "… " + suffix : String(suffix.prefix(width))
    }

    private func currentPicture() -> (picture: TerminalPicture, width: Int)? {
        guard let source else { return nil }
        if let cached = pictures[frame] { return cached }
        let still = source.isAnimated ? source.frame(at: frame) : source
        let box = screen.pixelSize
        let fitted = still.resized(toFitWidth: box.width, height: box.height)
        let encoded = (screen.options.graphics.encoder(imageID: UInt32(index + 1)).encode(fitted, background: .black), fitted.pixelWidth)
        keep(encoded, for: frame)
        return encoded
    }

    /// An animation's pictures are kept while all of them fit in this many bytes of escape
    /// sequences (then it plays without decoding again); past it, each frame is decoded when due.
    static let pictureCacheBytes = 8 << 20

    private func keep(_ picture: (picture: TerminalPicture, width: Int), for frame: Int) {
        if cachesEveryFrame {
            picturesBytes += picture.picture.lines.reduce(0) { $0 + $1.utf8.count }
            cachesEveryFrame = picturesBytes <= Self.pictureCacheBytes
        }
        if cachesEveryFrame {
            pictures[frame] = picture
        } else {
            pictures = [frame: picture]
        }
    }

    private func forgetPictures() {
        pictures = [:]
        picturesBytes = 0
        cachesEveryFrame = true
    }

    // MARK: Animation

    /// Plays the bound animation frame by frame from its original bytes (``ShowAnimation``);
    /// a frame whose picture is kept is not decoded again. A file that breaks part-way stays on
    /// its last good frame.
    private func play(_ request: ImageRequest) {
        let pipeline = screen.pipeline
        player = Task { @MainActor [weak self] in
            guard let animation = try? await ShowAnimation.open(request, pipeline: pipeline) else { return }
            var shown = 0, completedLoops = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: animation.duration(at: shown))
                while self?.screen.paused == true, !Task.isCancelled { try? await Task.sleep(for: .milliseconds(50)) }
                guard self != nil, !Task.isCancelled else { return }
                var next = shown + 1
                if next == animation.frameCount {
                    completedLoops += 1
                    if animation.loopCount > 0 && completedLoops >= animation.loopCount { return }  // stays on the last frame
                    next = 0
                }
                if self?.pictures[next] == nil {
                    guard let still = try? await animation.frame(at: next), let self, !Task.isCancelled else { return }
                    source = still
                }
                guard let self else { return }
                shown = next
                frame = shown
                screen.setNeedsDisplay(self)
            }
        }
    }

    private func stopPlayer() {
        player?.cancel()
        player = nil
    }
}
