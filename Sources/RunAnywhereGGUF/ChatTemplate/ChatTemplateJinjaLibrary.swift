import Foundation

/// Built-in functions, methods, filters and tests of the Jinja subset.
extension Jinja.Interpreter {
    typealias Value = Jinja.Value
    typealias Error = Jinja.Error

    func callFunction(_ f: Value, _ args: [Value], _ kwargs: [(String, Value)]) throws -> Value {
        guard case .function(let name) = f else { throw Error(message: "\(f.text) is not callable") }
        switch name {
        case "raise_exception":
            throw Error(message: "template raised: \(args.first?.text ?? "")")
        case "namespace", "dict":
            var pairs: [(String, Value)] = []
            if case .object(let d, let keys)? = args.first { pairs = keys.map { ($0, d[$0] ?? .none) } }
            pairs += kwargs
            if name == "dict" { return .object(pairs) }
            var values: [String: Value] = [:]
            for (k, v) in pairs { values[k] = v }
            return .namespace(Jinja.Namespace(values))
        case "range":
            let ints = args.compactMap { v -> Int? in if case .int(let i) = v { return i } else { return nil } }
            var start = 0, stop = 0, step = 1
            switch ints.count {
            case 1: stop = ints[0]
            case 2: start = ints[0]; stop = ints[1]
            case 3: start = ints[0]; stop = ints[1]; step = ints[2]
            default: throw Error(message: "range() needs integers")
            }
            guard step != 0, abs((stop - start) / step) < 1_000_000 else { throw Error(message: "bad range") }
            return .array(Array(stride(from: start, to: stop, by: step)).map { .int($0) })
        case "strftime_now":
            return .string(Jinja.strftime(args.first?.text ?? "", now))
        default:
            throw Error(message: "unknown function \(name)")
        }
    }

    func callMethod(_ receiver: Value, _ method: String, _ args: [Value], _ kwargs: [(String, Value)]) throws -> Value {
        switch receiver {
        case .string(let s):
            func chars(_ i: Int) -> Set<Character>? {
                guard i < args.count, case .string(let c) = args[i] else { return nil }
                return Set(c)
            }
            switch method {
            case "strip": return .string(Jinja.strip(s, chars(0), leading: true, trailing: true))
            case "lstrip": return .string(Jinja.strip(s, chars(0), leading: true, trailing: false))
            case "rstrip": return .string(Jinja.strip(s, chars(0), leading: false, trailing: true))
            case "upper": return .string(s.uppercased())
            case "lower": return .string(s.lowercased())
            case "title": return .string(s.capitalized)
            case "capitalize": return .string(s.prefix(1).uppercased() + s.dropFirst().lowercased())
            case "startswith", "endswith":
                let candidates: [String] = args.first.map { v in
                    if case .array(let a) = v { return a.map { $0.text } }
                    return [v.text]
                } ?? []
                return .bool(candidates.contains { method == "startswith" ? s.hasPrefix($0) : s.hasSuffix($0) })
            case "split":
                var maxSplit = -1
                if args.count > 1, case .int(let m) = args[1] { maxSplit = m }
                for (k, v) in kwargs where k == "maxsplit" { if case .int(let m) = v { maxSplit = m } }
                if let sep = args.first, case .string(let separator) = sep, !separator.isEmpty {
                    var parts: [String] = []
                    var rest = Substring(s)
                    while maxSplit < 0 || parts.count < maxSplit, let r = rest.range(of: separator) {
                        parts.append(String(rest[..<r.lowerBound]))
                        rest = rest[r.upperBound...]
                    }
                    parts.append(String(rest))
                    return .array(parts.map { .string($0) })
                }
                return .array(s.split(whereSeparator: { $0.isWhitespace }).map { .string(String($0)) })
            case "splitlines":
                return .array(s.split(omittingEmptySubsequences: false, whereSeparator: { $0.isNewline }).map { .string(String($0)) })
            case "replace":
                guard args.count >= 2 else { throw Error(message: "replace needs two arguments") }
                return .string(s.replacingOccurrences(of: args[0].text, with: args[1].text))
            case "find":
                guard let needle = args.first?.text, let r = s.range(of: needle) else { return .int(-1) }
                return .int(s.distance(from: s.startIndex, to: r.lowerBound))
            case "count":
                guard let needle = args.first?.text, !needle.isEmpty else { return .int(0) }
                return .int(s.components(separatedBy: needle).count - 1)
            case "join":
                return .string((args.first?.items ?? []).map { $0.text }.joined(separator: s))
            case "isdigit": return .bool(!s.isEmpty && s.allSatisfy { $0.isNumber })
            case "isspace": return .bool(!s.isEmpty && s.allSatisfy { $0.isWhitespace })
            default: break
            }
        case .object(let d, let keys):
            switch method {
            case "items": return .array(keys.map { .array([.string($0), d[$0] ?? .none]) })
            case "keys": return .array(keys.map { .string($0) })
            case "values": return .array(keys.map { d[$0] ?? .none })
            case "get": return d[args.first?.text ?? ""] ?? (args.count > 1 ? args[1] : .none)
            default: break
            }
        default: break
        }
        throw Error(message: "unknown method \(method) on \(receiver.text.prefix(40))")
    }

