import DequeModule
import Foundation
import Metrics

/// One budget for the memory decoded pixels take in a process: images in memory caches,
/// decodes and renders in flight, animation frames held.
///
/// SDWebImage, Nuke and Kingfisher cap their caches only, so many large or animated images
/// decoding at once still run a process out of memory. Here work reserves what it will allocate
/// before it allocates it (``reserve(_:waitingAtMost:)``): when the budget has no room, the
/// memory caches registered with it give memory back first (``addReclaimable(cost:reclaim:)``),
/// then the work waits, first come first served, for reservations to end — at most the time
/// given, then it is refused with ``MemoryBudgetError/overBudget(requested:limit:)``; a
/// reservation larger than the whole budget is refused at once. A reservation ends when it is
/// released or deallocated.
///
/// `webimage serve --memory-budget-mb`, `fetch` and `show` set one per process; a pipeline uses
/// the one in its configuration. The default, ``defaultLimit``, is derived from the cgroup
/// memory limit or, outside a container, from physical memory.
///
/// ```swift
/// let budget = MemoryBudget(limit: 256 << 20)
/// let reservation = try await budget.reserve(width * height * 4, waitingAtMost: .seconds(10))
/// defer { reservation.release() }
/// let image = try ImageCoderRegistry.default.decode(data)
/// ```
public final class MemoryBudget: Sendable {
    /// Bytes the budget allows.
    public let limit: Int
    private let state = Locked(State())
    private let waits = Counter(label: "webimage_memory_budget_waits_total")
    private let refusals = Counter(label: "webimage_memory_budget_refusals_total")
    private let inUseGauge = Gauge(label: "webimage_memory_budget_in_use_bytes")

    private struct Reclaimable {
        var cost: @Sendable () -> Int
        var reclaim: @Sendable (_ toCost: Int) -> Void
    }

    private struct Waiter {
        var id: UInt64
        var bytes: Int
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var reserved = 0 {
            didSet { peakReserved = max(peakReserved, reserved) }
        }
        var peakReserved = 0
        var waiting = Deque<Waiter>()
        var reclaimables: [UInt64: Reclaimable] = [:]
        var nextID: UInt64 = 0
    }

    /// A budget of `limit` bytes (at least one).
    public init(limit: Int) {
        self.limit = max(1, limit)
        Gauge(label: "webimage_memory_budget_limit_bytes").record(self.limit)
    }

    /// Half the cgroup memory limit when the process runs under one, else half of physical
    /// memory; at least 64 MB. Host memory is the fallback only: a container sees the host's.
    public static let defaultLimit: Int = defaultLimit(
        cgroupLimit: MemoryCache.cgroupMemoryLimit(), physicalMemory: Int(clamping: ProcessInfo.processInfo.physicalMemory))

    /// The default for a cgroup limit of `cgroupLimit` bytes (nil: none) and `physicalMemory`.
    public static func defaultLimit(cgroupLimit: Int?, physicalMemory: Int) -> Int {
        max((cgroupLimit ?? physicalMemory) / 2, 64 << 20)
    }

    /// The process-wide budget of ``defaultLimit`` bytes that pipelines use unless told otherwise.
    public static let shared = MemoryBudget(limit: defaultLimit)

    /// Bytes reserved now plus what the registered caches hold.
    public var inUse: Int { state.withLock { Self.used($0) } }
    /// The most bytes reserved at once so far (caches not counted).
    public var peakReserved: Int { state.withLock { $0.peakReserved } }
    /// Reservations waiting for room now.
    public var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Counts `cost` (what a cache holds now) as in use, and lets the budget call `reclaim` with
    /// a smaller cost to make room. Returns a token; the registration ends when it is released.
    public func addReclaimable(
        cost: @escaping @Sendable () -> Int, reclaim: @escaping @Sendable (_ toCost: Int) -> Void
    ) -> Registration {
        let id = state.withLock { state in
            state.nextID += 1
            state.reclaimables[state.nextID] = Reclaimable(cost: cost, reclaim: reclaim)
            return state.nextID
        }
        return Registration { [weak self] in
            guard let self else { return }
            let admitted = self.state.withLock { state in
                state.reclaimables[id] = nil
                return self.admitWaiters(&state)
            }
            for waiter in admitted { waiter.resume(returning: true) }
        }
    }

