import Foundation

/// The S3 loader's current credentials: fixed keys as given; temporary ones fetched on first use
/// and again once less than ``refreshMargin`` of their life is left, by one fetch however many
/// requests need them at once. A failed refresh keeps using the old credentials while they last
/// (the AWS SDKs do the same), and is tried again by the next request.
actor S3CredentialCache {
    let source: S3CredentialSource
    /// AWS's SDKs refresh five minutes before the expiry; a role's credentials live an hour or more.
    static let refreshMargin: TimeInterval = 300
    private var current: S3Credentials?
    private var refresh: Task<S3Credentials, any Error>?

    init(_ source: S3CredentialSource) { self.source = source }

    func credentials(now: Date = .now) async throws(S3SourceError) -> S3Credentials {
        if case .keys(let keys) = source { return keys }
        if let current, !Self.needsRefresh(current, now: now) { return current }
        let task: Task<S3Credentials, any Error>
        if let refresh { task = refresh } else {
            let source = self.source
            task = Task { try await S3CredentialFetch.credentials(from: source) }
            refresh = task
        }
        do {
            let fresh = try await task.value
            if refresh == task { refresh = nil }
            current = fresh
            return fresh
        } catch {
            if refresh == task { refresh = nil }
            if let current, let expiration = current.expiration, expiration > now { return current }
            throw error as? S3SourceError ?? .credentialsUnavailable("\(error)")
        }
    }

    static func needsRefresh(_ credentials: S3Credentials, now: Date) -> Bool {
        guard let expiration = credentials.expiration else { return false }
        return expiration.timeIntervalSince(now) < refreshMargin
    }
}
