import Testing
@testable import RunAnywhereGGUF

/// The chat template shipped in Gemma 3 instruction-tuned GGUFs (system text folded into the first user turn,
/// content as a string or a list of parts, roles user/model).
private let gemma3Template = """
{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}
    {%- else -%}
        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\\n\\n' -%}
    {%- endif -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = "" -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}
    {%- endif -%}
    {%- if (message['role'] == 'assistant') -%}
        {%- set role = "model" -%}
    {%- else -%}
        {%- set role = message['role'] -%}
    {%- endif -%}
    {{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else "") }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- elif message['content'] is iterable -%}
        {%- for item in message['content'] -%}
            {%- if item['type'] == 'image' -%}
                {{ '<start_of_image>' }}
            {%- elif item['type'] == 'text' -%}
                {{ item['text'] | trim }}
            {%- endif -%}
        {%- endfor -%}
    {%- else -%}
        {{ raise_exception("Invalid content type") }}
    {%- endif -%}
    {{ '<end_of_turn>\\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{'<start_of_turn>model\\n'}}
{%- endif -%}
"""

@Suite("Gemma 3 chat template")
struct ChatTemplateGemma3Tests {
    @Test("the system text joins the first user turn; assistant turns are the model's; the reply header ends it")
    func rendersConversation() throws {
        let template = ChatTemplate(source: gemma3Template, bosToken: "<bos>", eosToken: "<eos>")
        #expect(template.isInterpretable)
        #expect(template.family == "gemma")
        // Through the interpreter itself (render would fall back to the built-in Gemma format on an error).
        let text = try template.interpret([
            ChatMessage(role: "system", content: "Be brief."),
            ChatMessage(role: "user", content: " What is 2+2? "),
            ChatMessage(role: "assistant", content: "4"),
            ChatMessage(role: "user", content: "And 3+3?"),
        ], true, nil)
        #expect(text == "<bos><start_of_turn>user\nBe brief.\n\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n4<end_of_turn>\n"
            + "<start_of_turn>user\nAnd 3+3?<end_of_turn>\n<start_of_turn>model\n")
        #expect(template.rendersBOS(text))
        let single = try template.interpret([ChatMessage(role: "user", content: "Hi")], false, nil)
        #expect(single == "<bos><start_of_turn>user\nHi<end_of_turn>\n")
    }
}
