import Foundation
import RunAnywhereGGUF
import Testing

@Suite("Chat templates")
struct ChatTemplateTests {
    static let conversations: [String: [ChatMessage]] = [
        "single": [ChatMessage(role: "user", content: "Hello")],
        "multi": [ChatMessage(role: "system", content: "You are terse."), ChatMessage(role: "user", content: "Hi"),
                  ChatMessage(role: "assistant", content: "Hello!"), ChatMessage(role: "user", content: "How are you?")],
        "think": [ChatMessage(role: "user", content: "2+2?"),
                  ChatMessage(role: "assistant", content: "<think>\nadd them\n</think>\n\n4"),
                  ChatMessage(role: "user", content: "and 3+3?")],
    ]

    static let sources: [String: String] = [
        "qwen2": ChatTemplateFixtures.qwen2, "smollm2": ChatTemplateFixtures.smollm2,
        "llama3": ChatTemplateFixtures.llama3, "llama2": ChatTemplateFixtures.llama2,
        "qwen25": ChatTemplateFixtures.qwen25, "qwen3": ChatTemplateFixtures.qwen3,
        "llama32": ChatTemplateFixtures.llama32, "llama33": ChatTemplateFixtures.llama33,
        "gemma2": ChatTemplateFixtures.gemma2, "phi35": ChatTemplateFixtures.phi35,
        "mistralnemo": ChatTemplateFixtures.mistralnemo,
    ]
    static let bos = ["llama2": "<s>", "mistralnemo": "<s>", "gemma2": "<bos>", "phi35": "<s>"]
    static let eos = ["llama2": "</s>", "mistralnemo": "</s>", "gemma2": "<eos>", "phi35": "<|endoftext|>"]

    static func template(_ name: String) -> ChatTemplate {
        var t = ChatTemplate(source: sources[name] ?? "", bosToken: bos[name] ?? "<|begin_of_text|>",
                             eosToken: eos[name] ?? "<|eot_id|>")
        t.currentDate = Calendar.current.date(from: DateComponents(year: 2026, month: 3, day: 7, hour: 12))
        return t
    }

    @Test("real templates render exactly as Python Jinja2 renders them", arguments: Array(sources.keys).sorted())
    func matchesJinja(name: String) throws {
        let template = Self.template(name)
        #expect(template.isInterpretable)
        let cases = ChatTemplateFixtures.expected.filter { $0.template == name }
        #expect(!cases.isEmpty)
        for c in cases {
            let messages = try #require(Self.conversations[c.conversation])
            let got = template.render(messages, addGenerationPrompt: c.addGenerationPrompt, enableThinking: c.enableThinking)
            guard let expected = c.output else {
                // The template raises (Gemma 2 has no system role): the family's built-in format is used.
                #expect(!got.isEmpty)
                continue
            }
            #expect(got == expected, "\(name) \(c.conversation) gen=\(c.addGenerationPrompt) thinking=\(String(describing: c.enableThinking))")
        }
    }

    @Test("families are recognised from the template text")
    func families() {
        #expect(Self.template("qwen25").family == "chatml")
        #expect(Self.template("qwen3").family == "chatml")
        #expect(Self.template("smollm2").family == "chatml")
        #expect(Self.template("llama3").family == "llama3")
        #expect(Self.template("llama32").family == "llama3")
        #expect(Self.template("llama2").family == "llama2")
        #expect(Self.template("mistralnemo").family == "llama2")
        #expect(Self.template("gemma2").family == "gemma")
        #expect(Self.template("phi35").family == "phi3")
    }

    @Test("Qwen3 without enable_thinking leaves the think block to the model; false closes it")
    func qwen3Thinking() {
        let t = Self.template("qwen3")
        let messages = [ChatMessage(role: "user", content: "Hi")]
        #expect(t.render(messages, addGenerationPrompt: true) == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
        #expect(t.render(messages, addGenerationPrompt: true, enableThinking: false)
            == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n")
    }

    @Test("Llama 3.2 prints today's date and starts with the BOS text")
    func llama32Date() {
        let t = Self.template("llama32")
        let prompt = t.render([ChatMessage(role: "user", content: "Hello")], addGenerationPrompt: true)
        #expect(prompt.contains("Today Date: 07 Mar 2026\n"))
        #expect(t.rendersBOS(prompt))
    }

    @Test("a template the interpreter cannot parse uses its family's built-in format")
    func brokenChatML() {
        let t = ChatTemplate(source: "{% for m in messages %}<|im_start|>{{ m.role }}{% endfor")
        #expect(!t.isInterpretable)
        #expect(t.family == "chatml")
        #expect(t.render([ChatMessage(role: "user", content: "Hi")], addGenerationPrompt: true)
            == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
    }

