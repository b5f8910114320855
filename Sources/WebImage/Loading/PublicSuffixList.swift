internal import CPsl

/// The Public Suffix List: the domains under which anyone may register a name (`com`, `co.uk`,
/// `github.io`), which no site may set a cookie for. Read with libpsl — the list curl and wget
/// use — from the newer of its built-in copy and Debian's `publicsuffix` file.
///
/// ```swift
/// PublicSuffixList.isPublicSuffix("co.uk")         // true
/// PublicSuffixList.isPublicSuffix("example.co.uk") // false
/// ```
enum PublicSuffixList {
    /// libpsl's list, loaded once. `@unchecked`: the pointer is set once, in `init`, and never
    /// freed; libpsl's look-ups only read a loaded list and are thread-safe (its documentation).
    private final class Context: @unchecked Sendable {
        let list: OpaquePointer?
        init() { list = psl_latest(nil) ?? psl_builtin() }
    }
    private static let context = Context()

    /// Whether `domain` (lower case, no leading dot) is a public suffix, ICANN's or a private
    /// registry's; a single label always is (the list's `*` rule). Without a list (libpsl found
    /// neither copy), every domain is, so that a cookie stays with the host that set it.
    static func isPublicSuffix(_ domain: String) -> Bool {
        guard let list = context.list else { return true }
        return psl_is_public_suffix2(list, domain, Int32(PSL_TYPE_ANY)) != 0
    }
}
