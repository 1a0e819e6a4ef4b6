import Foundation

extension Jinja {
    /// A mutable attribute bag made by `namespace(...)`.
    final class Namespace: @unchecked Sendable {
        var values: [String: Value]
        init(_ values: [String: Value]) { self.values = values }
    }

    /// A runtime value (Python-like semantics).
    indirect enum Value: Sendable {
        case undefined
        case none
        case bool(Bool)
        case int(Int)
        case double(Double)
        case string(String)
        case array([Value])
        case object([String: Value], [String])    // values, key order
        case namespace(Namespace)
        case function(String)

        static func object(_ pairs: [(String, Value)]) -> Value {
            var dict: [String: Value] = [:]
            var keys: [String] = []
            for (k, v) in pairs {
                if dict[k] == nil { keys.append(k) }
                dict[k] = v
            }
            return .object(dict, keys)
        }

        var isTruthy: Bool {
            switch self {
            case .undefined, .none: return false
            case .bool(let b): return b
            case .int(let i): return i != 0
            case .double(let d): return d != 0
            case .string(let s): return !s.isEmpty
            case .array(let a): return !a.isEmpty
            case .object(let d, _): return !d.isEmpty
            case .namespace, .function: return true
            }
        }

        /// `str(value)` as Jinja prints it.
        var text: String {
            switch self {
            case .undefined: return ""
            case .none: return "None"
            case .bool(let b): return b ? "True" : "False"
            case .int(let i): return String(i)
            case .double(let d): return d == d.rounded() && abs(d) < 1e16 ? String(format: "%.1f", d) : String(d)
            case .string(let s): return s
            case .array(let a): return "[" + a.map { $0.repr }.joined(separator: ", ") + "]"
            case .object(let d, let keys): return "{" + keys.map { "'\($0)': \(d[$0]?.repr ?? "")" }.joined(separator: ", ") + "}"
            case .namespace: return "<Namespace>"
            case .function(let n): return "<function \(n)>"
            }
        }

        var repr: String {
            if case .string(let s) = self { return "'" + s.replacingOccurrences(of: "'", with: "\\'") + "'" }
            return text
        }

        /// JSON text as Python's `json.dumps` writes it (`tojson`), optionally indented.
        func json(indent: Int?, level: Int = 0) -> String {
            switch self {
            case .undefined, .none: return "null"
            case .bool(let b): return b ? "true" : "false"
            case .int(let i): return String(i)
            case .double(let d): return String(d)
            case .string(let s): return Value.jsonString(s)
            case .array(let a):
                if a.isEmpty { return "[]" }
                guard let indent else { return "[" + a.map { $0.json(indent: nil) }.joined(separator: ", ") + "]" }
                let pad = String(repeating: " ", count: indent * (level + 1))
                let inner = a.map { pad + $0.json(indent: indent, level: level + 1) }.joined(separator: ",\n")
                return "[\n" + inner + "\n" + String(repeating: " ", count: indent * level) + "]"
            case .object(let d, let keys):
                if keys.isEmpty { return "{}" }
                guard let indent else {
                    return "{" + keys.map { Value.jsonString($0) + ": " + (d[$0] ?? .none).json(indent: nil) }.joined(separator: ", ") + "}"
                }
                let pad = String(repeating: " ", count: indent * (level + 1))
                let inner = keys.map { pad + Value.jsonString($0) + ": " + (d[$0] ?? .none).json(indent: indent, level: level + 1) }
                return "{\n" + inner.joined(separator: ",\n") + "\n" + String(repeating: " ", count: indent * level) + "}"
            case .namespace, .function: return "null"
            }
        }

        /// A JSON string literal as transformers' `tojson` writes it (`json.dumps` with
        /// `ensure_ascii=False`): only quotes, backslashes and control characters are escaped.
        static func jsonString(_ s: String) -> String {
            var out = "\""
            for u in s.unicodeScalars {
                switch u {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case "\u{08}": out += "\\b"
                case "\u{0C}": out += "\\f"
                default:
                    if u.value < 0x20 {
                        out += String(format: "\\u%04x", u.value)
                    } else {
                        out.unicodeScalars.append(u)
                    }
                }
            }
            return out + "\""
        }

        var items: [Value]? {
            switch self {
            case .array(let a): return a
            case .string(let s): return s.map { .string(String($0)) }
            case .object(_, let keys): return keys.map { .string($0) }
            default: return nil
            }
        }
    }

