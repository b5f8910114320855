/// A format's decoder walking an animation forward, one composited frame at a time: the part of
/// an animated decoder that owns the codec state. Both the full decode (every frame, in order)
/// and ``AnimationPlayhead`` (frames on demand) drive it, so their frames are the same.
///
/// Not `Sendable`: it lives inside one decode call, or behind the lock of one animated decoder.
protocol FrameSequencing {
    /// The index of the frame ``next()`` gives (frames given since the start, or since a rewind's target).
    var position: Int { get }
    /// The next composited frame, or `nil` when the animation ends here (its data ends, or a
    /// lenient decode stopped at damaged data).
    mutating func next() throws(ImageDecodingError) -> ImageFrame?
    /// Goes back so that ``position`` is at most `index`: to the start, or to a frame that does
    /// not depend on earlier ones.
    mutating func rewind(toAtMost index: Int) throws(ImageDecodingError)
    /// What a lenient decode forgave in the frames given so far.
    var repairs: ImageRepairs { get }
}

extension FrameSequencing {
    /// Nothing forgiven: a format whose frames break or decode whole.
    var repairs: ImageRepairs { [] }

    /// Up to `limit` frames from the current position, in order (what a full decode keeps).
    mutating func frames(limit: Int) throws(ImageDecodingError) -> [ImageFrame] {
        var frames: [ImageFrame] = []
        while frames.count < limit, let frame = try next() {
            guard !Task.isCancelled else { throw .cancelled }
            frames.append(frame)
        }
        return frames
    }
}

/// Frames on demand over a ``FrameSequencing``, the shared part of the animated decoders:
/// decodes forward to the frame asked for, rewinds when asked for an earlier one, and keeps the
/// last frame given so asking twice costs nothing. The codec state is reached only under the lock.
final class AnimationPlayhead<Frames: FrameSequencing>: Sendable {
    private struct State {
        var frames: Frames
        var last: (index: Int, frame: ImageFrame)?
    }

    let format: ImageFormat
    /// Every frame's duration, read up front.
    let durations: [Duration]
    private let state: Locked<State>

    init(_ frames: sending Frames, format: ImageFormat, durations: [Duration]) {
        self.format = format
        self.durations = durations
        state = Locked(State(frames: frames))
    }

    /// What a lenient decode forgave in the frames decoded so far.
    var repairs: ImageRepairs { state.withLock { $0.frames.repairs } }

    func duration(at index: Int) -> Duration {
        precondition(durations.indices.contains(index), "frame \(index) of \(durations.count)")
        return durations[index]
    }

    func frame(at index: Int) throws(ImageDecodingError) -> ImageFrame {
        precondition(durations.indices.contains(index), "frame \(index) of \(durations.count)")
        let format = format
        return try state.withLock { state throws(ImageDecodingError) -> ImageFrame in
            if let last = state.last, last.index == index { return last.frame }
            if index < state.frames.position { try state.frames.rewind(toAtMost: index) }
            while true {
                let position = state.frames.position
                guard let frame = try state.frames.next() else {
                    throw .corrupt(format: format, reason: "the data ends or breaks before frame \(index)")
                }
                if position == index {
                    state.last = (index, frame)
                    return frame
                }
            }
        }
    }
}