    /// Reserves `bytes`, waiting at most `timeout` for room.
    ///
    /// - Throws: ``MemoryBudgetError/overBudget(requested:limit:)`` when `bytes` is more than the
    ///   whole budget, or no room came within `timeout`; ``MemoryBudgetError/cancelled`` when the
    ///   task was cancelled while waiting.
    public func reserve(_ bytes: Int, waitingAtMost timeout: Duration) async throws(MemoryBudgetError) -> Reservation {
        let bytes = max(0, bytes)
        guard bytes <= limit else {
            refusals.increment()
            throw .overBudget(requested: bytes, limit: limit)
        }
        enum Decision { case granted, wait(UInt64) }
        let decision: Decision = state.withLock { state in
            if state.waiting.isEmpty, makeRoom(bytes, &state) {
                state.reserved += bytes
                return .granted
            }
            state.nextID += 1
            return .wait(state.nextID)
        }
        guard case .wait(let id) = decision else { return granted(bytes) }
        waits.increment()
        let admitted = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate: Bool? = state.withLock { state in
                    if Task.isCancelled { return false }
                    if state.waiting.isEmpty, makeRoom(bytes, &state) {
                        state.reserved += bytes
                        return true
                    }
                    state.waiting.append(Waiter(id: id, bytes: bytes, continuation: continuation))
                    return nil
                }
                if let immediate { return continuation.resume(returning: immediate) }
                Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    self?.giveUp(id)
                }
            }
        } onCancel: {
            giveUp(id)
        }
        guard admitted else {
            refusals.increment()
            if Task.isCancelled { throw .cancelled }
            throw .overBudget(requested: bytes, limit: limit)
        }
        return granted(bytes)
    }

    /// A handle on reserved bytes; they return to the budget on ``release()`` or when it is deallocated.
    public final class Reservation: Sendable {
        /// Bytes reserved.
        public let bytes: Int
        private let budget: MemoryBudget?
        private let released = Locked(false)

        init(bytes: Int, budget: MemoryBudget?) {
            self.bytes = bytes
            self.budget = budget
        }

        /// Returns the bytes to the budget (once; later calls do nothing).
        public func release() {
            guard !released.withLock({ done in defer { done = true }; return done }) else { return }
            budget?.end(bytes)
        }

        deinit { release() }
    }

    /// A registered cache; the registration ends on ``release()`` or when it is deallocated.
    public final class Registration: Sendable {
        private let end: Locked<(@Sendable () -> Void)?>
        init(_ end: @escaping @Sendable () -> Void) { self.end = Locked(end) }
        public func release() { end.withLock { $0.take() }?() }
        deinit { release() }
    }

    /// What decoding an image of `header` with `options` allocates, in bytes: 4 per pixel of
    /// every frame kept (canvas-sized), at full size — or, for a thumbnail of a JPEG or WebP,
    /// which decode at a reduced scale, at most twice the thumbnail's side — plus the thumbnail.
    public static func bytes(toDecode header: ImageHeader, options: ImageDecodingOptions) -> Int {
        let frames = options.framesToDecode(of: header.frameCount)
        var area = area(header.pixelWidth, header.pixelHeight)
        if let side = options.thumbnailMaxPixelSize {
            func fitted(_ side: Int) -> Int {
                let size = Resampler.fittingSize(width: header.pixelWidth, height: header.pixelHeight, maxWidth: side, maxHeight: side)
                return Self.area(size.width, size.height)
            }
            if header.format == .jpeg || header.format == .webp { area = fitted(side > Int.max / 2 ? .max : side * 2) }
            let (sum, overflow) = area.addingReportingOverflow(fitted(side))
            area = overflow ? .max : sum
        }
        let (bytes, overflow) = area.multipliedReportingOverflow(by: 4 * max(frames, 1))
        return overflow ? .max : bytes
    }

    /// `width × height` (negative sides count as 0), `Int.max` when that overflows.
    package static func area(_ width: Int, _ height: Int) -> Int {
        let (product, overflow) = max(width, 0).multipliedReportingOverflow(by: max(height, 0))
        return overflow ? .max : product
    }

    // MARK: - Internals

    private func granted(_ bytes: Int) -> Reservation {
        inUseGauge.record(inUse)
        return Reservation(bytes: bytes, budget: self)
    }

    private func end(_ bytes: Int) {
        let admitted = state.withLock { state in
            state.reserved -= bytes
            return admitWaiters(&state)
        }
        for waiter in admitted { waiter.resume(returning: true) }
        inUseGauge.record(inUse)
    }

    /// The waiter `id` stops waiting (its time is up, or it was cancelled), if it still waits.
    private func giveUp(_ id: UInt64) {
        let waiter: Waiter? = state.withLock { state in
            guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiting.remove(at: index)
        }
        waiter?.continuation.resume(returning: false)
    }

    /// The waiters at the head of the line that fit now, their bytes reserved.
    private func admitWaiters(_ state: inout State) -> [CheckedContinuation<Bool, Never>] {
        var admitted: [CheckedContinuation<Bool, Never>] = []
        while let first = state.waiting.first, makeRoom(first.bytes, &state) {
            state.reserved += first.bytes
            admitted.append(state.waiting.removeFirst().continuation)
        }
        return admitted
    }

    /// Whether `bytes` more fit, after asking the caches to give back what is missing.
    private func makeRoom(_ bytes: Int, _ state: inout State) -> Bool {
        var used = Self.used(state)
        guard used + bytes > limit else { return true }
        for reclaimable in state.reclaimables.values {
            let cost = reclaimable.cost()
            guard cost > 0 else { continue }
            reclaimable.reclaim(max(0, cost - (used + bytes - limit)))
            used = Self.used(state)
            if used + bytes <= limit { return true }
        }
        return false
    }

    private static func used(_ state: State) -> Int {
        state.reclaimables.values.reduce(state.reserved) { $0 + $1.cost() }
    }
}

/// Why the ``MemoryBudget`` refused a reservation.
public enum MemoryBudgetError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No room for `requested` bytes within the wait allowed (or more than the whole `limit`).
    case overBudget(requested: Int, limit: Int)
    /// The task was cancelled while it waited.
    case cancelled

    public var description: String {
        switch self {
        case let .overBudget(requested, limit): "\(requested) bytes do not fit the memory budget of \(limit) bytes"
        case .cancelled: "cancelled while waiting for memory"
        }
    }
}
