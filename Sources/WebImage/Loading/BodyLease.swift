/// A declared body's reservation: its whole `Content-Length` while the lease lasts, then only the
/// bytes that have arrived.
///
/// Reserving the declared length up front means a body, once started, never fails for want of
/// room, and bodies together stay within the budget's share for them. But a source that declares
/// 50 MB and then sends a byte a second would hold 50 MB it never fills until the fetch times
/// out, and five of them would keep every other body waiting. So the guarantee is a lease: when
/// it ends, the part not yet received goes back to the budget, and the body grows from then on in
/// steps granted from free room, as a body of unknown length does. A source must send bytes to
/// hold memory past its lease.
final class BodyLease: Sendable {
    private struct State {
        var received = 0
        var ended = false
    }

    let hold: any BodyMemoryHolding
    private let state = Locked(State())

    init(_ hold: any BodyMemoryHolding) { self.hold = hold }

    /// Records that `count` bytes of the body are in (before they are stored); returns what the
    /// lease holds now, read in step with ``end()``.
    func arrived(_ count: Int) -> Int {
        state.withLock { state in
            state.received = max(state.received, count)
            return hold.bytes
        }
    }

    /// Ends the guarantee: the bytes not yet received go back to the budget.
    func end() {
        state.withLock { state in
            guard !state.ended else { return }
            state.ended = true
            hold.shrink(to: state.received)
        }
    }

    /// Ends the lease after `duration`, unless the returned task is cancelled first.
    func ending(after duration: Duration) -> Task<Void, Never> {
        Task { [weak self] in
            guard (try? await Task.sleep(for: duration)) != nil else { return }
            self?.end()
        }
    }
}