    func applyFilter(_ name: String, _ v: Value, _ args: [Value], _ kwargs: [(String, Value)]) throws -> Value {
        switch name {
        case "trim":
            var set: Set<Character>? = nil
            if case .string(let c)? = args.first { set = Set(c) }
            return .string(Jinja.strip(v.text, set, leading: true, trailing: true))
        case "length", "count":
            switch v {
            case .string(let s): return .int(s.count)
            case .array(let a): return .int(a.count)
            case .object(let d, _): return .int(d.count)
            case .undefined, .none: return .int(0)
            default: throw Error(message: "object has no length")
            }
        case "tojson":
            var indent: Int? = nil
            for (k, value) in kwargs where k == "indent" { if case .int(let i) = value { indent = i } }
            if case .int(let i)? = args.first { indent = i }
            return .string(v.json(indent: indent))
        case "string": return .string(v.text)
        case "lower": return .string(v.text.lowercased())
        case "upper": return .string(v.text.uppercased())
        case "capitalize": return .string(v.text.prefix(1).uppercased() + v.text.dropFirst().lowercased())
        case "title": return .string(v.text.capitalized)
        case "safe", "e", "escape": return v
        case "first": return v.items?.first ?? .undefined
        case "last": return v.items?.last ?? .undefined
        case "reverse", "list":
            if case .string(let s) = v, name == "reverse" { return .string(String(s.reversed())) }
            let items = v.items ?? []
            return .array(name == "reverse" ? items.reversed() : items)
        case "join":
            let sep = args.first?.text ?? ""
            return .string((v.items ?? []).map { $0.text }.joined(separator: sep))
        case "default", "d":
            let useFalsy = args.count > 1 && args[1].isTruthy
            if case .undefined = v { return args.first ?? .string("") }
            if useFalsy && !v.isTruthy { return args.first ?? .string("") }
            return v
        case "replace":
            guard args.count >= 2 else { throw Error(message: "replace needs two arguments") }
            return .string(v.text.replacingOccurrences(of: args[0].text, with: args[1].text))
        case "int":
            switch v {
            case .int: return v
            case .double(let d): return .int(Int(d))
            case .string(let s): return .int(Int(s.trimmingCharacters(in: .whitespaces)) ?? 0)
            case .bool(let b): return .int(b ? 1 : 0)
            default: return .int(0)
            }
        case "float":
            return .double(number(v) ?? Double(v.text) ?? 0)
        case "abs":
            if case .int(let i) = v { return .int(abs(i)) }
            return .double(abs(number(v) ?? 0))
        case "items":
            return try callMethod(v, "items", [], [])
        case "map":
            var attribute: String? = nil
            for (k, value) in kwargs where k == "attribute" { attribute = value.text }
            if let attribute { return .array((v.items ?? []).map { member($0, attribute) }) }
            if let filterName = args.first?.text {
                return .array(try (v.items ?? []).map { try applyFilter(filterName, $0, Array(args.dropFirst()), []) })
            }
            throw Error(message: "map needs an attribute or a filter")
        case "selectattr", "rejectattr":
            guard let attribute = args.first?.text else { throw Error(message: "\(name) needs an attribute") }
            let testName = args.count > 1 ? args[1].text : nil
            let testArgs = Array(args.dropFirst(2))
            let kept = try (v.items ?? []).filter { item in
                let value = member(item, attribute)
                let ok = try testName.map { try applyTest($0, value, testArgs) } ?? value.isTruthy
                return name == "selectattr" ? ok : !ok
            }
            return .array(kept)
        case "select", "reject":
            let testName = args.first?.text
            let testArgs = Array(args.dropFirst())
            let kept = try (v.items ?? []).filter { item in
                let ok = try testName.map { try applyTest($0, item, testArgs) } ?? item.isTruthy
                return name == "select" ? ok : !ok
            }
            return .array(kept)
        case "indent":
            var width = 4
            if case .int(let w)? = args.first { width = w }
            let pad = String(repeating: " ", count: width)
            let lines = v.text.components(separatedBy: "\n")
            return .string(lines.enumerated().map { $0.offset == 0 || $0.element.isEmpty ? $0.element : pad + $0.element }.joined(separator: "\n"))
        default:
            throw Error(message: "unknown filter \(name)")
        }
    }

