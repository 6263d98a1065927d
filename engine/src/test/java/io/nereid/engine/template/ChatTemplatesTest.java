package io.nereid.engine.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.Fixtures;
import io.nereid.engine.gguf.GgufFile;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ChatTemplatesTest {

    private static final List<Map<String, Object>> HELLO = List.of(Map.of("role", "user", "content", "Hi"));

    @Test
    void readsTheTemplateOfAGgufModel() {
        ChatTemplate t = ChatTemplates.fromGguf(GgufFile.readMetadata(Fixtures.path("tokenizers/phi-3/vocab.gguf")), null)
                .orElseThrow();
        String out = t.render(new ChatRequestContext(HELLO, null, true, "<s>", "<|endoftext|>", Map.of(), null));
        assertEquals("<s><|user|>\nHi<|end|>\n<|assistant|>\n", out);
        assertTrue(ChatTemplates.fromGguf(GgufFile.readMetadata(Fixtures.path("tokenizers/gpt-2/vocab.gguf")), null).isEmpty());
    }

    @Test
    void readsTheTemplateOfATokenizerConfigAndMatchesTheFixtureFile() {
        ChatTemplate fromConfig = ChatTemplates.fromTokenizerConfig(Fixtures.path("tokenizers/llama3/tokenizer_config.json"), null)
                .orElseThrow();
        ChatTemplate fromFile = ChatTemplate.compile(Fixtures.read("templates/meta-llama-Meta-Llama-3-8B-Instruct.jinja"), "file");
        var ctx = new ChatRequestContext(HELLO, null, true, "<|begin_of_text|>", "<|end_of_text|>", Map.of(), null);
        assertEquals(fromFile.render(ctx), fromConfig.render(ctx));
        assertTrue(ChatTemplates.fromTokenizerConfig(Fixtures.path("tokenizers/llama3/tokenizer_config.json"), "tool_use").isEmpty());
    }

    @Test
    void namedTemplatesAreBuiltinsOrFilesAndAnythingElseIsAClearError() {
        assertTrue(ChatTemplates.named("chatml").render(ChatRequestContext.of(HELLO, true)).contains("<|im_start|>user\nHi<|im_end|>"));
        var e = assertThrows(IllegalArgumentException.class, () -> ChatTemplates.named("no-such-template"));
        assertTrue(e.getMessage().contains("no-such-template") && e.getMessage().contains("chatml"), e.getMessage());
    }
}
