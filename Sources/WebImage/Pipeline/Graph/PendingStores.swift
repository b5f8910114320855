import Synchronization

/// Cache writes the pipeline did not wait for (no ``ImageLoadingOptions/waitStoreCache``):
/// tracked so that ``ImagePipeline/flushPendingStores()`` can wait for them, as a command-line
/// tool must before it exits.
final class PendingStores: Sendable {
    private let tasks = Locked<[UInt64: Task<Void, Never>]>([:])
    private let ids = Atomic<UInt64>(0)

    func run(_ store: @escaping @Sendable () async -> Void) {
        let id = ids.add(1, ordering: .relaxed).newValue
        tasks.withLock { tasks in
            tasks[id] = Task.detached(priority: .utility) { [weak self] in
                await store()
                _ = self?.tasks.withLock { $0.removeValue(forKey: id) }
            }
        }
    }

    func waitForAll() async {
        while true {
            let pending = tasks.withLock { Array($0.values) }
            if pending.isEmpty { return }
            for task in pending { await task.value }
        }
    }
}
