extension ImageProcessors {
    /// Where a crop window sits inside a larger picture: the centre, one of the eight compass
    /// points, or a focal point in 0–1 coordinates of the picture (`(0, 0)` is the top left),
    /// which the window is centred on as far as the picture's edges allow, or ``smart``: the
    /// window that holds the most attention (``ImageProcessors/SmartCrop``). imgproxy's `gravity`
    /// (`ce`, `no`, `so`, `ea`, `we`, `noea`, `nowe`, `soea`, `sowe`, `fp:X:Y`, `sm`).
    ///
    /// ```swift
    /// let top = try image.processed(by: [.resize(width: 400, height: 100, mode: .fill, gravity: .north)])
    /// let interesting = try image.processed(by: [.resize(width: 256, height: 256, mode: .fill, gravity: .smart)])
    /// let face = try image.processed(by: [.resize(width: 256, height: 256, mode: .fill, gravity: .focalPoint(x: 0.3, y: 0.25))])
    /// ```
    public enum Gravity: Sendable, Hashable {
        case center, north, south, east, west, northEast, northWest, southEast, southWest
        /// A point in 0–1 coordinates; values outside are taken as the nearest edge.
        case focalPoint(x: Double, y: Double)
        /// The window where the picture's detail, colour and skin tones are
        /// (``ImageProcessors/SmartCrop``), chosen from the pixels; placing a window without
        /// them (`origin(keep:total:)`) or on something other than a crop takes the centre.
        /// Each frame of an animation processed frame by frame chooses its own window.
        case smart

        /// imgproxy's short names of the centre and the compass points (`ce`, `no`, `noea`, …).
        public static let compassNames: [String: Gravity] = [
            "ce": .center, "no": .north, "so": .south, "ea": .east, "we": .west,
            "noea": .northEast, "nowe": .northWest, "soea": .southEast, "sowe": .southWest,
        ]

        /// A stable name for identifiers and cache keys (`ce`, `noea`, `fp:0.3:0.25`, `sm`).
        public var identifier: String {
            switch self {
            case let .focalPoint(x, y): "fp:\(identifierNumber(x)):\(identifierNumber(y))"
            case .smart: "sm"
            default: Self.compassNames.first { $0.value == self }!.key
            }
        }

        /// ``origin(keep:total:)`` moved by `offset` pixels: inwards from the edge a compass
        /// point names (an east gravity moves left for a positive x, a south one up for a
        /// positive y), right and down otherwise; kept inside `total`. Arithmetic saturates, so
        /// any offset is safe.
        func origin(keep: (width: Int, height: Int), total: (width: Int, height: Int), offset: (x: Int, y: Int)) -> (x: Int, y: Int) {
            let at = origin(keep: keep, total: total)
            let free = (x: max(total.width - keep.width, 0), y: max(total.height - keep.height, 0))
            let east = [Gravity.east, .northEast, .southEast].contains(self), south = [Gravity.south, .southEast, .southWest].contains(self)
            func moved(_ start: Int, by offset: Int, inwardsFromEnd: Bool, free: Int) -> Int {
                let delta = inwardsFromEnd ? (offset == .min ? .max : -offset) : offset
                let (sum, overflow) = start.addingReportingOverflow(delta)
                return min(max(overflow ? (delta > 0 ? free : 0) : sum, 0), free)
            }
            return (moved(at.x, by: offset.x, inwardsFromEnd: east, free: free.x), moved(at.y, by: offset.y, inwardsFromEnd: south, free: free.y))
        }

        /// The top left corner of a `keep` window within a `total` picture, inside it (``smart``,
        /// which needs the pixels, is the centre here).
        func origin(keep: (width: Int, height: Int), total: (width: Int, height: Int)) -> (x: Int, y: Int) {
            let free = (x: max(total.width - keep.width, 0), y: max(total.height - keep.height, 0))
            func place(_ side: Int, _ free: Int, start: Bool, end: Bool, focus: Double?) -> Int {
                if let focus {
                    let f = focus.isNaN ? 0.5 : min(max(focus, 0), 1)
                    let wanted = (f * Double(side + free) - Double(side) / 2).rounded()
                    return Int(min(max(wanted, 0), Double(free)))
                }
                return start ? 0 : end ? free : free / 2
            }
            switch self {
            case let .focalPoint(fx, fy):
                return (place(keep.width, free.x, start: false, end: false, focus: fx),
                        place(keep.height, free.y, start: false, end: false, focus: fy))
            default:
                let west = [Gravity.west, .northWest, .southWest].contains(self), east = [Gravity.east, .northEast, .southEast].contains(self)
                let north = [Gravity.north, .northEast, .northWest].contains(self), south = [Gravity.south, .southEast, .southWest].contains(self)
                return (place(keep.width, free.x, start: west, end: east, focus: nil),
                        place(keep.height, free.y, start: north, end: south, focus: nil))
            }
        }
    }
}
