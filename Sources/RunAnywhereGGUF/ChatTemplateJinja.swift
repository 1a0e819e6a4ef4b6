/// A small interpreter for the subset of Jinja2 used by model chat templates, configured as
/// Hugging Face `apply_chat_template` configures Jinja (`trim_blocks`, `lstrip_blocks`).
///
/// Supported: `{{ }}` output, `{% if/elif/else %}`, `{% for a[, b] in x [if c] %}` with `loop.*`
/// and `else`, `{% set x = ... %}` (also `set ns.attr`), `{% break/continue %}`,
/// `{% generation %}` blocks, comments, `-` whitespace control; expressions with literals,
/// lists, dicts, attribute/index/slice access, arithmetic, comparison, `in`, `and/or/not`,
/// conditional expressions, `~`, filters, `is` tests, string methods and `namespace()`.
enum Jinja {
    struct Error: Swift.Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    indirect enum Expr {
        case literal(Value)
        case name(String)
        case list([Expr])
        case dict([(Expr, Expr)])
        case attribute(Expr, String)
        case index(Expr, Expr)
        case slice(Expr, Expr?, Expr?, Expr?)
        case call(Expr, [Expr], [(String, Expr)])
        case filter(Expr, String, [Expr], [(String, Expr)])
        case test(Expr, String, [Expr], negated: Bool)
        case unary(String, Expr)
        case binary(String, Expr, Expr)
        case conditional(Expr, Expr, Expr?)
    }

    indirect enum Node {
        case text(String)
        case output(Expr)
        case ifBlock([(Expr, [Node])], [Node])
        case forBlock([String], Expr, Expr?, [Node], [Node])
        case set(String, String?, Expr)
        case breakLoop
        case continueLoop
    }

    // MARK: Lexer

    enum Piece {
        case text(String)
        case expression(String)
        case statement(String)
    }

    /// Splits a template into text, `{{ }}` and `{% %}` pieces, applying whitespace control,
    /// `trim_blocks` and `lstrip_blocks`, and dropping comments.
    static func lex(_ source: String) throws -> [Piece] {
        let s = Array(source.unicodeScalars)
        var pieces: [Piece] = []
        var text: [Unicode.Scalar] = []
        var i = 0
        var trimNextNewline = false     // trim_blocks after %} or #}
        var stripNextWhitespace = false // after a -%} / -}} / -#}
        func flushText() {
            if !text.isEmpty { pieces.append(.text(String(String.UnicodeScalarView(text)))); text.removeAll() }
        }
        while i < s.count {
            if s[i] == "{", i + 1 < s.count, s[i + 1] == "{" || s[i + 1] == "%" || s[i + 1] == "#" {
                let kind = s[i + 1]
                let close: Unicode.Scalar = kind == "{" ? "}" : (kind == "%" ? "%" : "#")
                var j = i + 2
                var stripBefore = false, keepBefore = false
                if j < s.count, s[j] == "-" { stripBefore = true; j += 1 } else if j < s.count, s[j] == "+" { keepBefore = true; j += 1 }
                // Find the closing delimiter, skipping string literals inside tags.
                var k = j
                var quote: Unicode.Scalar? = nil
                var endStart = -1
                while k + 1 < s.count {
                    let c = s[k]
                    if let q = quote {
                        if c == "\\" { k += 2; continue }
                        if c == q { quote = nil }
                    } else if kind != "#" && (c == "'" || c == "\"") {
                        quote = c
                    } else if c == close && s[k + 1] == "}" {
                        endStart = k
                        break
                    }
                    k += 1
                }
                guard endStart >= 0 else { throw Error(message: "unclosed tag at offset \(i)") }
                var contentEnd = endStart
                var stripAfter = false
                if contentEnd > j, s[contentEnd - 1] == "-" { stripAfter = true; contentEnd -= 1 }
                else if contentEnd > j, s[contentEnd - 1] == "+" { contentEnd -= 1 }
                // Whitespace before the tag.
                if stripBefore {
                    while let last = text.last, last.properties.isWhitespace { text.removeLast() }
                } else if kind != "{" && !keepBefore {
                    // lstrip_blocks: remove spaces/tabs between a line start (in the source) and the tag.
                    var m = i
                    while m > 0, s[m - 1] == " " || s[m - 1] == "\t" { m -= 1 }
                    if m == 0 || s[m - 1] == "\n" {
                        var n = 0
                        while n < i - m, let last = text.last, last == " " || last == "\t" { text.removeLast(); n += 1 }
                    }
                }
                flushText()
                let content = String(String.UnicodeScalarView(s[j..<contentEnd]))
                if kind == "{" { pieces.append(.expression(content)) }
                else if kind == "%" { pieces.append(.statement(content)) }
                i = endStart + 2
                stripNextWhitespace = stripAfter
                trimNextNewline = kind != "{" && !stripAfter
                if stripNextWhitespace {
                    while i < s.count, s[i].properties.isWhitespace { i += 1 }
                } else if trimNextNewline, i < s.count, s[i] == "\n" {
                    i += 1
                }
                continue
            }
            text.append(s[i])
            i += 1
        }
        flushText()
        return pieces
    }

    // MARK: Statement parser

    static func parse(_ source: String) throws -> [Node] {
        let pieces = try lex(source)
        var index = 0
        let (nodes, end) = try parseNodes(pieces, &index, until: [])
        if let end { throw Error(message: "unexpected {% \(end) %}") }
        return nodes
    }