    func applyTest(_ name: String, _ v: Value, _ args: [Value]) throws -> Bool {
        switch name {
        case "defined": if case .undefined = v { return false }; return true
        case "undefined": if case .undefined = v { return true }; return false
        case "none": if case .none = v { return true }; return false
        case "string": if case .string = v { return true }; return false
        case "number": if case .int = v { return true }; if case .double = v { return true }; return false
        case "integer": if case .int = v { return true }; return false
        case "float": if case .double = v { return true }; return false
        case "boolean": if case .bool = v { return true }; return false
        case "true": if case .bool(true) = v { return true }; return false
        case "false": if case .bool(false) = v { return true }; return false
        case "mapping": if case .object = v { return true }; return false
        case "sequence", "iterable":
            switch v { case .array, .string, .object: return true; default: return false }
        case "callable": if case .function = v { return true }; return false
        case "odd", "even":
            guard case .int(let i) = v else { return false }
            return name == "odd" ? i % 2 != 0 : i % 2 == 0
        case "divisibleby":
            guard case .int(let i) = v, case .int(let d)? = args.first, d != 0 else { return false }
            return i % d == 0
        case "eq", "equalto", "==": return equal(v, args.first ?? .undefined)
        case "ne", "!=": return !equal(v, args.first ?? .undefined)
        case "in": return try binary("in", v, args.first ?? .undefined).isTruthy
        case "lower": return v.text == v.text.lowercased()
        case "upper": return v.text == v.text.uppercased()
        default: throw Error(message: "unknown test \(name)")
        }
    }
}

extension Jinja {
    /// Python's `str.strip` family: whitespace, or the given characters.
    static func strip(_ s: String, _ chars: Set<Character>?, leading: Bool, trailing: Bool) -> String {
        let remove: (Character) -> Bool = { c in chars.map { $0.contains(c) } ?? c.isWhitespace }
        var sub = Substring(s)
        if leading { while let f = sub.first, remove(f) { sub = sub.dropFirst() } }
        if trailing { while let l = sub.last, remove(l) { sub = sub.dropLast() } }
        return String(sub)
    }

    /// `strftime` for the codes chat templates use (%d %m %Y %y %b %B %a %A %H %M %S %j %%).
    static func strftime(_ format: String, _ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone.current
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                      "October", "November", "December"]
        let days = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
        let month = (c.month ?? 1) - 1, weekday = (c.weekday ?? 1) - 1
        func two(_ v: Int?) -> String { String(format: "%02d", v ?? 0) }
        var out = ""
        var it = format.makeIterator()
        while let ch = it.next() {
            guard ch == "%", let code = it.next() else { out.append(ch); continue }
            switch code {
            case "d": out += two(c.day)
            case "m": out += two(c.month)
            case "Y": out += String(c.year ?? 0)
            case "y": out += two((c.year ?? 0) % 100)
            case "b": out += String(months[month].prefix(3))
            case "B": out += months[month]
            case "a": out += String(days[weekday].prefix(3))
            case "A": out += days[weekday]
            case "H": out += two(c.hour)
            case "M": out += two(c.minute)
            case "S": out += two(c.second)
            case "j": out += String(format: "%03d", calendar.ordinality(of: .day, in: .year, for: date) ?? 0)
            case "%": out += "%"
            default: out.append("%"); out.append(code)
            }
        }
        return out
    }
}
