/// Five request priorities, as Nuke and SDWebImage use them. Higher runs first.
public enum RequestPriority: Int, Sendable, Comparable, CaseIterable, Hashable {
    case veryLow, low, normal, high, veryHigh

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
