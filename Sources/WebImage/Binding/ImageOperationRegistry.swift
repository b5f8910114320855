/// The running loads of every ``ImageTarget``, one per (target, operation key) — SDWebImage's
/// `sd_operationDictionary` and AlamofireImage's "active request receipt", kept beside the
/// targets instead of in associated objects.
///
/// Starting a load for a slot cancels the slot's previous load and bumps the slot's
/// *generation*; a load delivers to its target only while its generation is the slot's current
/// one, so a late result for an old request never lands, whatever order completions arrive in.
/// Targets are held weakly: a slot whose target is gone is cancelled and dropped.
///
/// ```swift
/// let registry = ImageOperationRegistry.shared
/// cell.setImage(with: request)                    // registered under ImageOperationKey.image
/// registry.imageTask(for: cell)?.priority = .high // the user is looking at it
/// registry.cancel(cell)                           // the cell scrolled away
/// ```
@MainActor
public final class ImageOperationRegistry {
    /// The registry ``ImageTarget/setImage(with:placeholder:options:operationKey:failureImage:transition:registry:pipeline:progress:completed:)`` uses unless given another.
    public static let shared = ImageOperationRegistry()

    private struct SlotKey: Hashable {
        let target: ObjectIdentifier
        let key: String
    }

    private struct Slot {
        weak var target: AnyObject?
        var generation: UInt64
        var operation: BindingOperation?
    }

    private var slots: [SlotKey: Slot] = [:]
    private var nextGeneration: UInt64 = 0
    private var sweepAt = 64

    public init() {}

    /// Loads currently running, over all targets and keys.
    public var runningCount: Int { slots.values.count { $0.operation != nil && $0.target != nil } }

    /// Whether `target` has a load running under `key`.
    public func isLoading(_ target: any ImageTarget, key: String = ImageOperationKey.image) -> Bool {
        slot(target, key)?.operation != nil
    }

    /// The image task running for `target` under `key`, to change its priority.
    public func imageTask(for target: any ImageTarget, key: String = ImageOperationKey.image) -> ImageTask? {
        slot(target, key)?.operation?.imageTask
    }

    /// Cancels `target`'s load under `key`; nothing more of it is delivered.
    public func cancel(_ target: any ImageTarget, key: String = ImageOperationKey.image) {
        _ = begin(target, key: key)
    }

    /// Starts a new generation for the slot: cancels its running load and returns the
    /// generation the new load must carry.
    func begin(_ target: AnyObject, key: String) -> UInt64 {
        let slotKey = SlotKey(target: ObjectIdentifier(target), key: key)
        slots[slotKey]?.operation?.cancel()
        if slots.count >= sweepAt { sweep() }
        nextGeneration += 1
        slots[slotKey] = Slot(target: target, generation: nextGeneration, operation: nil)
        return nextGeneration
    }

    /// Records the load of `generation`, unless a newer one has begun meanwhile.
    func attach(_ operation: BindingOperation, to target: AnyObject, key: String, generation: UInt64) {
        let slotKey = SlotKey(target: ObjectIdentifier(target), key: key)
        guard isCurrent(target, key: key, generation: generation) else { return operation.cancel() }
        slots[slotKey]?.operation = operation
    }

    /// Whether `generation` is still the slot's current load — the stale-result guard.
    func isCurrent(_ target: AnyObject, key: String, generation: UInt64) -> Bool {
        guard let slot = slots[SlotKey(target: ObjectIdentifier(target), key: key)] else { return false }
        return slot.generation == generation && slot.target === target
    }

    /// The load of `generation` is over: its slot no longer holds it.
    func finish(_ target: AnyObject, key: String, generation: UInt64) {
        guard isCurrent(target, key: key, generation: generation) else { return }
        slots[SlotKey(target: ObjectIdentifier(target), key: key)]?.operation = nil
    }

    private func slot(_ target: AnyObject, _ key: String) -> Slot? {
        guard let slot = slots[SlotKey(target: ObjectIdentifier(target), key: key)], slot.target === target else { return nil }
        return slot
    }

    /// Drops slots whose target is gone (cancelling their loads) and idle slots.
    private func sweep() {
        for (key, slot) in slots where slot.target == nil || slot.operation == nil {
            slot.operation?.cancel()
            slots[key] = nil
        }
        sweepAt = max(64, slots.count * 2)
    }
}
