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
                let work = WorkBox(body)
                let thread = Thread {
                    // The body (and all it captured) is released before the caller resumes, so nothing the
                    // work held — a model, a file — outlives the call.
                    let result: Result<T, any Error>
                    do { result = .success(try work.take()(flag)) } catch { result = .failure(error) }
                    continuation.resume(with: result)
                }
                thread.name = name
                thread.start()
            }
        } onCancel: {
            flag.cancel()
        }
    }
}

/// Holds a closure until it is taken once.
private final class WorkBox<T>: @unchecked Sendable {
    private var body: (@Sendable (CancellationFlag) throws -> T)?

    init(_ body: @escaping @Sendable (CancellationFlag) throws -> T) { self.body = body }

    /// The closure; the box no longer holds it.
    func take() -> @Sendable (CancellationFlag) throws -> T {
        guard let b = body else { return { _ in throw CancellationError() } }
        body = nil
        return b
    }
}

/// Monotonic seconds, for timeouts that must not jump with the wall clock.
package func monotonicSeconds() -> Double {
    Double(DispatchTime.now().uptimeNanoseconds) / 1e9
}
