import Foundation
import Synchronization

/// A flag a cancelled task raises so blocking work on another thread can stop at its next check.
package final class CancellationFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    package init() {}

    /// Raises the flag.
    package func cancel() { raised.store(true, ordering: .releasing) }

    /// Whether the flag has been raised.
    package var isCancelled: Bool { raised.load(ordering: .acquiring) }
}

/// Runs blocking work (libcurl, file I/O, libarchive) on a thread of its own, off Swift's
/// cooperative pool, and bridges it to async. Cancelling the calling task raises the flag
/// the work is given; the work decides how promptly it stops.
package enum BlockingWork {
    package static func run<T: Sendable>(
        name: String,
        _ body: @escaping @Sendable (CancellationFlag) throws -> T
    ) async throws -> T {
        let flag = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let thread = Thread {
                    do { continuation.resume(returning: try body(flag)) } catch { continuation.resume(throwing: error) }
                }
                thread.name = name
                thread.start()
            }
        } onCancel: {
            flag.cancel()
        }
    }
}

/// Monotonic seconds, for timeouts that must not jump with the wall clock.
package func monotonicSeconds() -> Double {
    Double(DispatchTime.now().uptimeNanoseconds) / 1e9
}
