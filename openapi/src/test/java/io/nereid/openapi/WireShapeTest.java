package io.nereid.openapi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

class WireShapeTest {

    private final ObjectMapper json = new ObjectMapper();

    @Test
    void theFirstChatChunkCarriesTheRoleAndAnEmptyContentAndNoUsage() throws Exception {
        var chunk = new ChatCompletion.Chunk("chatcmpl-1", 7, "m",
                List.of(new ChatCompletion.ChunkChoice(0, new ChatCompletion.Delta("assistant", ""), null, null, null)), null);
        assertEquals("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":7,\"model\":\"m\",\"choices\":"
                + "[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}]}",
                json.writeValueAsString(chunk));
    }

    @Test
    void usageHasTotalAndCachedTokens() throws Exception {
        assertEquals("{\"prompt_tokens\":5,\"completion_tokens\":3,\"total_tokens\":8,\"prompt_tokens_details\":{\"cached_tokens\":1}}",
                json.writeValueAsString(UsageInfo.of(5, 3, 1)));
    }

    @Test
    void errorsUseTheOpenAiEnvelopeWithNullsKept() throws Exception {
        assertEquals("{\"error\":{\"message\":\"m\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}",
                json.writeValueAsString(ErrorResponse.of("m", "invalid_request_error", null, null)));
    }
}
