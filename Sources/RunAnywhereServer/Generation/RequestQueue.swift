import Foundation
import Synchronization

/// Requests to one model, served one at a time in arrival order; at most `depth` wait behind the one running,
/// and one more is refused (429) instead of waiting. Different models run side by side.
actor RequestQueue {
    private struct Line {
        var busy = false
        var waiters: [(ticket: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    /// Thrown by ``enter(_:)`` when the model's queue is full.
    struct Full: Error {}

    private let depth: Int
    /// Requests waiting, all models together (readable without awaiting the actor).
    let waitingTotal = Atomic<Int>(0)
    private var lines: [String: Line] = [:]
    private var nextTicket: UInt64 = 0

    /// A queue letting `depth` requests wait per model.
    init(depth: Int) {
        self.depth = max(0, depth)
    }

    /// Waits for the model's turn. Throws ``Full`` at once when `depth` requests already wait, and
    /// `CancellationError` when the task is cancelled while waiting (its place is given up). After a normal return
    /// the caller must ``leave(_:)``.
    func enter(_ model: String) async throws {
        var line = lines[model, default: Line()]
        if !line.busy {
            line.busy = true
            lines[model] = line
            return
        }
        guard line.waiters.count < depth else { throw Full() }
        nextTicket += 1
        let ticket = nextTicket
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                lines[model, default: Line()].waiters.append((ticket, continuation))
                waitingTotal.add(1, ordering: .sequentiallyConsistent)
            }
        } onCancel: {
            Task { await self.withdraw(model, ticket: ticket) }
        }
    }

    /// Ends the model's turn: the longest waiting request goes next.
    func leave(_ model: String) {
        guard var line = lines[model] else { return }
        if line.waiters.isEmpty {
            lines[model] = nil
        } else {
            line.waiters.removeFirst().continuation.resume()
            waitingTotal.subtract(1, ordering: .sequentiallyConsistent)
            lines[model] = line
        }
    }

    /// How many requests wait for `model` (not counting the one running).
    func waiting(_ model: String) -> Int { lines[model]?.waiters.count ?? 0 }

    private func withdraw(_ model: String, ticket: UInt64) {
        guard var line = lines[model], let i = line.waiters.firstIndex(where: { $0.ticket == ticket }) else { return }
        line.waiters.remove(at: i).continuation.resume(throwing: CancellationError())
        waitingTotal.subtract(1, ordering: .sequentiallyConsistent)
        lines[model] = line
    }
}
