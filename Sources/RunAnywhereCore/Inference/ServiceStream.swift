import Foundation

extension AsyncThrowingStream where Failure == any Error {
    /// A service call as a stream: `body` runs in a task of its own and yields events; the stream ends when it
    /// returns, throws what it throws (a `CancellationError` as `.cancelled` naming `what`), and cancels the task
    /// when the consumer stops listening.
    static func serviceCall(_ what: String, modelId: String?,
                            _ body: @escaping @Sendable (Continuation) async throws -> Void) -> Self where Element: Sendable {
        let (stream, continuation) = makeStream(bufferingPolicy: .unbounded)
        let task = Task {
            do {
                try await body(continuation)
                continuation.finish()
            } catch is CancellationError {
                continuation.finish(throwing: RunAnywhereError.cancelled(what, modelId: modelId))
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing body, as a value.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
