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

    indirect enum Expr: Sendable {
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

    indirect enum Node: Sendable {
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
        let (nodes, end) = try parseNodes(pieces, &index, until: [], depth: 0)
        if let end { throw Error(message: "unexpected {% \(end) %}") }
        return nodes
    }

    /// Parses nodes until a statement whose first word is in `until` (returned, not consumed
    /// further than its own piece) or the end.
    private static func parseNodes(_ pieces: [Piece], _ i: inout Int, until: Set<String>,
                                   depth: Int) throws -> ([Node], String?) {
        guard depth <= 100 else { throw Error(message: "blocks nested too deeply") }
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
                        let (body, end) = try parseNodes(pieces, &i, until: ["elif", "else", "endif"], depth: depth + 1)
                        guard let end else { throw Error(message: "missing endif") }
                        branches.append((currentCond, body))
                        guard case .statement(let endSt) = pieces[i] else { throw Error(message: "bad if") }
                        i += 1
                        if end == "endif" { break }
                        if end == "else" {
                            let (body2, end2) = try parseNodes(pieces, &i, until: ["endif"], depth: depth + 1)
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
                    let (body, end) = try parseNodes(pieces, &i, until: ["else", "endfor"], depth: depth + 1)
                    guard let end else { throw Error(message: "missing endfor") }
                    i += 1
                    var elseNodes: [Node] = []
                    if end == "else" {
                        let (b2, e2) = try parseNodes(pieces, &i, until: ["endfor"], depth: depth + 1)
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
                    let (body, end) = try parseNodes(pieces, &i, until: ["endgeneration"], depth: depth + 1)
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
