import Foundation

/// A small command-line parser: positionals, `--flag`, `--option value`, `--option=value`, `--` ends options.
struct Arguments {
    private(set) var positionals: [String] = []
    private var options: [String: String] = [:]
    private var allValues: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Parses `args` given the option names that take a value and the flags that do not; anything else is a usage error.
    init(_ args: [String], options valued: Set<String> = [], flags known: Set<String> = []) throws {
        var i = 0
        var onlyPositionals = false
        while i < args.count {
            let a = args[i]
            i += 1
            if onlyPositionals || !a.hasPrefix("--") || a == "-" {
                if !onlyPositionals, a.hasPrefix("-"), a.count > 1, a != "-", Double(a) == nil, a != "-h" {
                    throw UsageError("unknown option '\(a)'")
                }
                if a == "-h" { flags.insert("help"); continue }
                positionals.append(a)
                continue
            }
            if a == "--" { onlyPositionals = true; continue }
            var name = String(a.dropFirst(2))
            var value: String?
            if let eq = name.firstIndex(of: "=") {
                value = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if name == "help" { flags.insert("help"); continue }
            if valued.contains(name) {
                if value == nil {
                    guard i < args.count else { throw UsageError("option --\(name) needs a value") }
                    value = args[i]
                    i += 1
                }
                options[name] = value
                allValues[name, default: []].append(value ?? "")
            } else if known.contains(name) {
                guard value == nil else { throw UsageError("option --\(name) takes no value") }
                flags.insert(name)
            } else {
                throw UsageError("unknown option '--\(name)'")
            }
        }
    }

    /// Whether `--name` was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }
    /// Whether help was asked for.
    var wantsHelp: Bool { flags.contains("help") }
    /// The value of `--name`, if given (the last one when repeated).
    func option(_ name: String) -> String? { options[name] }
    /// Every value of a repeatable `--name`, in order.
    func values(_ name: String) -> [String] { allValues[name] ?? [] }

    /// An integer option within a range, or a usage error.
    func int(_ name: String, in range: ClosedRange<Int> = 0...Int.max) throws -> Int? {
        guard let v = options[name] else { return nil }
        guard let n = Int(v), range.contains(n) else { throw UsageError("--\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound), got '\(v)'") }
        return n
    }

    /// A floating-point option within a range, or a usage error.
    func double(_ name: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let v = options[name] else { return nil }
        guard let n = Double(v), range.contains(n) else { throw UsageError("--\(name) must be a number in \(range.lowerBound)...\(range.upperBound), got '\(v)'") }
        return n
    }

    /// The positional at `index`, or a usage error naming what is missing.
    func positional(_ index: Int, _ what: String) throws -> String {
        guard index < positionals.count else { throw UsageError("missing \(what)") }
        return positionals[index]
    }
}
