package io.nereid.gateway.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nereid.gateway.http.ParsedRequest.Kind;
import io.nereid.openapi.ErrorResponse;
import io.nereid.openapi.UsageInfo;
import org.junit.jupiter.api.Test;

class SseChunksTest {

    private final SseChunks chat = new SseChunks(Kind.CHAT, "chatcmpl-1", 1700000000, "m");
    private final SseChunks text = new SseChunks(Kind.COMPLETION, "cmpl-1", 1700000000, "m");
    private static final String CHAT_HEAD = "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
            + "\"model\":\"m\",\"choices\":";

    @Test
    void theRoleChunkComesFirstWithEmptyContent() {
        assertEquals(CHAT_HEAD + "[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,"
                + "\"finish_reason\":null,\"stop_reason\":null}]}\n\n", chat.role(0));
    }

    @Test
    void contentDeltasCarryNoRoleAndTheLastCarriesTheFinishReason() {
        assertEquals(CHAT_HEAD + "[{\"index\":1,\"delta\":{\"content\":\"Hi \\\"you\\\"\\n\"},\"logprobs\":null,"
                + "\"finish_reason\":null,\"stop_reason\":null}]}\n\n", chat.content(1, "Hi \"you\"\n", null));
        assertEquals(CHAT_HEAD + "[{\"index\":0,\"delta\":{\"content\":\"!\"},\"logprobs\":null,\"finish_reason\":\"stop\",\"stop_reason\":null}]}\n\n",
                chat.content(0, "!", "stop"));
        assertEquals(CHAT_HEAD + "[{\"index\":0,\"delta\":{\"content\":\" na\"},\"logprobs\":null,\"finish_reason\":\"stop\","
                + "\"stop_reason\":\"med\"}]}\n\n", chat.content(0, " na", null, "stop", "med"));
        assertEquals(CHAT_HEAD + "[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"length\",\"stop_reason\":null}]}\n\n",
                chat.content(0, "", "length"));
    }

    @Test
    void theUsageChunkHasNoChoices() {
        assertEquals(CHAT_HEAD + "[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5,"
                + "\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\n", chat.usage(UsageInfo.of(3, 2, 0)));
    }

    @Test
    void completionChunksCarryText() {
        assertEquals("data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1700000000,\"model\":\"m\",\"choices\":"
                + "[{\"index\":0,\"text\":\" there\",\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}]}\n\n",
                text.content(0, " there", null));
    }

    @Test
    void anErrorAfterThe200IsAnEventInTheOpenAiEnvelope() {
        assertEquals("data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n",
                SseChunks.error(ErrorResponse.of("boom", "server_error", null, null)));
        assertEquals("data: [DONE]\n\n", SseChunks.DONE);
    }
}
