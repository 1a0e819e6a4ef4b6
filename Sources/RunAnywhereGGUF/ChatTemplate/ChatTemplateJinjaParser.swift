/// Expression tokenizer and parser of the Jinja subset.
extension Jinja {
    enum Token: Equatable {
        case name(String)
        case string(String)
        case int(Int)
        case double(Double)
        case punct(String)
    }

    static func tokenize(_ source: String) throws -> [Token] {
        let s = Array(source.unicodeScalars)
        var tokens: [Token] = []
        var i = 0
        while i < s.count {
            let c = s[i]
            if c.properties.isWhitespace { i += 1; continue }
            if c == "'" || c == "\"" {
                var out = String.UnicodeScalarView()
                var j = i + 1
                while j < s.count, s[j] != c {
                    if s[j] == "\\", j + 1 < s.count {
                        j += 1
                        switch s[j] {
                        case "n": out.append("\n")
                        case "t": out.append("\t")
                        case "r": out.append("\r")
                        case "\\": out.append("\\")
                        case "'": out.append("'")
                        case "\"": out.append("\"")
                        default: out.append("\\"); out.append(s[j])
                        }
                    } else {
                        out.append(s[j])
                    }
                    j += 1
                }
                guard j < s.count else { throw Error(message: "unterminated string") }
                tokens.append(.string(String(out)))
                i = j + 1
                continue
            }
            if c.properties.isAlphabetic || c == "_" {
                var j = i
                while j < s.count, s[j].properties.isAlphabetic || s[j] == "_" || ("0"..."9").contains(s[j]) { j += 1 }
                tokens.append(.name(String(String.UnicodeScalarView(s[i..<j]))))
                i = j
                continue
            }
            if ("0"..."9").contains(c) {
                var j = i
                var isDouble = false
                while j < s.count, ("0"..."9").contains(s[j]) || (s[j] == "." && !isDouble && j + 1 < s.count && ("0"..."9").contains(s[j + 1])) {
                    if s[j] == "." { isDouble = true }
                    j += 1
                }
                let text = String(String.UnicodeScalarView(s[i..<j]))
                if isDouble { tokens.append(.double(Double(text) ?? 0)) } else { tokens.append(.int(Int(text) ?? 0)) }
                i = j
                continue
            }
            let two = i + 1 < s.count ? String(String.UnicodeScalarView([c, s[i + 1]])) : ""
            if ["==", "!=", "<=", ">=", "//", "**"].contains(two) {
                tokens.append(.punct(two)); i += 2; continue
            }
            if "+-*/%~<>=()[]{}.,:|!".unicodeScalars.contains(c) {
                tokens.append(.punct(String(c))); i += 1; continue
            }
            throw Error(message: "unexpected character '\(c)'")
        }
        return tokens
    }

    struct ExprParser {
        var tokens: [Token]
        var pos = 0
        /// Nesting depth of parentheses, lists, dicts and calls (bounded: templates are untrusted input).
        var depth = 0
        static let maxDepth = 100
        /// Operators and postfix operations in one tag (each nests the tree one level deeper).
        var operations = 0

        mutating func grow() throws {
            operations += 1
            guard operations <= 1000 else { throw Error(message: "expression too long") }
        }
        var tokenizeError: Error?

        init(_ source: String) {
            do { tokens = try Jinja.tokenize(source) } catch let e as Error { tokens = []; tokenizeError = e } catch { tokens = [] }
        }

        func peek(_ offset: Int = 0) -> Token? { pos + offset < tokens.count ? tokens[pos + offset] : nil }
        mutating func advance() { pos += 1 }
        mutating func consume(_ t: Token) -> Bool {
            if peek() == t { pos += 1; return true }
            return false
        }
        mutating func expect(_ t: Token) throws {
            guard consume(t) else { throw Error(message: "expected \(t), found \(String(describing: peek()))") }
        }
        func expectEnd() throws {
            if let e = tokenizeError { throw e }
            if pos != tokens.count { throw Error(message: "unexpected \(String(describing: peek()))") }
        }

        mutating func parseExpression() throws -> Expr {
            if let e = tokenizeError { throw e }
            depth += 1
            defer { depth -= 1 }
            guard depth <= ExprParser.maxDepth else { throw Error(message: "expression nested too deeply") }
            return try parseOr(allowConditional: true)
        }

        mutating func parseOr(allowConditional: Bool) throws -> Expr {
            var left = try parseAnd()
            while consume(.name("or")) { try grow(); left = .binary("or", left, try parseAnd()) }
            if allowConditional, consume(.name("if")) {
                let cond = try parseOr(allowConditional: false)
                var other: Expr? = nil
                if consume(.name("else")) { other = try parseOr(allowConditional: true) }
                return .conditional(cond, left, other)
            }
            return left
        }

        mutating func parseAnd() throws -> Expr {
            var left = try parseNot()
            while consume(.name("and")) { try grow(); left = .binary("and", left, try parseNot()) }
            return left
        }

        mutating func parseNot() throws -> Expr {
            if consume(.name("not")) {
                depth += 1
                defer { depth -= 1 }
                guard depth <= ExprParser.maxDepth else { throw Error(message: "expression nested too deeply") }
                return .unary("not", try parseNot())
            }
            return try parseComparison()
        }