    /// Renders parsed templates.
    struct Interpreter {
        var scopes: [[String: Value]]
        var output = ""
        /// Work budget: templates are untrusted input, so rendering stops (and the caller falls
        /// back to the built-in format) after this many steps or this much output.
        var stepsLeft = 500_000
        static let maxOutputBytes = 8 << 20
        let now: Date

        init(globals: [String: Value], now: Date) {
            scopes = [globals]
            self.now = now
        }

        enum Flow { case normal, breakLoop, continueLoop }

        func lookup(_ name: String) -> Value {
            for scope in scopes.reversed() { if let v = scope[name] { return v } }
            switch name {
            case "raise_exception", "namespace", "range", "strftime_now", "dict": return .function(name)
            default: return .undefined
            }
        }

        mutating func run(_ nodes: [Node]) throws -> Flow {
            for node in nodes {
                stepsLeft -= 1
                guard stepsLeft > 0, output.utf8.count <= Interpreter.maxOutputBytes else {
                    throw Error(message: "template rendering exceeded its work budget")
                }
                switch node {
                case .text(let t):
                    output += t
                case .output(let e):
                    output += try eval(e).text
                case .ifBlock(let branches, let elseNodes):
                    var taken = false
                    for (cond, body) in branches where try eval(cond).isTruthy {
                        taken = true
                        let flow = try run(body)
                        if flow != .normal { return flow }
                        break
                    }
                    if !taken {
                        let flow = try run(elseNodes)
                        if flow != .normal { return flow }
                    }
                case .forBlock(let targets, let iterableExpr, let filter, let body, let elseNodes):
                    let iterable = try eval(iterableExpr)
                    var items: [Value]
                    switch iterable {
                    case .undefined, .none: items = []
                    default:
                        guard let list = iterable.items else { throw Error(message: "cannot iterate over \(iterable.text)") }
                        items = list
                    }
                    if let filter {
                        var kept: [Value] = []
                        for item in items {
                            stepsLeft -= 1
                            guard stepsLeft > 0 else { throw Error(message: "template rendering exceeded its work budget") }
                            scopes.append(bind(targets, item))
                            defer { scopes.removeLast() }
                            if try eval(filter).isTruthy { kept.append(item) }
                        }
                        items = kept
                    }
                    if items.isEmpty { _ = try run(elseNodes); continue }
                    for (index, item) in items.enumerated() {
                        stepsLeft -= 1
                        guard stepsLeft > 0 else { throw Error(message: "template rendering exceeded its work budget") }
                        var scope = bind(targets, item)
                        let n = items.count
                        scope["loop"] = .object([
                            ("index", .int(index + 1)), ("index0", .int(index)),
                            ("revindex", .int(n - index)), ("revindex0", .int(n - index - 1)),
                            ("first", .bool(index == 0)), ("last", .bool(index == n - 1)), ("length", .int(n)),
                            ("previtem", index > 0 ? items[index - 1] : .undefined),
                            ("nextitem", index + 1 < n ? items[index + 1] : .undefined),
                        ])
                        scopes.append(scope)
                        let flow = try run(body)
                        scopes.removeLast()
                        if flow == .breakLoop { break }
                    }
                case .set(let name, let attr, let expr):
                    let value = try eval(expr)
                    if let attr {
                        guard case .namespace(let ns) = lookup(name) else {
                            throw Error(message: "cannot set attribute of \(name)")
                        }
                        ns.values[attr] = value
                    } else {
                        scopes[scopes.count - 1][name] = value
                    }
                case .breakLoop:
                    return .breakLoop
                case .continueLoop:
                    return .continueLoop
                }
            }
            return .normal
        }

        func bind(_ targets: [String], _ item: Value) -> [String: Value] {
            if targets.count == 1 { return [targets[0]: item] }
            var scope: [String: Value] = [:]
            let parts = item.items ?? []
            for (k, t) in targets.enumerated() { scope[t] = k < parts.count ? parts[k] : .undefined }
            return scope
        }