    @Test("an unknown template that cannot be interpreted falls back to plain role: content lines")
    func unknownPlain() {
        let t = ChatTemplate(source: "{% macro x() %}{% endmacro %}")
        #expect(t.family == "unknown-plain")
        #expect(t.render([ChatMessage(role: "system", content: "Be brief."), ChatMessage(role: "user", content: "Hi")],
                         addGenerationPrompt: true) == "system: Be brief.\nuser: Hi\nassistant: ")
    }

    @Test("a template that raises an exception falls back to the built-in format")
    func raisingTemplate() {
        let t = Self.template("llama2")
        // Two user turns in a row: the Llama 2 template raises; the built-in format still renders.
        let prompt = t.render([ChatMessage(role: "user", content: "a"), ChatMessage(role: "user", content: "b")],
                              addGenerationPrompt: true)
        #expect(prompt == "<s>[INST] a [/INST]<s>[INST] b [/INST]")
    }

    @Test("Jinja features: loops, filters, tests, slices, namespace, whitespace control")
    func jinjaFeatures() {
        func render(_ source: String) -> String {
            ChatTemplate(source: source).render([ChatMessage(role: "user", content: "  Hi  "),
                                                 ChatMessage(role: "assistant", content: "Yo")],
                                                addGenerationPrompt: false)
        }
        #expect(render("{% for m in messages %}{{ loop.index }}:{{ m.content | trim }}{% if not loop.last %},{% endif %}{% endfor %}") == "1:Hi,2:Yo")
        #expect(render("{{ messages | length }} {{ messages[-1]['role'] }} {{ 'abc'[::-1] }} {{ [1,2,3][1:] }}") == "2 assistant cba [2, 3]")
        #expect(render("{%- set ns = namespace(n=0) %}{%- for m in messages %}{%- set ns.n = ns.n + 1 %}{%- endfor %}{{ ns.n }}") == "2")
        #expect(render("{{ x is defined }} {{ none is none }} {{ 'a' in 'cat' }} {{ 'x' if false else 'y' }}") == "False True True y")
        #expect(render("{% if true %}\n  A\n{% endif %}\nB") == "  A\nB")
        #expect(render("{{ {'a': [1, 'b']} | tojson }} {{ 'a,b'.split(',') | join('+') }} {{ 'Hi'.upper() ~ 1 }}")
            == "{\"a\": [1, \"b\"]} a+b HI1")
        #expect(render("{% for m in messages if m.role == 'assistant' %}{{ m.content }}{% endfor %}") == "Yo")
        #expect(render("{{ ['a', 'code_interpreter', 'b'] | reject('equalto', 'code_interpreter') | join(', ') }}") == "a, b")
        #expect(render("{{ messages | selectattr('role', 'equalto', 'user') | list | length }}") == "1")
        // transformers' tojson: json.dumps(ensure_ascii=False), indent separators ",\n" and ": ".
        #expect(render("{{ 'é\"\\n' | tojson }}") == "\"é\\\"\\n\"")
        #expect(render("{{ {'k': [1]} | tojson(indent=2) }}") == "{\n  \"k\": [\n    1\n  ]\n}")
        #expect(render("{% for i in range(5) %}{% if i == 3 %}{% break %}{% endif %}{{ i }}{% endfor %}") == "012")
    }

    @Test("the template embedded in the qwen2 vocabulary GGUF renders", .enabled(if: TestData.isAvailable, TestData.skipReason))
    func embeddedTemplate() throws {
        let file = try GGUFFile(path: TokenizerTestData.vocabPath("qwen2"))
        let template = try #require(ChatTemplate(file: file))
        #expect(template.family == "chatml")
        #expect(template.eosToken == "<|endoftext|>")
        let prompt = template.render([ChatMessage(role: "user", content: "Hello")], addGenerationPrompt: true)
        #expect(prompt == "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n")
        let tokenizer = try GGUFTokenizer(file: file)
        let ids = tokenizer.encode(prompt, addSpecial: !template.rendersBOS(prompt), parseSpecial: true)
        #expect(ids.first == tokenizer.tokenId(forText: "<|im_start|>"))
        #expect(ids.filter { $0 == tokenizer.tokenId(forText: "<|im_end|>") }.count == 2)
        let noTemplate = try GGUFFile(path: TokenizerTestData.vocabPath("llama-spm"))
        #expect(ChatTemplate(file: noTemplate) == nil)
    }
}
