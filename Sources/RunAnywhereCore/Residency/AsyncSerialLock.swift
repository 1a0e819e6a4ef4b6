import Foundation

/// A first-in first-out lock for async code: one holder at a time, waiters resume in order.
actor AsyncSerialLock {
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Waits for the lock.
    func acquire() async {
        if !held {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Hands the lock to the next waiter, or frees it.
    func release() {
        if waiters.isEmpty {
            held = false
        } else {
            waiters.removeFirst().resume()
        }
    }

    /// Runs `body` holding the lock.
    func withLock<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await acquire()
        defer { release() }
        return try await body()
    }
}
