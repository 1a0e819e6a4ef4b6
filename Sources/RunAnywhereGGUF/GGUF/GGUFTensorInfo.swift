/// Where one tensor lives in a GGUF file and how it is laid out.
public struct GGUFTensorInfo: Sendable, Hashable {
    /// The tensor's name, e.g. `"blk.0.attn_q.weight"`.
    public let name: String
    /// Dimensions in ggml order: `shape[0]` is the row length (ne0), `shape[1]` the number of rows, ...
    public let shape: [Int]
    /// The element type.
    public let type: GGMLType
    /// Absolute byte offset of the tensor's data in the file (aligned to the file's alignment).
    public let offset: Int
    /// Bytes of data the tensor occupies.
    public let byteCount: Int

    /// Creates a tensor description. The reader validates these before creating one.
    public init(name: String, shape: [Int], type: GGMLType, offset: Int, byteCount: Int) {
        self.name = name
        self.shape = shape
        self.type = type
        self.offset = offset
        self.byteCount = byteCount
    }

    /// Number of elements (product of the shape).
    public var elementCount: Int { shape.reduce(1, *) }

    /// Number of rows: the product of every dimension after the first.
    public var rowCount: Int { shape.dropFirst().reduce(1, *) }

    /// Bytes of one row (`shape[0]` elements).
    public var rowByteCount: Int { shape.isEmpty ? 0 : (shape[0] / type.blockSize) * type.typeSize }
}
