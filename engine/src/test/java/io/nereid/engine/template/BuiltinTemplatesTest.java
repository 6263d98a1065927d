package io.nereid.engine.template;

import static io.nereid.engine.template.TemplateTestSupport.conversation;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Each built-in template on a small conversation. Expected strings were written by hand from the
 * model families' documented formats and confirmed with Python Jinja2.
 */
class BuiltinTemplatesTest {

    private static final List<Map<String, Object>> WITH_SYSTEM = conversation("system", "You are helpful.",
            "user", "Hi", "assistant", "Hello!", "user", "How are you?");
    private static final List<Map<String, Object>> WITHOUT_SYSTEM = WITH_SYSTEM.subList(1, WITH_SYSTEM.size());

    private static String render(String name, List<Map<String, Object>> messages, boolean generationPrompt,
                                 String bos, String eos) {
        return ChatTemplate.builtin(name).render(new ChatRequestContext(messages, null, generationPrompt, bos, eos,
                Map.of(), TemplateTestSupport.CLOCK));
    }

    @Test
    void chatml() {
        assertEquals("<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                + "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nHow are you?<|im_end|>\n"
                + "<|im_start|>assistant\n", render("chatml", WITH_SYSTEM, true, null, null));
    }

    @Test
    void llama2FoldsTheSystemPromptIntoTheFirstInstruction() {
        assertEquals("<s>[INST] <<SYS>>\nYou are helpful.\n<</SYS>>\n\nHi [/INST] Hello! </s><s>[INST] How are you?"
                + " [/INST]", render("llama2", WITH_SYSTEM, true, "<s>", "</s>"));
    }

    @Test
    void llama3() {
        assertEquals("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are helpful.<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nHow are you?<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\n",
                render("llama3", WITH_SYSTEM, true, "<|begin_of_text|>", "<|eot_id|>"));
    }

    @Test
    void mistralAlternatesAndRejectsASystemMessage() {
        assertEquals("<s>[INST] Hi [/INST]Hello!</s>[INST] How are you? [/INST]",
                render("mistral", WITHOUT_SYSTEM, true, "<s>", "</s>"));
        TemplateRaisedException e = assertThrows(TemplateRaisedException.class,
                () -> render("mistral", WITH_SYSTEM, true, "<s>", "</s>"));
        assertEquals("Conversation roles must alternate user/assistant/user/assistant/...", e.getMessage());
    }

    @Test
    void phi3EndsWithEosWithoutAGenerationPrompt() {
        assertEquals("<|system|>\nYou are helpful.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\nHello!<|end|>\n"
                + "<|user|>\nHow are you?<|end|>\n<|endoftext|>", render("phi3", WITH_SYSTEM, false, "<s>", "<|endoftext|>"));
    }

    @Test
    void gemmaCallsTheAssistantModelAndRejectsSystem() {
        assertEquals("<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n"
                + "<start_of_turn>user\nHow are you?<end_of_turn>\n<start_of_turn>model\n",
                render("gemma", WITHOUT_SYSTEM, true, "<bos>", "<eos>"));
        TemplateRaisedException e = assertThrows(TemplateRaisedException.class,
                () -> render("gemma", WITH_SYSTEM, true, "<bos>", "<eos>"));
        assertEquals("System role not supported", e.getMessage());
    }

    @Test
    void builtinNamesAreListedAndEachCompiles() {
        assertEquals(List.of("chatml", "llama2", "llama3", "mistral", "phi3", "gemma"), ChatTemplate.builtinNames());
        for (String name : ChatTemplate.builtinNames()) {
            assertEquals(name, ChatTemplate.builtin(name).name());
        }
    }

    @Test
    void unknownBuiltinNameListsTheKnownOnes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ChatTemplate.builtin("vicuna"));
        assertTrue(e.getMessage().contains("'vicuna'"), e.getMessage());
        assertTrue(e.getMessage().contains("chatml, llama2, llama3, mistral, phi3, gemma"), e.getMessage());
    }
}