        // MARK: Expressions

        func eval(_ e: Expr) throws -> Value {
            switch e {
            case .literal(let v): return v
            case .name(let n): return lookup(n)
            case .list(let items): return .array(try items.map { try eval($0) })
            case .dict(let pairs): return .object(try pairs.map { (try eval($0.0).text, try eval($0.1)) })
            case .attribute(let base, let name):
                let b = try eval(base)
                return member(b, name)
            case .index(let base, let key):
                return try subscriptValue(try eval(base), try eval(key))
            case .slice(let base, let a, let b, let c):
                return try slice(try eval(base), try a.map { try eval($0) }, try b.map { try eval($0) }, try c.map { try eval($0) })
            case .call(let callee, let argExprs, let kwargExprs):
                let args = try argExprs.map { try eval($0) }
                let kwargs = try kwargExprs.map { ($0.0, try eval($0.1)) }
                if case .attribute(let base, let method) = callee {
                    let receiver = try eval(base)
                    if case .object(let d, _) = receiver, let v = d[method], case .function = v {
                        return try callFunction(v, args, kwargs)
                    }
                    return try callMethod(receiver, method, args, kwargs)
                }
                return try callFunction(try eval(callee), args, kwargs)
            case .filter(let base, let name, let argExprs, let kwargExprs):
                let args = try argExprs.map { try eval($0) }
                let kwargs = try kwargExprs.map { ($0.0, try eval($0.1)) }
                return try applyFilter(name, try eval(base), args, kwargs)
            case .test(let base, let name, let argExprs, let negated):
                let result = try applyTest(name, try eval(base), try argExprs.map { try eval($0) })
                return .bool(negated ? !result : result)
            case .unary(let op, let x):
                let v = try eval(x)
                if op == "not" { return .bool(!v.isTruthy) }
                switch v {
                case .int(let i): return .int(-i)
                case .double(let d): return .double(-d)
                default: throw Error(message: "cannot negate \(v.text)")
                }
            case .binary(let op, let l, let r):
                if op == "and" { let a = try eval(l); return a.isTruthy ? try eval(r) : a }
                if op == "or" { let a = try eval(l); return a.isTruthy ? a : try eval(r) }
                return try binary(op, try eval(l), try eval(r))
            case .conditional(let cond, let yes, let no):
                if try eval(cond).isTruthy { return try eval(yes) }
                return try no.map { try eval($0) } ?? .undefined
            }
        }

        func member(_ b: Value, _ name: String) -> Value {
            switch b {
            case .object(let d, _): return d[name] ?? .undefined
            case .namespace(let ns): return ns.values[name] ?? .undefined
            default: return .undefined
            }
        }

        func subscriptValue(_ b: Value, _ k: Value) throws -> Value {
            switch (b, k) {
            case (.array(let a), .int(let i)):
                let idx = i < 0 ? a.count + i : i
                return idx >= 0 && idx < a.count ? a[idx] : .undefined
            case (.string(let s), .int(let i)):
                let chars = Array(s)
                let idx = i < 0 ? chars.count + i : i
                return idx >= 0 && idx < chars.count ? .string(String(chars[idx])) : .undefined
            case (.object(let d, _), _): return d[k.text] ?? .undefined
            case (.namespace(let ns), _): return ns.values[k.text] ?? .undefined
            default: return .undefined
            }
        }

        func slice(_ b: Value, _ start: Value?, _ stop: Value?, _ step: Value?) throws -> Value {
            var stepValue = 1
            if let step, case .int(let s) = step { stepValue = s }
            guard stepValue != 0 else { throw Error(message: "slice step cannot be zero") }
            func indices(_ n: Int) -> [Int] {
                func norm(_ v: Value?, _ def: Int) -> Int {
                    guard let v, case .int(var i) = v else { return def }
                    if i < 0 { i += n }
                    return stepValue > 0 ? min(max(i, 0), n) : min(max(i, -1), n - 1)
                }
                var out: [Int] = []
                if stepValue > 0 {
                    var i = norm(start, 0); let e = norm(stop, n)
                    while i < e { out.append(i); i += stepValue }
                } else {
                    var i = norm(start, n - 1); let e = norm(stop, -1)
                    while i > e { out.append(i); i += stepValue }
                }
                return out
            }
            switch b {
            case .array(let a): return .array(indices(a.count).map { a[$0] })
            case .string(let s):
                let chars = Array(s)
                return .string(String(indices(chars.count).map { chars[$0] }))
            default: return .undefined
            }
        }

