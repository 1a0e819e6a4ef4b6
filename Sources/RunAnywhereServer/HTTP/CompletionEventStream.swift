import Foundation
import RunAnywhere

/// The server-sent events of a streaming completion, rendered as the generation produces them: the opening chunk
/// (chat), a chunk per piece of text, the closing chunk with `finish_reason`, the usage chunk when asked for, and
/// `data: [DONE]`. A failure after the first text is sent as an error event, and the stream ends there.
final class CompletionEventStream: ResponseStream, @unchecked Sendable {
    // `pending`, `offset`, `first` and `finished` are touched only by the connection thread that sends the body
    // (libmicrohttpd calls `read` and `close` from it), hence @unchecked Sendable.
    private let run: GenerationRun
    private let response: CompletionResponse
    private let clientGone: @Sendable () -> Bool
    private let ended: @Sendable (GenerationResult?) -> Void
    private var pending: [UInt8] = []
    private var offset = 0
    private var first: EventChannel.Item?
    private var finished = false

    /// - Parameter ended: told once, when the stream ends: with the result, or nil when it ended without one.
    init(run: GenerationRun, response: CompletionResponse, first: EventChannel.Item, clientGone: @escaping @Sendable () -> Bool,
         ended: @escaping @Sendable (GenerationResult?) -> Void) {
        self.ended = ended
        self.run = run
        self.response = response
        self.first = first
        self.clientGone = clientGone
        if let opening = response.openingChunk() { pending = CompletionResponse.event(opening) }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> (count: Int?, failed: Bool) {
        while offset == pending.count {
            if finished { return (nil, false) }
            let next = first ?? run.events.next(timeout: Router.pollInterval)
            first = nil
            guard let item = next else {
                if clientGone() {
                    run.cancel()
                    finish(nil)
                    return (nil, true)
                }
                continue
            }
            offset = 0
            switch item {
            case .text(let t):
                pending = CompletionResponse.event(response.textChunk(t))
            case .completed(let r):
                pending = CompletionResponse.event(response.closingChunk(r))
                if response.job.includeUsage { pending += CompletionResponse.event(response.usageChunk(r)) }
                pending += CompletionResponse.done
                finished = true
                finish(r)
            case .failed(let e):
                pending = CompletionResponse.event(e.json)
                finished = true
                finish(nil)
            }
        }
        let n = min(buffer.count, pending.count - offset)
        pending.withUnsafeBytes { src in
            UnsafeMutableRawBufferPointer(rebasing: buffer[0..<n]).copyMemory(from: UnsafeRawBufferPointer(rebasing: src[offset..<offset + n]))
        }
        offset += n
        return (n, false)
    }

    func close() {
        run.cancel()
        finish(nil)
    }

    private var reported = false

    private func finish(_ result: GenerationResult?) {
        guard !reported else { return }
        reported = true
        ended(result)
    }
}
