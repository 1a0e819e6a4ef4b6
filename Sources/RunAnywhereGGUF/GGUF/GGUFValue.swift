/// A metadata value in a GGUF file.
///
/// Arrays hold values of one element type; arrays of arrays are allowed by the format.
/// (Not declared `indirect`: arrays already store their elements out of line, and unboxed
/// scalars keep large token arrays compact.)
public enum GGUFValue: Sendable, Hashable {
    /// GGUF type 0.
    case uint8(UInt8)
    /// GGUF type 1.
    case int8(Int8)
    /// GGUF type 2.
    case uint16(UInt16)
    /// GGUF type 3.
    case int16(Int16)
    /// GGUF type 4.
    case uint32(UInt32)
    /// GGUF type 5.
    case int32(Int32)
    /// GGUF type 10.
    case uint64(UInt64)
    /// GGUF type 11.
    case int64(Int64)
    /// GGUF type 6.
    case float32(Float)
    /// GGUF type 12.
    case float64(Double)
    /// GGUF type 7.
    case bool(Bool)
    /// GGUF type 8 (UTF-8; invalid sequences are replaced by U+FFFD when read).
    case string(String)
    /// GGUF type 9: elements all of one type.
    case array([GGUFValue])

    /// The value as an `Int` when it is an integer of any width that fits, else nil.
    public var intValue: Int? {
        switch self {
        case .uint8(let v): return Int(v)
        case .int8(let v): return Int(v)
        case .uint16(let v): return Int(v)
        case .int16(let v): return Int(v)
        case .uint32(let v): return Int(v)
        case .int32(let v): return Int(v)
        case .uint64(let v): return Int(exactly: v)
        case .int64(let v): return Int(exactly: v)
        default: return nil
        }
    }

    /// The value as a `Double` when it is a float or an integer, else nil.
    public var doubleValue: Double? {
        switch self {
        case .float32(let v): return Double(v)
        case .float64(let v): return v
        case .uint64(let v): return Double(v)
        case .int64(let v): return Double(v)
        default: return intValue.map(Double.init)
        }
    }

    /// The string when the value is a string, else nil.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The Boolean when the value is a bool, else nil.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The elements when the value is an array, else nil.
    public var arrayValue: [GGUFValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The GGUF type code of this value (0...12).
    public var typeCode: UInt32 {
        switch self {
        case .uint8: return 0
        case .int8: return 1
        case .uint16: return 2
        case .int16: return 3
        case .uint32: return 4
        case .int32: return 5
        case .float32: return 6
        case .bool: return 7
        case .string: return 8
        case .array: return 9
        case .uint64: return 10
        case .int64: return 11
        case .float64: return 12
        }
    }
}
