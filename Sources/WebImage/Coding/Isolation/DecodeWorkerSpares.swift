/// One worker started ahead of its request for each worker configuration, so that an isolated
/// decode does not wait for a process to start: a `webimage` worker's start (the dynamic loader
/// and page faults of a large binary, about 19 ms) and its codec libraries' loading (libavif,
/// libheif and libjxl bring about thirty shared objects) happen while the spare waits, not while a
/// render does. Measured (`scripts/measure/measure-isolation`): a 2 MP AVIF render cost 58 ms
/// isolated against 24 ms in the process when each decode started its worker.
///
/// A spare waits on its input, using no CPU; when the server exits, its end of the socket closes
/// and the spare, reading the end of its input, exits too.
enum DecodeWorkerSpares {
    private static let spares = Locked<[DecodeIsolation.Worker: DecodeWorkerProcess]>([:])

    /// A running worker for `worker`: the spare, else a new one.
    static func take(_ worker: DecodeIsolation.Worker, format: ImageFormat) throws(ImageDecodingError) -> DecodeWorkerProcess {
        if let spare = spares.withLock({ $0.removeValue(forKey: worker) }), spare.isRunning { return spare }
        return try DecodeWorkerProcess(worker, format: format)
    }

    /// Starts a spare for `worker` unless one waits. Called once a decode has ended, so that the
    /// spare's start (about 40 ms of CPU with its codec libraries) does not compete with that
    /// decode for a core.
    static func replenish(_ worker: DecodeIsolation.Worker, format: ImageFormat) {
        guard spares.withLock({ $0[worker] == nil }), let next = try? DecodeWorkerProcess(worker, format: format) else { return }
        // Another decode may have put one back meanwhile: the extra one ends with its last reference.
        let extra = spares.withLock { table -> DecodeWorkerProcess? in
            guard table[worker] == nil else { return next }
            table[worker] = next
            return nil
        }
        extra?.stop()
    }
}
