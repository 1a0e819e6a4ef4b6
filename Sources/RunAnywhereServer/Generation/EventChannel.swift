import Foundation
import RunAnywhere

/// Hands a generation's events from its task to the HTTP thread that answers the request. The producer never
/// waits; the consumer (a libmicrohttpd connection thread, never a Swift concurrency thread) waits with a timeout,
/// so that it can look at its client between events.
final class EventChannel: @unchecked Sendable {
    /// One event of a generation.
    enum Item: Sendable {
        /// More text.
        case text(String)
        /// The end, with the result.
        case completed(GenerationResult)
        /// The end, with why it failed.
        case failed(APIError)
    }

    // NSCondition guards `items`, `head` and `ended`; every access holds it (hence @unchecked Sendable).
    private let condition = NSCondition()
    private var items: [Item] = []
    private var head = 0
    private var ended = false

    /// Adds an event (ignored once the channel has ended).
    func push(_ item: Item) {
        condition.lock()
        defer { condition.unlock() }
        guard !ended else { return }
        if case .text = item {} else { ended = true }
        items.append(item)
        condition.signal()
    }

    /// The next event, or nil when none came within `timeout` seconds.
    func next(timeout: TimeInterval) -> Item? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while head == items.count {
            if !condition.wait(until: deadline) { return nil }
        }
        let item = items[head]
        head += 1
        if head > 64, head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }
}
