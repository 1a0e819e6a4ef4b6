/// An error reading or interpreting a GGUF file.
///
/// The message names what is wrong and where, so a person can act on it, for example
/// `"tensor blk.3.attn_q.weight extends past end of file"`.
public struct GGUFError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The broad class of failure.
    public enum Kind: Sendable, Hashable {
        /// The bytes are not a well-formed GGUF file (truncated, corrupt or hostile).
        case invalidFormat
        /// The file is well formed but uses something this code does not handle
        /// (a GGUF version, a tensor type, an architecture).
        case unsupported
        /// The file could not be opened, inspected or mapped.
        case io
    }

    /// The broad class of failure.
    public let kind: Kind
    /// What went wrong, in words a person can act on.
    public let message: String

    /// Creates an error of the given kind with a human-readable message.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// A one-line description: the kind followed by the message.
    public var description: String {
        switch kind {
        case .invalidFormat: return "invalid GGUF file: \(message)"
        case .unsupported: return "unsupported GGUF file: \(message)"
        case .io: return "GGUF I/O error: \(message)"
        }
    }

    static func invalid(_ message: String) -> GGUFError { GGUFError(.invalidFormat, message) }
}
