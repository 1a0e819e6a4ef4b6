/// Typed metadata look-ups. Each returns nil when the key is absent or holds another type.
extension GGUFFile {
    /// The string value of `key`.
    public func string(_ key: String) -> String? { metadata[key]?.stringValue }

    /// The integer value of `key`; accepts any integer type whose value fits in `Int`.
    public func int(_ key: String) -> Int? { metadata[key]?.intValue }

    /// The floating-point value of `key`; accepts float32, float64 and integers.
    public func double(_ key: String) -> Double? { metadata[key]?.doubleValue }

    /// The Boolean value of `key`.
    public func bool(_ key: String) -> Bool? { metadata[key]?.boolValue }

    /// The value of `key` when it is an array of strings.
    public func stringArray(_ key: String) -> [String]? {
        guard let array = metadata[key]?.arrayValue else { return nil }
        var result: [String] = []
        result.reserveCapacity(array.count)
        for element in array {
            guard case .string(let s) = element else { return nil }
            result.append(s)
        }
        return result
    }

    /// The value of `key` when it is an array of numbers (floats or integers), as `Float`.
    public func floatArray(_ key: String) -> [Float]? {
        guard let array = metadata[key]?.arrayValue else { return nil }
        var result: [Float] = []
        result.reserveCapacity(array.count)
        for element in array {
            if case .float32(let f) = element {
                result.append(f)
            } else if let d = element.doubleValue {
                result.append(Float(d))
            } else {
                return nil
            }
        }
        return result
    }

    /// The value of `key` when it is an array of integers that all fit in `Int`.
    public func intArray(_ key: String) -> [Int]? {
        guard let array = metadata[key]?.arrayValue else { return nil }
        var result: [Int] = []
        result.reserveCapacity(array.count)
        for element in array {
            guard let i = element.intValue else { return nil }
            result.append(i)
        }
        return result
    }
}