        func binary(_ op: String, _ a: Value, _ b: Value) throws -> Value {
            switch op {
            case "==": return .bool(equal(a, b))
            case "!=": return .bool(!equal(a, b))
            case "<", ">", "<=", ">=":
                let c: Bool
                switch (a, b) {
                case (.string(let x), .string(let y)):
                    c = op == "<" ? x < y : op == ">" ? x > y : op == "<=" ? x <= y : x >= y
                default:
                    guard let x = number(a), let y = number(b) else { throw Error(message: "cannot compare \(a.text) and \(b.text)") }
                    c = op == "<" ? x < y : op == ">" ? x > y : op == "<=" ? x <= y : x >= y
                }
                return .bool(c)
            case "in":
                switch b {
                case .string(let s): return .bool(s.contains(a.text))
                case .array(let arr): return .bool(arr.contains { equal($0, a) })
                case .object(let d, _): return .bool(d[a.text] != nil)
                case .undefined, .none: return .bool(false)
                default: throw Error(message: "'in' needs a container")
                }
            case "~": return .string(a.text + b.text)
            case "+":
                switch (a, b) {
                case (.int(let x), .int(let y)): return .int(x + y)
                case (.array(let x), .array(let y)): return .array(x + y)
                case (.string, _), (_, .string), (.undefined, _), (_, .undefined):
                    if case .string = a {} else if case .string = b {} else if number(a) != nil && number(b) != nil {
                        return .double((number(a) ?? 0) + (number(b) ?? 0))
                    }
                    return .string(a.text + b.text)
                default:
                    guard let x = number(a), let y = number(b) else { throw Error(message: "cannot add \(a.text) and \(b.text)") }
                    return .double(x + y)
                }
            case "-", "*", "/", "//", "%":
                if op == "*", case .string(let s) = a, case .int(let n) = b {
                    guard s.utf8.count * max(n, 0) <= Interpreter.maxOutputBytes else { throw Error(message: "string too long") }
                    return .string(String(repeating: s, count: max(n, 0)))
                }
                if case .int(let x) = a, case .int(let y) = b, op != "/" {
                    switch op {
                    case "-": return .int(x - y)
                    case "*": return .int(x * y)
                    default:
                        guard y != 0 else { throw Error(message: "division by zero") }
                        let q = Int((Double(x) / Double(y)).rounded(.down))
                        return op == "//" ? .int(q) : .int(x - q * y)
                    }
                }
                guard let x = number(a), let y = number(b) else { throw Error(message: "bad operands for \(op)") }
                switch op {
                case "-": return .double(x - y)
                case "*": return .double(x * y)
                case "/": guard y != 0 else { throw Error(message: "division by zero") }; return .double(x / y)
                case "//": return .double((x / y).rounded(.down))
                default: return .double(x - (x / y).rounded(.down) * y)
                }
            default:
                throw Error(message: "unknown operator \(op)")
            }
        }

        func number(_ v: Value) -> Double? {
            switch v {
            case .int(let i): return Double(i)
            case .double(let d): return d
            case .bool(let b): return b ? 1 : 0
            default: return nil
            }
        }

        func equal(_ a: Value, _ b: Value) -> Bool {
            switch (a, b) {
            case (.undefined, .undefined), (.none, .none): return true
            case (.string(let x), .string(let y)): return x == y
            case (.bool(let x), .bool(let y)): return x == y
            case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
            case (.object(let x, _), .object(let y, _)):
                return x.count == y.count && x.allSatisfy { k, v in y[k].map { equal(v, $0) } ?? false }
            default:
                if let x = number(a), let y = number(b) {
                    if case .bool = a { return false }
                    if case .bool = b { return false }
                    return x == y
                }
                return false
            }
        }
    }
}
