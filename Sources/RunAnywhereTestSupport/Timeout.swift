import Foundation
import Synchronization

/// Runs `body`, giving up after `seconds`: the result is then a ``TimedOut`` failure and `body` is cancelled.
/// Chaos tests wrap every step in it, so a deadlock shows up as a failed step instead of a hung run
/// (the caller resumes on time even if `body` never notices the cancellation).
public func withTimeout<T: Sendable>(seconds: Double, _ body: @escaping @Sendable () async throws -> T) async -> Result<T, any Error> {
    let pending = ResumeOnce<Result<T, any Error>>()
    return await withCheckedContinuation { continuation in
        pending.set(continuation)
        let timer = Task {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return !Task.isCancelled
        }
        let work = Task {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            timer.cancel()
            pending.resume(returning: result)
        }
        Task {
            guard await timer.value else { return }
            work.cancel()
            pending.resume(returning: .failure(TimedOut(seconds: seconds)))
        }
    }
}

/// A continuation resumed by whichever side comes first.
private final class ResumeOnce<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, Never>?>(nil)

    func set(_ c: CheckedContinuation<T, Never>) { continuation.withLock { $0 = c } }

    func resume(returning value: T) { continuation.withLock { $0.take() }?.resume(returning: value) }
}

/// A step that did not finish in time.
public struct TimedOut: Error, CustomStringConvertible {
    /// The time it was given.
    public var seconds: Double
    /// "timed out after N s".
    public var description: String { "timed out after \(seconds) s" }
}
