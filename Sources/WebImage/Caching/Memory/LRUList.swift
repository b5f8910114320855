/// Keys in recency order, with O(1) touch, insert and removal.
///
/// Nodes live in one array and link by index, so a touch moves no memory and retains no
/// objects; freed slots are reused.
struct LRUList<Key: Hashable> {
    private struct Node {
        var key: Key?
        var prev = -1
        var next = -1
    }

    private var nodes: [Node] = []
    private var free: [Int] = []
    private var head = -1  // most recent
    private var tail = -1  // least recent

    /// Inserts `key` as most recent; returns its slot.
    mutating func insert(_ key: Key) -> Int {
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            nodes[slot] = Node(key: key)
        } else {
            slot = nodes.count
            nodes.append(Node(key: key))
        }
        linkFront(slot)
        return slot
    }

    /// Marks `slot` most recent.
    mutating func touch(_ slot: Int) {
        guard slot != head else { return }
        unlink(slot)
        linkFront(slot)
    }

    mutating func remove(_ slot: Int) {
        unlink(slot)
        nodes[slot] = Node()
        free.append(slot)
    }

    /// The least recently used key.
    var leastRecent: (key: Key, slot: Int)? {
        guard tail >= 0, let key = nodes[tail].key else { return nil }
        return (key, tail)
    }

    mutating func removeAll() {
        nodes.removeAll()
        free.removeAll()
        head = -1
        tail = -1
    }

    private mutating func linkFront(_ slot: Int) {
        nodes[slot].prev = -1
        nodes[slot].next = head
        if head >= 0 { nodes[head].prev = slot }
        head = slot
        if tail < 0 { tail = slot }
    }

    private mutating func unlink(_ slot: Int) {
        let node = nodes[slot]
        if node.prev >= 0 { nodes[node.prev].next = node.next } else { head = node.next }
        if node.next >= 0 { nodes[node.next].prev = node.prev } else { tail = node.prev }
    }
}