    /// Parses nodes until a statement whose first word is in `until` (returned, not consumed
    /// further than its own piece) or the end.
    private static func parseNodes(_ pieces: [Piece], _ i: inout Int, until: Set<String>) throws -> ([Node], String?) {
        var nodes: [Node] = []
        while i < pieces.count {
            let piece = pieces[i]
            i += 1
            switch piece {
            case .text(let t):
                nodes.append(.text(t))
            case .expression(let e):
                var p = ExprParser(e)
                let expr = try p.parseExpression()
                try p.expectEnd()
                nodes.append(.output(expr))
            case .statement(let st):
                var p = ExprParser(st)
                guard case .name(let keyword)? = p.peek() else { throw Error(message: "empty statement") }
                if until.contains(keyword) { i -= 1; return (nodes, keyword) }
                p.advance()
                switch keyword {
                case "if":
                    let cond = try p.parseExpression(); try p.expectEnd()
                    var branches: [(Expr, [Node])] = []
                    var elseNodes: [Node] = []
                    var currentCond = cond
                    while true {
                        let (body, end) = try parseNodes(pieces, &i, until: ["elif", "else", "endif"])
                        guard let end else { throw Error(message: "missing endif") }
                        branches.append((currentCond, body))
                        guard case .statement(let endSt) = pieces[i] else { throw Error(message: "bad if") }
                        i += 1
                        if end == "endif" { break }
                        if end == "else" {
                            let (body2, end2) = try parseNodes(pieces, &i, until: ["endif"])
                            guard end2 == "endif" else { throw Error(message: "missing endif") }
                            i += 1
                            elseNodes = body2
                            break
                        }
                        var q = ExprParser(endSt); q.advance()
                        currentCond = try q.parseExpression(); try q.expectEnd()
                    }
                    nodes.append(.ifBlock(branches, elseNodes))
                case "for":
                    var targets: [String] = []
                    repeat {
                        guard case .name(let n)? = p.peek() else { throw Error(message: "bad for target") }
                        targets.append(n); p.advance()
                    } while p.consume(.punct(","))
                    guard p.consume(.name("in")) else { throw Error(message: "expected 'in'") }
                    let iterable = try p.parseOr(allowConditional: false)
                    var filter: Expr? = nil
                    if p.consume(.name("if")) { filter = try p.parseExpression() }
                    _ = p.consume(.name("recursive"))
                    try p.expectEnd()
                    let (body, end) = try parseNodes(pieces, &i, until: ["else", "endfor"])
                    guard let end else { throw Error(message: "missing endfor") }
                    i += 1
                    var elseNodes: [Node] = []
                    if end == "else" {
                        let (b2, e2) = try parseNodes(pieces, &i, until: ["endfor"])
                        guard e2 == "endfor" else { throw Error(message: "missing endfor") }
                        i += 1
                        elseNodes = b2
                    }
                    nodes.append(.forBlock(targets, iterable, filter, body, elseNodes))
                case "set":
                    guard case .name(let name)? = p.peek() else { throw Error(message: "bad set target") }
                    p.advance()
                    var attr: String? = nil
                    if p.consume(.punct(".")) {
                        guard case .name(let a)? = p.peek() else { throw Error(message: "bad set attribute") }
                        attr = a; p.advance()
                    }
                    guard p.consume(.punct("=")) else { throw Error(message: "block set is not supported") }
                    let value = try p.parseExpression(); try p.expectEnd()
                    nodes.append(.set(name, attr, value))
                case "break":
                    nodes.append(.breakLoop)
                case "continue":
                    nodes.append(.continueLoop)
                case "generation":
                    let (body, end) = try parseNodes(pieces, &i, until: ["endgeneration"])
                    guard end != nil else { throw Error(message: "missing endgeneration") }
                    i += 1
                    nodes.append(contentsOf: body)
                default:
                    throw Error(message: "unsupported statement '\(keyword)'")
                }
            }
        }
        return (nodes, nil)
    }
}

// MARK: Expression tokens and parser

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
            return try parseOr(allowConditional: true)
        }

        mutating func parseOr(allowConditional: Bool) throws -> Expr {
            var left = try parseAnd()
            while consume(.name("or")) { left = .binary("or", left, try parseAnd()) }
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
            while consume(.name("and")) { left = .binary("and", left, try parseNot()) }
            return left
        }

        mutating func parseNot() throws -> Expr {
            if consume(.name("not")) { return .unary("not", try parseNot()) }
            return try parseComparison()
        }

        mutating func parseComparison() throws -> Expr {
            var left = try parseConcat()
            while true {
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
            while consume(.punct("~")) { left = .binary("~", left, try parseAdditive()) }
            return left
        }

        mutating func parseAdditive() throws -> Expr {
            var left = try parseMultiplicative()
            while let t = peek(), case .punct(let op) = t, op == "+" || op == "-" {
                advance(); left = .binary(op, left, try parseMultiplicative())
            }
            return left
        }

        mutating func parseMultiplicative() throws -> Expr {
            var left = try parseUnary()
            while let t = peek(), case .punct(let op) = t, ["*", "/", "//", "%"].contains(op) {
                advance(); left = .binary(op, left, try parseUnary())
            }
            return left
        }

        mutating func parseUnary() throws -> Expr {
            if consume(.punct("-")) { return .unary("-", try parseUnary()) }
            if consume(.punct("+")) { return try parseUnary() }
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
