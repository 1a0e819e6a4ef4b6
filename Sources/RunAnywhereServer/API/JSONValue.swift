import Foundation

/// A JSON document as a value: what request bodies are read into before their fields are checked one by one (so a
/// wrong type names its field), and what responses are built from.
enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without fraction or exponent that fits 64 bits.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Deepest nesting of arrays and objects a request may have; deeper documents are refused before decoding.
    static let maximumDepth = 64

    /// Decodes `bytes`, or throws a message saying why they are not JSON this server reads.
    static func decode(_ bytes: [UInt8]) throws(JSONDecodingFailure) -> JSONValue {
        guard nestingDepth(of: bytes) <= maximumDepth else {
            throw JSONDecodingFailure(message: "The body nests arrays or objects more than \(maximumDepth) deep.")
        }
        do {
            return try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch {
            throw JSONDecodingFailure(message: "The body is not valid JSON.")
        }
    }

    /// The deepest nesting of `[`/`{` outside strings (a scan, so hostile nesting never reaches the decoder).
    static func nestingDepth(of bytes: [UInt8]) -> Int {
        var depth = 0, deepest = 0
        var inString = false, escaped = false
        for b in bytes {
            if inString {
                if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch b {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return deepest
    }

    /// The encoded bytes (keys sorted, slashes unescaped).
    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a tree of strings, numbers and containers cannot fail except on non-finite numbers, which the
        // server never produces; "null" keeps the response valid JSON if one ever slipped through.
        return (try? [UInt8](encoder.encode(self))) ?? Array("null".utf8)
    }

    /// The value of `key` when this is an object.
    subscript(key: String) -> JSONValue? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }
}

/// Why a body could not be read as JSON.
struct JSONDecodingFailure: Error {
    let message: String
}

extension JSONValue: Codable {
    /// Decodes any JSON value.
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? container.decode(Int64.self) {
            self = .int(i)
        } else if let d = try? container.decode(Double.self) {
            self = .double(d)
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else if let a = try? container.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as JSON.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .int(let i): try container.encode(i)
        case .double(let d): try container.encode(d)
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(o)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
                     ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral {
    /// A string.
    init(stringLiteral value: String) { self = .string(value) }
    /// An integer.
    init(integerLiteral value: Int64) { self = .int(value) }
    /// A boolean.
    init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An object.
    init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// An array.
    init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// `null`.
    init(nilLiteral: ()) { self = .null }
}