        mutating func parseComparison() throws -> Expr {
            var left = try parseConcat()
            while true {
                try grow()
                if let t = peek(), case .punct(let op) = t, ["==", "!=", "<", ">", "<=", ">="].contains(op) {
                    advance(); left = .binary(op, left, try parseConcat())
                } else if consume(.name("in")) {
                    left = .binary("in", left, try parseConcat())
                } else if peek() == .name("not"), peek(1) == .name("in") {
                    advance(); advance()
                    left = .unary("not", .binary("in", left, try parseConcat()))
                } else {
                    return left
                }
            }
        }

        mutating func parseConcat() throws -> Expr {
            var left = try parseAdditive()
            while consume(.punct("~")) { try grow(); left = .binary("~", left, try parseAdditive()) }
            return left
        }

        mutating func parseAdditive() throws -> Expr {
            var left = try parseMultiplicative()
            while let t = peek(), case .punct(let op) = t, op == "+" || op == "-" {
                advance(); try grow(); left = .binary(op, left, try parseMultiplicative())
            }
            return left
        }

        mutating func parseMultiplicative() throws -> Expr {
            var left = try parseUnary()
            while let t = peek(), case .punct(let op) = t, ["*", "/", "//", "%"].contains(op) {
                advance(); try grow(); left = .binary(op, left, try parseUnary())
            }
            return left
        }

        mutating func parseUnary() throws -> Expr {
            if peek() == .punct("-") || peek() == .punct("+") {
                let negate = peek() == .punct("-")
                advance()
                depth += 1
                defer { depth -= 1 }
                guard depth <= ExprParser.maxDepth else { throw Error(message: "expression nested too deeply") }
                let operand = try parseUnary()
                return negate ? .unary("-", operand) : operand
            }
            return try parsePostfix(try parsePrimary())
        }

        mutating func parseArguments() throws -> ([Expr], [(String, Expr)]) {
            var args: [Expr] = []
            var kwargs: [(String, Expr)] = []
            if consume(.punct(")")) { return (args, kwargs) }
            repeat {
                if case .name(let n)? = peek(), peek(1) == .punct("=") {
                    advance(); advance()
                    kwargs.append((n, try parseExpression()))
                } else {
                    args.append(try parseExpression())
                }
            } while consume(.punct(","))
            try expect(.punct(")"))
            return (args, kwargs)
        }

        mutating func parsePostfix(_ base: Expr) throws -> Expr {
            var e = base
            while true {
                try grow()
                if consume(.punct(".")) {
                    guard case .name(let n)? = peek() else { throw Error(message: "expected attribute name") }
                    advance(); e = .attribute(e, n)
                } else if consume(.punct("[")) {
                    var start: Expr? = nil, stop: Expr? = nil, step: Expr? = nil
                    var isSlice = false
                    if peek() != .punct(":") { start = try parseExpression() }
                    if consume(.punct(":")) {
                        isSlice = true
                        if peek() != .punct(":") && peek() != .punct("]") { stop = try parseExpression() }
                        if consume(.punct(":")) && peek() != .punct("]") { step = try parseExpression() }
                    }
                    try expect(.punct("]"))
                    if isSlice { e = .slice(e, start, stop, step) } else if let start { e = .index(e, start) }
                    else { throw Error(message: "empty subscript") }
                } else if consume(.punct("(")) {
                    let (args, kwargs) = try parseArguments()
                    e = .call(e, args, kwargs)
                } else if consume(.punct("|")) {
                    guard case .name(let n)? = peek() else { throw Error(message: "expected filter name") }
                    advance()
                    var args: [Expr] = [], kwargs: [(String, Expr)] = []
                    if consume(.punct("(")) { (args, kwargs) = try parseArguments() }
                    e = .filter(e, n, args, kwargs)
                } else if consume(.name("is")) {
                    let negated = consume(.name("not"))
                    guard case .name(let n)? = peek() else { throw Error(message: "expected test name") }
                    advance()
                    var args: [Expr] = []
                    if consume(.punct("(")) { args = try parseArguments().0 }
                    else if let t = peek(), case .int = t { args = [try parsePrimary()] }
                    e = .test(e, n, args, negated: negated)
                } else {
                    return e
                }
            }
        }

        mutating func parsePrimary() throws -> Expr {
            guard let t = peek() else { throw Error(message: "unexpected end of expression") }
            advance()
            switch t {
            case .string(var s):
                while case .string(let more)? = peek() { s += more; advance() }   // adjacent literals
                return .literal(.string(s))
            case .int(let v): return .literal(.int(v))
            case .double(let v): return .literal(.double(v))
            case .name(let n):
                switch n {
                case "true", "True": return .literal(.bool(true))
                case "false", "False": return .literal(.bool(false))
                case "none", "None": return .literal(.none)
                default: return .name(n)
                }
            case .punct("("):
                let e = try parseExpression()
                if consume(.punct(",")) {
                    var items = [e]
                    while peek() != .punct(")") {
                        items.append(try parseExpression())
                        if !consume(.punct(",")) { break }
                    }
                    try expect(.punct(")"))
                    return .list(items)
                }
                try expect(.punct(")"))
                return e
            case .punct("["):
                var items: [Expr] = []
                while peek() != .punct("]") {
                    items.append(try parseExpression())
                    if !consume(.punct(",")) { break }
                }
                try expect(.punct("]"))
                return .list(items)
            case .punct("{"):
                var pairs: [(Expr, Expr)] = []
                while peek() != .punct("}") {
                    let k = try parseExpression()
                    try expect(.punct(":"))
                    pairs.append((k, try parseExpression()))
                    if !consume(.punct(",")) { break }
                }
                try expect(.punct("}"))
                return .dict(pairs)
            default:
                throw Error(message: "unexpected \(t)")
            }
        }
    }
}
