extension MemoryBudget {
    /// The budget as the downloader sees it: a body reserves ``Use/encoded`` bytes before they
    /// are read, waiting at most `wait` (the pipeline's ``ImagePipeline/Configuration/memoryBudgetWait``).
    struct Bodies: BodyMemoryReserving {
        let budget: MemoryBudget
        let wait: Duration
        let bodyLease: Duration

        var bodyLimit: Int { budget.limit }

        func reserveBody(_ bytes: Int, holding: Int) async throws(ImageDownloadError) -> any BodyMemoryHolding {
            do {
                if holding > 0 { return try budget.reserveNow(bytes, for: .encoded, holding: holding) }
                return try await budget.reserve(bytes, waitingAtMost: wait, for: .encoded)
            } catch {
                guard case .overBudget(let requested, let limit) = error else { throw .cancelled }
                throw .overMemoryBudget(requested: requested, limit: limit)
            }
        }
    }
}

extension MemoryBudget.Reservation: BodyMemoryHolding {}

extension MemoryBudget {
    /// The bytes the reservations among `holds` reserve.
    static func heldBytes(_ holds: [any AnyObject & Sendable]) -> Int {
        holds.reduce(0) { $0 + (($1 as? Reservation)?.bytes ?? 0) }
    }
}

extension ImagePipeline {
    /// The memory budget for bodies this pipeline downloads, if it has a budget.
    var bodyMemory: MemoryBudget.Bodies? {
        configuration.memoryBudget.map {
            MemoryBudget.Bodies(budget: $0, wait: configuration.memoryBudgetWait, bodyLease: configuration.memoryBudgetBodyLease)
        }
    }

    /// Counts `bytes` of original data read into memory (from the disk cache) against the budget,
    /// waiting for room as a decode does; held as long as the returned value is.
    func holdEncoded(_ bytes: Int) async throws(ImagePipelineError) -> [any AnyObject & Sendable] {
        guard let budget = configuration.memoryBudget, bytes > 0 else { return [] }
        do {
            return [try await budget.reserve(bytes, waitingAtMost: configuration.memoryBudgetWait, for: .encoded)]
        } catch {
            throw error == .cancelled ? .cancelled : .overBudget(error)
        }
    }

    /// Room for `size` bytes a cache's index reports, before they are read. A size no budget of
    /// this pipeline could hold (a damaged or foreign index row) reserves nothing here: the read
    /// checks the file against it (a mismatch is a damaged entry, so a miss), and what is read is
    /// reserved after the read, as for a cache that reports no size.
    func holdEncoded(beforeReading size: Int?) async throws(ImagePipelineError) -> [any AnyObject & Sendable] {
        guard let size, let budget = configuration.memoryBudget, size <= budget.limit else { return [] }
        return try await holdEncoded(size)
    }

    /// `holds`, made for the size a cache's index reported before the read, fitted to the
    /// `bytes` read: shrunk, or grown by the difference (waiting, while holding what was read, only
    /// when another process replaced the entry between the index's answer and the read).
    func holdEncoded(_ bytes: Int, adjusting holds: [any AnyObject & Sendable]) async throws(ImagePipelineError) -> [any AnyObject & Sendable] {
        let held = MemoryBudget.heldBytes(holds)
        if bytes > held { return holds + (try await holdEncoded(bytes - held)) }
        if bytes < held, let reservation = holds.first as? MemoryBudget.Reservation { reservation.shrink(to: bytes) }
        return holds
    }
}
