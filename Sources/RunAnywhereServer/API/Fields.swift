import Foundation
import RunAnywhere

/// The fields of a JSON object, read with their types checked: a wrong type or a value out of range is a 400 that
/// names the field. Absent and `null` fields read as nil.
struct Fields {
    private let values: [String: JSONValue]
    private let prefix: String

    init(_ values: [String: JSONValue], prefix: String = "") {
        self.values = values
        self.prefix = prefix
    }

    subscript(key: String) -> JSONValue? { values[key] }

    private func present(_ key: String) -> JSONValue? {
        guard let v = values[key], v != .null else { return nil }
        return v
    }

    func string(_ key: String, required: Bool = false) throws(APIError) -> String? {
        guard let v = present(key) else {
            if required { throw .invalid("`\(prefix + key)` is required.", param: prefix + key) }
            return nil
        }
        guard case .string(let s) = v else { throw .invalid("`\(prefix + key)` must be a string.", param: prefix + key) }
        return s
    }

    func bool(_ key: String) throws(APIError) -> Bool? {
        guard let v = present(key) else { return nil }
        guard case .bool(let b) = v else { throw .invalid("`\(prefix + key)` must be true or false.", param: prefix + key) }
        return b
    }

    func int(_ key: String, in range: ClosedRange<Int64>) throws(APIError) -> Int? {
        guard let v = present(key) else { return nil }
        let n: Int64
        switch v {
        case .int(let i): n = i
        case .double(let d) where d.rounded() == d && abs(d) < 9e15: n = Int64(d)
        default: throw .invalid("`\(prefix + key)` must be a whole number.", param: prefix + key)
        }
        guard range.contains(n) else {
            throw .invalid("`\(prefix + key)` must be in \(range.lowerBound)...\(range.upperBound) (got \(n)).", param: prefix + key)
        }
        return Int(n)
    }

    func number(_ key: String, in range: ClosedRange<Double>) throws(APIError) -> Double? {
        guard let v = present(key) else { return nil }
        let d: Double
        switch v {
        case .int(let i): d = Double(i)
        case .double(let x): d = x
        default: throw .invalid("`\(prefix + key)` must be a number.", param: prefix + key)
        }
        guard range.contains(d) else {
            throw .invalid("`\(prefix + key)` must be in \(range.lowerBound)...\(range.upperBound) (got \(d)).", param: prefix + key)
        }
        return d
    }
}

/// The `messages` of a chat request as the SDK takes them: system prompt, earlier turns, and the last user message.
struct Conversation {
    var systemPrompt: String?
    var history: [ChatTurn]
    var prompt: String

    /// Reads `messages`: system (or developer) messages join into the system prompt; user and assistant messages
    /// become the history, and the last message, which must be the user's, the prompt.
    init(_ f: Fields) throws(APIError) {
        guard case .array(let items)? = f["messages"] else {
            throw .invalid("`messages` is required: an array of {\"role\", \"content\"} objects.", param: "messages")
        }
        guard !items.isEmpty else { throw .invalid("`messages` must not be empty.", param: "messages") }
        var system: [String] = []
        var turns: [ChatTurn] = []
        for (i, item) in items.enumerated() {
            let param = "messages[\(i)]"
            guard case .object(let fields) = item else { throw .invalid("`\(param)` must be an object.", param: param) }
            let message = Fields(fields, prefix: param + ".")
            let role = try message.string("role", required: true) ?? ""
            let content = try Self.content(fields["content"], param: param + ".content", optional: role == "assistant")
            switch role {
            case "system", "developer": system.append(content)
            case "user": turns.append(ChatTurn(role: .user, content: content))
            case "assistant": turns.append(ChatTurn(role: .assistant, content: content))
            default:
                throw .invalid("`\(param).role` must be system, developer, user or assistant (got \(role)).", param: param + ".role")
            }
        }
        guard let last = turns.last, last.role == .user else {
            throw .invalid("The last message (after any system messages) must be the user's.", param: "messages")
        }
        systemPrompt = system.isEmpty ? nil : system.joined(separator: "\n\n")
        history = Array(turns.dropLast())
        prompt = last.content
    }

    /// A message's content: a string, or an array of text parts (`{"type": "text", "text": …}`) joined.
    static func content(_ value: JSONValue?, param: String, optional: Bool) throws(APIError) -> String {
        switch value {
        case .string(let s)?:
            return s
        case .array(let parts)?:
            var text = ""
            for (i, part) in parts.enumerated() {
                guard case .object(let p) = part, p["type"] == .string("text"), case .string(let t)? = p["text"] else {
                    throw .invalid("`\(param)[\(i)]` must be a text part ({\"type\": \"text\", \"text\": …}); images and audio are not supported.", param: "\(param)[\(i)]")
                }
                text += t
            }
            return text
        case nil, .null?:
            if optional { return "" }
            throw .invalid("`\(param)` is required.", param: param)
        default:
            throw .invalid("`\(param)` must be a string or an array of text parts.", param: param)
        }
    }
}
