import Foundation
@testable import RunAnywhereRemote
import Testing

@Suite("Server-sent events are parsed as they arrive")
struct ServerSentEventTests {
    let stream = "data: {\"a\": 1}\r\n\r\n: a comment\n\nevent: note\ndata: line one\ndata: line two\n\ndata: é✓\r\rdata: [DONE]\n\n"
    let expected = [ServerSentEvent(event: nil, data: "{\"a\": 1}"), ServerSentEvent(event: "note", data: "line one\nline two"),
                    ServerSentEvent(event: nil, data: "é✓"), ServerSentEvent(event: nil, data: "[DONE]")]

    func parse(_ bytes: [UInt8], chunk: Int) throws -> [ServerSentEvent] {
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        var i = 0
        while i < bytes.count {
            let piece = Array(bytes[i..<min(bytes.count, i + chunk)])
            events += try piece.withUnsafeBytes { try parser.feed($0) }
            i += chunk
        }
        if let last = parser.finish() { events.append(last) }
        return events
    }

    @Test("the same events whatever the size of the pieces (LF, CRLF, CR; comments; multi-line data; UTF-8 split)",
          arguments: [1, 2, 3, 7, 64, 4096])
    func pieces(chunk: Int) throws {
        #expect(try parse(Array(stream.utf8), chunk: chunk) == expected)
    }

    @Test("an event without its closing blank line is delivered at the end; an endless line is an error")
    func endings() throws {
        #expect(try parse(Array("data: tail".utf8), chunk: 3) == [ServerSentEvent(event: nil, data: "tail")])
        var parser = ServerSentEventParser(maxLineBytes: 16)
        let long = Array(repeating: UInt8(ascii: "x"), count: 40)
        #expect(throws: ServerSentEventParser.LineTooLong.self) { _ = try long.withUnsafeBytes { try parser.feed($0) } }
    }

    @Test("finish reasons: length is maxTokens, stop is a stop sequence only when the server names it")
    func finishReasons() {
        #expect(CompletionStreamReader.finishReason("length", stopReason: nil, stops: []) == .maxTokens)
        #expect(CompletionStreamReader.finishReason("stop", stopReason: nil, stops: ["\n"]) == .endOfGeneration)
        #expect(CompletionStreamReader.finishReason("stop", stopReason: "\n", stops: ["\n"]) == .stopSequence)
        #expect(CompletionStreamReader.finishReason("stop", stopReason: 2, stops: ["\n"]) == .endOfGeneration)
    }
}
