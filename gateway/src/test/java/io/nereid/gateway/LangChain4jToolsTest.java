package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecifications;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ToolChoice;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import dev.langchain4j.service.tool.DefaultToolExecutor;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * LangChain4j's OpenAI client against our tools support: a {@code @Tool} method's specification
 * (strict: every parameter required, no other keys) sent with tool_choice required, the call read back by LangChain4j (whole and streamed) and
 * executed on the method with the arguments the grammar forced into its parameter schema; and
 * LangChain4j's AiServices: a {@code @Tool} it runs itself, and a typed answer (a record) it asks
 * for as a JSON-schema {@code response_format} and parses.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class LangChain4jToolsTest {

    private static TestServer server;

    @BeforeAll
    static void start() throws Exception {
        String parity = TestModels.stories260K().resolveSibling("../parity/parity-a-llama-spm-q8_0.gguf").normalize().toString();
        String qwen3 = TestModels.stories260K().resolveSibling("../templates/Qwen-Qwen3.jinja").normalize().toString();
        server = TestServer.start("--model", parity, "--served-model-name", "m", "--chat-template", qwen3, "--threads", "1");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** The tools LangChain4j describes to the model. */
    public static class Tools {
        volatile String called;

        @Tool("Whether it rains today in a city")
        public boolean raining(@P("the city") City city, @P("whether tomorrow instead") boolean tomorrow) {
            called = "raining " + city + " " + tomorrow;
            return false;
        }

        @Tool("The local time in a city")
        public String time(@P("the city") City city) {
            called = "time " + city;
            return "12:00";
        }
    }

    public enum City { PARIS, ROME, OSLO }

    /** A tool whose result AiServices hands back at once (no second model turn): the loop stays bounded. */
    public static class Forecast {
        volatile String called;

        @Tool(value = "The forecast for a city", returnBehavior = dev.langchain4j.agent.tool.ReturnBehavior.IMMEDIATE)
        public String forecast(@P("the city") City city, @P("days ahead, 1 to 3") int days) {
            called = city + " " + days;
            return "sunny";
        }
    }

    interface Assistant {
        dev.langchain4j.service.Result<String> chat(String message);
    }

    /** What AiServices asks the model for as a JSON-schema answer (response_format). */
    public record Weather(City city, boolean raining, int degrees) {
    }

    interface Extractor {
        Weather extract(String text);
    }

    @Test
    void aiServicesRunsAToolTheModelCalls() {
        for (int seed = 1; seed <= 2; seed++) {
            OpenAiChatModel model = OpenAiChatModel.builder().baseUrl(server.url("/v1")).apiKey("unused").modelName("m")
                    .timeout(Duration.ofSeconds(60)).seed(seed).temperature(1.0).maxTokens(400).strictTools(true)
                    .defaultRequestParameters(dev.langchain4j.model.openai.OpenAiChatRequestParameters.builder()
                            .toolChoice(ToolChoice.REQUIRED).build())
                    .build();
            Forecast tools = new Forecast();
            Assistant assistant = dev.langchain4j.service.AiServices.builder(Assistant.class).chatModel(model).tools(tools).build();
            dev.langchain4j.service.Result<String> r = assistant.chat("What is the forecast for Oslo?");
            assertFalse(r.toolExecutions().isEmpty(), r.toString());
            assertEquals("forecast", r.toolExecutions().get(0).request().name());
            assertTrue(tools.called != null, "AiServices ran the @Tool method on the model's arguments");
            assertEquals("sunny", r.toolExecutions().get(0).result());
        }
    }

    @Test
    void aiServicesGetsATypedAnswerThroughResponseFormat() {
        for (int seed = 1; seed <= 3; seed++) {
            OpenAiChatModel model = OpenAiChatModel.builder().baseUrl(server.url("/v1")).apiKey("unused").modelName("m")
                    .timeout(Duration.ofSeconds(60)).seed(seed).temperature(1.0).maxTokens(300)
                    .supportedCapabilities(dev.langchain4j.model.chat.Capability.RESPONSE_FORMAT_JSON_SCHEMA)
                    .strictJsonSchema(true).build();
            Extractor extractor = dev.langchain4j.service.AiServices.create(Extractor.class, model);
            Weather w = extractor.extract("In Rome it rains at 14 degrees.");
            assertTrue(w != null && w.city() != null, "a Weather parsed by LangChain4j from the constrained JSON: " + w);
        }
    }

    private static ChatRequest request(long seed) {
        return ChatRequest.builder().messages(UserMessage.from("Does it rain in Paris, or what time is it there?"))
                .toolSpecifications(ToolSpecifications.toolSpecificationsFrom(Tools.class)).toolChoice(ToolChoice.REQUIRED)
                .temperature(1.0).maxOutputTokens(400).build();
    }

    private static void execute(ToolExecutionRequest call) throws Exception {
        Tools tools = new Tools();
        Method method = null;
        for (Method m : Tools.class.getMethods()) {
            if (m.getName().equals(call.name())) {
                method = m;
            }
        }
        assertTrue(method != null, "a declared tool: " + call.name());
        String result = new DefaultToolExecutor(tools, method).execute(call, "memory");
        assertTrue(tools.called != null && tools.called.startsWith(call.name()), call + " -> " + result);
    }

    @Test
    void aToolCallComesBackAndRunsOnTheToolMethod() throws Exception {
        OpenAiChatModel model = OpenAiChatModel.builder().baseUrl(server.url("/v1")).apiKey("unused").modelName("m")
                .timeout(Duration.ofSeconds(60)).seed(7).strictTools(true).build();
        for (long seed = 1; seed <= 2; seed++) {
            ChatResponse r = model.chat(request(seed));
            List<ToolExecutionRequest> calls = r.aiMessage().toolExecutionRequests();
            assertFalse(calls.isEmpty(), r.toString());
            for (ToolExecutionRequest call : calls) {
                execute(call);
            }
        }
    }

    @Test
    void aStreamedToolCallIsAssembledByLangChain4j() throws Exception {
        OpenAiStreamingChatModel model = OpenAiStreamingChatModel.builder().baseUrl(server.url("/v1")).apiKey("unused")
                .modelName("m").timeout(Duration.ofSeconds(60)).seed(11).strictTools(true)
                // one call: this random-weight model may chain calls (with free whitespace) past max tokens
                .parallelToolCalls(false).build();
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        model.chat(request(3), new StreamingChatResponseHandler() {
            @Override
            public void onPartialResponse(String partial) {
            }

            @Override
            public void onCompleteResponse(ChatResponse response) {
                done.complete(response);
            }

            @Override
            public void onError(Throwable error) {
                done.completeExceptionally(error);
            }
        });
        ChatResponse r = done.get(120, TimeUnit.SECONDS);
        assertEquals(dev.langchain4j.model.output.FinishReason.TOOL_EXECUTION, r.finishReason(), r.toString());
        for (ToolExecutionRequest call : r.aiMessage().toolExecutionRequests()) {
            execute(call);
        }
        assertFalse(r.aiMessage().toolExecutionRequests().isEmpty());
    }
}
