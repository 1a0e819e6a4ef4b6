import Foundation

/// One thread that runs every call into a loaded model, from creating its recognizer to destroying it.
///
/// ONNX Runtime allocates the model's memory on the calling thread's malloc arena; doing the loading, decoding
/// and freeing on one thread keeps it in one arena, which the trim after destroying gives back to the system.
/// Spread over the SDK's short-lived worker threads it stayed resident after unload (+35% heap, measured).
final class SerialThread: @unchecked Sendable {   // the queue's state is guarded by its condition
    private let queue = JobQueue()

    /// Starts the thread.
    init(name: String) {
        let queue = self.queue
        let thread = Thread { queue.run() }
        thread.name = name
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Runs `body` on the thread and waits for it; its result or error comes back here.
    func sync<T>(_ body: () throws -> T) throws -> T {
        try withoutActuallyEscaping(body) { body in
            let done = DispatchSemaphore(value: 0)
            let outcome = OutcomeBox<T>(body)
            queue.submit {
                outcome.run()   // lets go of `body` before the caller resumes (it must not outlive this call)
                done.signal()
            }
            done.wait()
            guard let value = outcome.value else { throw CancellationError() }   // not reached: the job always sets it
            return try value.get()
        }
    }

    /// The thread ends once the jobs queued before are done.
    deinit { queue.stop() }
}

/// A job's body and outcome: run once on the thread before the waiting caller reads the outcome.
private final class OutcomeBox<T>: @unchecked Sendable {   // written before the semaphore, read after
    private var body: (() throws -> T)?
    var value: Result<T, any Error>?

    init(_ body: @escaping () throws -> T) { self.body = body }

    func run() {
        guard let body else { return }
        self.body = nil
        value = Result { try body() }
    }
}

private final class JobQueue: @unchecked Sendable {   // all state behind `condition`
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var stopped = false

    func submit(_ job: @escaping () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
