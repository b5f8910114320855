extension ImagePipeline {
    /// Registers what the pipeline keeps in memory outside any load with its budget, as
    /// reclaimable: the memory cache (a ``MemoryCache``), the memory data cache (a
    /// ``MemoryDataCache``) and the downloader's bytes of interrupted bodies kept for a resume.
    /// Their bytes count as in use, and the budget trims them, least recently used first, before
    /// work waits. Each is registered with its object as owner, so two pipelines sharing one
    /// cache or downloader count it once.
    static func registerCaches(of configuration: Configuration) -> [MemoryBudget.Registration] {
        guard let budget = configuration.memoryBudget else { return [] }
        var registrations: [MemoryBudget.Registration] = []
        if let cache = configuration.memoryCache as? MemoryCache {
            registrations.append(budget.addReclaimable(
                owner: ObjectIdentifier(cache), cost: { [weak cache] in cache?.totalCost ?? 0 }, reclaim: { [weak cache] cost in cache?.trim(toCost: cost) }))
        }
        if let data = configuration.memoryDataCache as? MemoryDataCache {
            registrations.append(budget.addReclaimable(
                owner: ObjectIdentifier(data), cost: { [weak data] in data?.totalCost ?? 0 }, reclaim: { [weak data] cost in data?.trim(toCost: cost) }))
        }
        let resumables = configuration.downloader.resumables
        registrations.append(budget.addReclaimable(
            owner: ObjectIdentifier(resumables), cost: { [weak resumables] in resumables?.totalBytes ?? 0 }, reclaim: { [weak resumables] cost in resumables?.trim(toBytes: cost) }))
        return registrations
    }
}
