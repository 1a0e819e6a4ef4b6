import CLlamaCpp
import Foundation
import Testing

/// llama.cpp's error lines reach the backend through one log callback (`ra_llama_log_sink`); the backend clears them,
/// calls llama.cpp and reads them on one thread. Two loads at once must each read their own reason (runs everywhere:
/// the sink is called here as llama.cpp would call it).
@Suite("llama.cpp error lines")
struct LlamaCppErrorCaptureTests {
    static func read() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let n = ra_llama_last_error(&buffer, buffer.count)
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test("each thread reads the lines logged on it since its own clear, whatever another thread clears or logs")
    func perThread() async {
        let aLogged = DispatchSemaphore(value: 0), bDone = DispatchSemaphore(value: 0)
        let a = Task.detached { () -> String in
            ra_llama_clear_last_error()
            ra_llama_log_sink(4, "error loading model architecture: unknown model architecture: 'frobnicator'\n", nil)
            aLogged.signal()
            bDone.wait()   // another load clears and fails meanwhile
            return Self.read()
        }
        let b = Task.detached { () -> String in
            aLogged.wait()
            ra_llama_clear_last_error()
            ra_llama_log_sink(4, "failed to read tensor info\n", nil)
            ra_llama_log_sink(5, " (continued)\n", nil)
            ra_llama_log_sink(2, "an info line\n", nil)
            let mine = Self.read()
            bDone.signal()
            return mine
        }
        let (ra, rb) = (await a.value, await b.value)
        #expect(ra == "error loading model architecture: unknown model architecture: 'frobnicator'", "\(ra)")
        #expect(rb == "failed to read tensor info (continued)", "\(rb)")
    }
}
