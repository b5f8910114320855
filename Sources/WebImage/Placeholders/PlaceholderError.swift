/// Why a placeholder hash could not be computed or decoded.
///
/// Hash strings come from strangers (an API response, a database row): every way one can be
/// wrong is one of these cases, never a crash.
///
/// ```swift
/// do { _ = try BlurHash("not a hash") } catch let error as PlaceholderError { print(error) }
/// ```
public enum PlaceholderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// BlurHash components outside 1…9 on an axis.
    case invalidComponents(x: Int, y: Int)
    /// The hash is not as long as its header says it must be.
    case invalidLength(expected: Int, actual: Int)
    /// A character outside BlurHash's base-83 alphabet (or bad base64 for a ThumbHash).
    case invalidCharacter(String)
    /// A field decodes to a value its format cannot hold.
    case invalidValue(String)
    /// A requested output size outside 1…`limit` pixels a side.
    case invalidSize(width: Int, height: Int, limit: Int)
    /// The image has no pixels to hash.
    case emptyImage
    /// The image's buffers cannot hold what it says it is (``Image/bufferProblem``).
    case unusableImage(String)

    public var description: String {
        switch self {
        case let .invalidComponents(x, y): "BlurHash components \(x) × \(y): each must be 1…9"
        case let .invalidLength(expected, actual): "hash is \(actual) long, its header needs \(expected)"
        case let .invalidCharacter(character): "hash has a character outside its alphabet: \(character.debugDescription)"
        case let .invalidValue(reason): "hash holds an impossible value: \(reason)"
        case let .invalidSize(width, height, limit): "placeholder size \(width) × \(height): each side must be 1…\(limit)"
        case .emptyImage: "the image has no pixels"
        case let .unusableImage(problem): "cannot hash this image: \(problem)"
        }
    }
}
