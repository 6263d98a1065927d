package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.NotFoundException;
import com.openai.errors.OpenAIServiceException;
import com.openai.errors.UnauthorizedException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionChoice;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.models.Model;
import io.nereid.gateway.http.GatewayServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The official OpenAI Java SDK as a client, changed only in its base URL (and key): the server on
 * 127.0.0.1 (ephemeral port) with stories260K, the chatml template, {@code --api-key secret} and
 * {@code --strict} (so a field the SDK sends and Nereid does not know fails here).
 * Responses are {@code validate()}d, so a field the SDK requires and Nereid leaves out fails here.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OpenAiSdkTest {

    private static final String STORY = TestModels.ONCE_UPON_A_TIME_12;
    private static ServingModel model;
    private static GatewayServer server;
    private static OpenAIClient client;

    @BeforeAll
    static void start() throws Exception {
        ServeConfig c = ServeConfig.parse(List.of("--model", TestModels.stories260K().toString(), "--served-model-name",
                "stories260K", "--port", "0", "--max-num-seqs", "4", "--threads", "1", "--chat-template", "chatml",
                "--api-key", "secret", "--strict"), Map.of());
        model = ServingModel.open(c);
        server = GatewayServer.start(model, c.gateway(), "127.0.0.1", 0);
        client = client("secret");
    }

    /** Retries off: a typed error must come from the first answer, and the test stays fast. */
    private static OpenAIClient client(String key) {
        return OpenAIOkHttpClient.builder().baseUrl("http://127.0.0.1:" + server.port() + "/v1").apiKey(key)
                .maxRetries(0).timeout(Duration.ofSeconds(60)).build();
    }

    @AfterAll
    static void stop() {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
        if (model != null) {
            model.close();
        }
    }

    @Test
    void listsAndRetrievesTheServedModel() {
        List<Model> models = client.models().list().data();
        assertEquals(1, models.size());
        assertEquals("stories260K", models.getFirst().validate().id());
        Model m = client.models().retrieve("stories260K").validate();
        assertEquals("stories260K", m.id());
        assertEquals("nereid", m.ownedBy());
    }

    private static ChatCompletionCreateParams.Builder chat() {
        return ChatCompletionCreateParams.builder().model("stories260K").addUserMessage("Tell me a story")
                .temperature(0.0).maxCompletionTokens(8);
    }

    @Test
    void aStreamedChatCollectsToTheNonStreamedText() {
        ChatCompletion whole = client.chat().completions().create(chat().build()).validate();
        String text = whole.choices().getFirst().message().content().orElseThrow();
        assertFalse(text.isEmpty());
        assertEquals(8, whole.usage().orElseThrow().completionTokens());

        StringBuilder streamed = new StringBuilder();
        long usageTokens = -1;
        int finishes = 0;
        try (StreamResponse<ChatCompletionChunk> s = client.chat().completions().createStreaming(chat()
                .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build())) {
            for (ChatCompletionChunk c : (Iterable<ChatCompletionChunk>) s.stream()::iterator) {
                c.validate();
                assertEquals(whole.model(), c.model());
                for (ChatCompletionChunk.Choice ch : c.choices()) {
                    ch.delta().content().ifPresent(streamed::append);
                    finishes += ch.finishReason().isPresent() ? 1 : 0;
                }
                if (c.usage().isPresent()) {
                    usageTokens = c.usage().get().completionTokens();
                }
            }
        }
        assertEquals(text, streamed.toString());
        assertEquals(1, finishes);
        assertEquals(8, usageTokens);
    }

    private static CompletionCreateParams.Builder completion() {
        return CompletionCreateParams.builder().model("stories260K").prompt("Once upon a time").temperature(0.0)
                .maxTokens(12);
    }

    @Test
    void completionsStreamedAndNotGiveTheReferenceContinuation() {
        Completion whole = client.completions().create(completion().build()).validate();
        CompletionChoice choice = whole.choices().getFirst();
        assertEquals(STORY, choice.text());
        assertEquals(CompletionChoice.FinishReason.LENGTH, choice.finishReason());
        assertEquals(5, whole.usage().orElseThrow().promptTokens());

        StringBuilder streamed = new StringBuilder();
        try (StreamResponse<Completion> s = client.completions().createStreaming(completion().build())) {
            // Not validate()d: the SDK's Completion type requires finish_reason, which OpenAI itself sends as
            // null on every chunk but the last.
            s.stream().forEach(c -> c.choices().forEach(ch -> streamed.append(ch.text())));
        }
        assertEquals(STORY, streamed.toString());
        assertEquals("Once upon a time" + STORY, client.completions().create(completion().echo(true).build())
                .choices().getFirst().text());
    }

    @Test
    void aBatchOfPromptsComesBackAsTheSdksChoicesInPromptOrder() {
        Completion batch = client.completions().create(completion().promptOfArrayOfStrings(List.of("Once upon a time",
                "Once upon a time")).n(2).build()).validate();
        assertEquals(4, batch.choices().size());
        for (int i = 0; i < 4; i++) {
            assertEquals(i, batch.choices().get(i).index());
            assertEquals(STORY, batch.choices().get(i).text());
        }
        assertEquals(10, batch.usage().orElseThrow().promptTokens());
        assertEquals(48, batch.usage().orElseThrow().completionTokens());
    }

    @Test
    void errorsSurfaceAsTheSdksTypedExceptionsWithOurCodes() {
        BadRequestException temperature = assertThrows(BadRequestException.class,
                () -> client.chat().completions().create(chat().temperature(3.0).build()));
        assertEquals("temperature", temperature.param().orElse(null));
        assertEquals("invalid_request_error", temperature.type().orElse(null));

        BadRequestException overflow = assertThrows(BadRequestException.class,
                () -> client.completions().create(completion().maxTokens(100_000).build()));
        assertEquals("context_length_exceeded", overflow.code().orElse(null));

        NotFoundException unknown = assertThrows(NotFoundException.class,
                () -> client.chat().completions().create(chat().model("gpt-4o").build()));
        assertEquals("model_not_found", unknown.code().orElse(null));
        assertEquals(404, unknown.statusCode());

        OpenAIClient wrongKey = client("wrong");
        try {
            UnauthorizedException denied = assertThrows(UnauthorizedException.class, () -> wrongKey.models().list());
            assertEquals("invalid_api_key", denied.code().orElse(null));
        } finally {
            wrongKey.close();
        }
        // After the errors the server still serves.
        assertEquals(STORY, client.completions().create(completion().build()).choices().getFirst().text());
    }

    @Test
    void aStreamingRequestThatFailsValidationIsATypedErrorNotABrokenStream() {
        OpenAIServiceException e = assertThrows(OpenAIServiceException.class, () -> {
            try (StreamResponse<Completion> s = client.completions().createStreaming(completion().maxTokens(100_000)
                    .build())) {
                s.stream().forEach(c -> { });
            }
        });
        assertTrue(e instanceof BadRequestException, e.toString());
        assertEquals("context_length_exceeded", e.code().orElse(null));
    }
}
