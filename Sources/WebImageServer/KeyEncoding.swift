/// Builds cache keys and ETag inputs as a list of named, length-prefixed fields, so that no
/// value — a source URL that ends in `&w=4`, a `process` spec with `;` in it — can imitate a
/// separator or another field: `name=LENGTH:VALUE;`, LENGTH counting UTF-8 bytes, and
/// `name=-;` for an absent value.
///
/// ```swift
/// var key = KeyEncoding("img2")
/// key.add("url", "https://example.com/a.jpg?x&w=4")
/// key.add("w", nil)
/// key.text   // "img2;url=32:https://example.com/a.jpg?x&w=4;w=-;"
/// ```
struct KeyEncoding {
    private(set) var text: String

    /// `version` names the layout: a key of another layout never equals one of this.
    init(_ version: String) { text = version + ";" }

    mutating func add(_ name: String, _ value: String?) {
        guard let value else {
            text += "\(name)=-;"
            return
        }
        text += "\(name)=\(value.utf8.count):\(value);"
    }

    /// A list as one field whose value is its items, each length-prefixed.
    mutating func add(_ name: String, list: [String]?) {
        add(name, list.map { $0.map { "\($0.utf8.count):\($0)" }.joined() })
    }
}
