import Foundation

/// The S3 loader's current credentials. Fixed keys are used as given. Temporary ones are fetched
/// on first use; once less than ``refreshMargin`` of their life is left, a request starts one
/// refresh in the background and goes on with the keys it has, as long as they have not expired.
/// Only a request that finds no valid keys waits, for the one fetch in flight. A failed fetch is
/// not tried again for ``retryDelay`` (requests in that time get the old keys while they last,
/// else the error), so a metadata service that is down costs one fetch per interval, not one per
/// request.
actor S3CredentialCache {
    let source: S3CredentialSource
    /// AWS's SDKs refresh five minutes before the expiry; a role's credentials live an hour or more.
    static let refreshMargin: TimeInterval = 300
    static let retryDelay: TimeInterval = 15
    private var current: S3Credentials?
    private var refresh: Task<Result<S3Credentials, S3SourceError>, Never>?
    private var lastFailure: (at: Date, error: S3SourceError)?
    /// When the current keys are refreshed (``refreshTime(expiring:now:)``).
    private var refreshAfter: Date?

    init(_ source: S3CredentialSource, seed: S3Credentials? = nil) {
        self.source = source
        current = seed
        refreshAfter = seed?.expiration.map { Self.refreshTime(expiring: $0, now: .now) }
    }

    func credentials() async throws(S3SourceError) -> S3Credentials {
        if case .keys(let keys) = source { return keys }
        let now = Date.now
        if let current, Self.isValid(current, at: now) {
            if let refreshAfter, now >= refreshAfter { _ = startRefresh(now: now) }
            return current
        }
        if let (at, error) = lastFailure, refresh == nil, now.timeIntervalSince(at) < Self.retryDelay { throw error }
        guard let task = startRefresh(now: now) else { throw lastFailure?.error ?? .credentialsUnavailable("no credentials") }
        let outcome = await task.value
        if let current, Self.isValid(current, at: .now) { return current }
        return try outcome.get()
    }

    /// The fetch in flight, or a new one unless the last failure was under ``retryDelay`` ago.
    private func startRefresh(now: Date) -> Task<Result<S3Credentials, S3SourceError>, Never>? {
        if let refresh { return refresh }
        if let (at, _) = lastFailure, now.timeIntervalSince(at) < Self.retryDelay { return nil }
        let source = self.source
        // Detached: the fetch belongs to no one request (nor to its trace or its cancellation).
        let task = Task.detached { () -> Result<S3Credentials, S3SourceError> in
            do throws(S3SourceError) { return .success(try await S3CredentialFetch.credentials(from: source)) } catch { return .failure(error) }
        }
        refresh = task
        Task { await self.finish(task) }
        return task
    }

    private func finish(_ task: Task<Result<S3Credentials, S3SourceError>, Never>) async {
        let outcome = await task.value
        if refresh == task { refresh = nil }
        switch outcome {
        case .success(let fresh):
            current = fresh
            lastFailure = nil
            refreshAfter = fresh.expiration.map { Self.refreshTime(expiring: $0, now: .now) }
        case .failure(let error):
            lastFailure = (.now, error)
        }
    }

    /// ``refreshMargin`` before `expiration`; keys handed out with less life than that left are
    /// kept for half of it, at most a minute (else they would be fetched again at every request).
    static func refreshTime(expiring expiration: Date, now: Date) -> Date {
        let early = expiration.addingTimeInterval(-refreshMargin)
        return early > now ? early : now.addingTimeInterval(min(60, max(0, expiration.timeIntervalSince(now)) / 2))
    }

    static func isValid(_ credentials: S3Credentials, at now: Date) -> Bool {
        credentials.expiration.map { $0 > now } ?? true
    }

}
