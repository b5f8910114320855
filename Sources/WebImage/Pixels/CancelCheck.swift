/// Looks at `Task.isCancelled` after a fixed amount of pixel work, whatever shape the work has.
///
/// A look every *n* output rows stops quickly only while an output row costs little: a resize of
/// 49 MP to one row reads the whole source before its first look, and a pixelation whose block is
/// the image's height is one unit of work (red team, stop 53: 2–3 s of CPU after a `504` in a
/// debug build). Loops count what they touch (pixels read or written) and look every
/// ``interval`` of it: about a millisecond of work in a release build.
///
/// ```swift
/// var check = CancelCheck()
/// for row in rows { if check.stops(after: width) { break }; … }
/// ```
struct CancelCheck {
    /// Pixels of work between two looks at the cancel.
    static let interval = 1 << 18
    private var spent = 0

    init() {}

    /// Counts `units` of work done; `true` when, at a look, the task is cancelled.
    mutating func stops(after units: Int) -> Bool {
        spent = spent &+ max(units, 1)
        guard spent >= Self.interval else { return false }
        spent = 0
        return Task.isCancelled
    }
}
