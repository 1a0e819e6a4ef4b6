import Foundation
import Testing
@testable import RunAnywhereServer

/// The per-model queue on its own: arrival order, the depth limit, and cancelled waiters giving up their place.
@Suite("Request queue")
struct RequestQueueTests {
    @Test("waiters get the model in arrival order; one past the depth is refused; other models do not wait")
    func fifoAndDepth() async throws {
        let queue = RequestQueue(depth: 2)
        try await queue.enter("a")
        let log = OrderLog()
        var waiters: [Task<Void, any Error>] = []
        for i in 1...2 {
            waiters.append(Task {
                try await queue.enter("a")
                log.append(i)
                await queue.leave("a")
            })
            while await queue.waiting("a") < i { await Task.yield() }
        }
        await #expect(throws: RequestQueue.Full.self) { try await queue.enter("a") }
        try await queue.enter("b")   // another model: its own line
        await queue.leave("b")
        #expect(log.values.isEmpty)
        await queue.leave("a")
        for w in waiters { try await w.value }
        #expect(log.values == [1, 2])
        try await queue.enter("a")   // free again
        await queue.leave("a")
    }

    @Test("a cancelled waiter leaves the line and the next one moves up")
    func cancelledWaiter() async throws {
        let queue = RequestQueue(depth: 4)
        try await queue.enter("a")
        let first = Task { try await queue.enter("a") }
        while await queue.waiting("a") < 1 { await Task.yield() }
        let second = Task { try await queue.enter("a"); await queue.leave("a") }
        while await queue.waiting("a") < 2 { await Task.yield() }
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        #expect(await queue.waiting("a") == 1)
        await queue.leave("a")
        try await second.value
        #expect(await queue.waiting("a") == 0)
    }
}
