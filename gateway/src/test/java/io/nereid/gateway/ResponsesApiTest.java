package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.NotFoundException;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.responses.FunctionTool;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseFunctionToolCall;
import com.openai.models.responses.ResponseInputItem;
import com.openai.models.responses.ResponseStatus;
import com.openai.models.responses.ResponseStreamEvent;
import com.openai.models.responses.StructuredResponse;
import com.openai.models.responses.ToolChoiceOptions;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /v1/responses} through the official OpenAI Java SDK (only the base URL changed) on
 * stories260K with the chatml template, hermes tool calls and two API keys: plain and streamed
 * responses (the typed event stream parses, in OpenAI's order, with sequence numbers) give the
 * greedy text of the same chat completion; {@code previous_response_id} over three turns continues
 * the conversation and reuses the prefix cache; retrieve / input_items / delete; another key gets
 * 404; json_schema output through the SDK's structured responses; a function-call round trip;
 * background + cancel; a stored response survives a restart.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ResponsesApiTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static FaultInjectingBackend[] backend = new FaultInjectingBackend[1];
    private static TestServer server;
    private static OpenAIClient client;

    @TempDir
    static Path templates;
    private static String template;

    @BeforeAll
    static void start() throws Exception {
        // stories260K knows 128 tokens: a terse template leaves room for three turns
        template = java.nio.file.Files.writeString(templates.resolve("terse.jinja"), "{% for m in messages %}{{ m.role[0] }}:"
                + " {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}a:{% endif %}").toString();
        server = TestServer.withBackend(b -> backend[0] = new FaultInjectingBackend(b), "--served-model-name", "m",
                "--chat-template", template, "--tool-call-parser", "hermes", "--threads", "1", "--max-num-seqs", "4",
                "--api-key", "secret", "--api-key", "other", "--strict");
        client = client(server, "secret");
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
    }

    private static OpenAIClient client(TestServer s, String key) {
        return OpenAIOkHttpClient.builder().baseUrl(s.url("/v1")).apiKey(key).maxRetries(0)
                .timeout(Duration.ofSeconds(60)).build();
    }

    private static ResponseCreateParams.Builder greedy(String input, long maxTokens) {
        return ResponseCreateParams.builder().model("m").input(input).maxOutputTokens(maxTokens).temperature(0.0);
    }

    private static String text(Response r) {
        return r.output().stream().flatMap(i -> i.message().stream()).flatMap(m -> m.content().stream())
                .flatMap(c -> c.outputText().stream()).map(t -> t.text()).collect(Collectors.joining());
    }

    private static String chat(List<String[]> turns, long maxTokens) {
        ChatCompletionCreateParams.Builder b = ChatCompletionCreateParams.builder().model("m").maxCompletionTokens(maxTokens)
                .temperature(0.0);
        for (String[] t : turns) {
            if (t[0].equals("user")) {
                b.addUserMessage(t[1]);
            } else {
                b.addAssistantMessage(t[1]);
            }
        }
        return client.chat().completions().create(b.build()).choices().getFirst().message().content().orElse("");
    }

    @Test
    void aResponseGivesTheGreedyTextOfTheSameChatCompletionWholeAndStreamed() {
        Response r = client.responses().create(greedy("Once upon a time", 12).instructions("Tell a story.").build());
        r.validate();
        assertTrue(r.id().startsWith("resp_"), r.id());
        assertEquals(ResponseStatus.INCOMPLETE, r.status().orElseThrow(), "max_output_tokens reached");
        assertEquals(Response.IncompleteDetails.Reason.MAX_OUTPUT_TOKENS, r.incompleteDetails().orElseThrow().reason()
                .orElseThrow());
        assertEquals(12, r.usage().orElseThrow().outputTokens());
        assertEquals("Tell a story.", r.instructions().orElseThrow().string().orElseThrow());
        String viaChat = client.chat().completions().create(ChatCompletionCreateParams.builder().model("m")
                .maxCompletionTokens(12).temperature(0.0).addSystemMessage("Tell a story.").addUserMessage("Once upon a time")
                .build()).choices().getFirst().message().content().orElse("");
        assertEquals(viaChat, text(r));
        assertFalse(viaChat.isEmpty());

        List<String> types = new ArrayList<>();
        StringBuilder deltas = new StringBuilder();
        long[] sequence = {0};
        Response[] last = new Response[1];
        try (StreamResponse<ResponseStreamEvent> events = client.responses().createStreaming(greedy("Once upon a time", 12)
                .instructions("Tell a story.").build())) {
            events.stream().forEach(e -> {
                e.validate();
                JsonNode json = com.openai.core.ObjectMappers.jsonMapper().valueToTree(e);
                types.add(json.get("type").asText());
                e.outputTextDelta().ifPresent(d -> deltas.append(d.delta()));
                assertEquals(sequence[0]++, json.get("sequence_number").asLong(), "sequence numbers count up from 0");
                e.incomplete().ifPresent(i -> last[0] = i.response());
            });
        }
        assertEquals(List.of("response.created", "response.in_progress", "response.output_item.added",
                "response.content_part.added"), types.subList(0, 4));
        assertEquals(List.of("response.output_text.done", "response.content_part.done", "response.output_item.done",
                "response.incomplete"), types.subList(types.size() - 4, types.size()));
        assertTrue(types.subList(4, types.size() - 4).stream().allMatch("response.output_text.delta"::equals), types.toString());
        assertEquals(viaChat, deltas.toString());
        assertEquals(viaChat, text(last[0]));
    }

    @Test
    void previousResponseIdContinuesTheConversationOverThreeTurnsAndReusesThePrefixCache() {
        Response first = client.responses().create(greedy("Once upon a time", 12).build());
        Response second = client.responses().create(greedy("Then what?", 12).previousResponseId(first.id()).build());
        Response third = client.responses().create(greedy("And then?", 12).previousResponseId(second.id()).build());
        third.validate();
        assertEquals(second.id(), third.previousResponseId().orElseThrow());
        // the second turn saw the first: the same text as the chat completion of the whole conversation
        assertEquals(chat(List.of(new String[] {"user", "Once upon a time"}, new String[] {"assistant", text(first)},
                new String[] {"user", "Then what?"}), 12), text(second));
        assertEquals(chat(List.of(new String[] {"user", "Once upon a time"}, new String[] {"assistant", text(first)},
                new String[] {"user", "Then what?"}, new String[] {"assistant", text(second)},
                new String[] {"user", "And then?"}), 12), text(third));
        long in1 = first.usage().orElseThrow().inputTokens(), in3 = third.usage().orElseThrow().inputTokens();
        assertTrue(in3 > in1 + 24, in1 + " then " + in3);
        assertTrue(third.usage().orElseThrow().inputTokensDetails().cachedTokens() > 0, "the earlier turns come from the"
                + " prefix cache");
        BadRequestException e = assertThrows(BadRequestException.class, () -> client.responses().create(
                greedy("x", 4).previousResponseId("resp_nope").build()));
        assertTrue(e.getMessage().contains("not found"), e.getMessage());
    }

    @Test
    void storedResponsesAreRetrievedListedAndDeletedAndAnotherKeyCannotSeeThem() {
        Response r = client.responses().create(greedy("Once upon a time", 6).store(true).build());
        Response again = client.responses().retrieve(r.id());
        again.validate();
        assertEquals(text(r), text(again));
        assertEquals(r.id(), again.id());
        List<com.openai.models.responses.ResponseItem> items = client.responses().inputItems().list(r.id()).data();
        assertEquals(1, items.size());
        assertTrue(items.getFirst().isResponseInputMessageItem(), items.toString());
        OpenAIClient other = client(server, "other");
        try {
            assertThrows(NotFoundException.class, () -> other.responses().retrieve(r.id()));
            assertThrows(NotFoundException.class, () -> other.responses().delete(r.id()));
        } finally {
            other.close();
        }
        client.responses().delete(r.id());
        assertThrows(NotFoundException.class, () -> client.responses().retrieve(r.id()));
        Response unstored = client.responses().create(greedy("Once upon a time", 4).store(false).build());
        assertThrows(NotFoundException.class, () -> client.responses().retrieve(unstored.id()));
    }

    /** What the SDK's structured responses derive a JSON schema from. */
    public static class Hero {
        public String name;
    }

    @Test
    void jsonSchemaOutputThroughTheSdksStructuredResponses() {
        StructuredResponse<Hero> r = client.responses().create(ResponseCreateParams.builder().model("m")
                .input("Name a hero.").maxOutputTokens(60).temperature(0.0).text(Hero.class).build());
        Hero hero = r.output().stream().flatMap(i -> i.message().stream()).flatMap(m -> m.content().stream())
                .flatMap(c -> c.outputText().stream()).findFirst().orElseThrow();
        assertTrue(hero.name != null, "the output parses as the schema's object");
    }

    @Test
    void aFunctionCallRoundTrip() {
        FunctionTool weather = FunctionTool.builder().name("get_weather").strict(true).parameters(FunctionTool.Parameters
                .builder().putAdditionalProperty("type", JsonValue.from("object"))
                .putAdditionalProperty("properties", JsonValue.from(java.util.Map.of("city", java.util.Map.of("enum",
                        List.of("Paris", "Rome")))))
                .putAdditionalProperty("required", JsonValue.from(List.of("city")))
                .putAdditionalProperty("additionalProperties", JsonValue.from(false)).build()).build();
        Response call = client.responses().create(ResponseCreateParams.builder().model("m").input("Weather in Paris?")
                .addTool(weather).toolChoice(ToolChoiceOptions.REQUIRED).maxOutputTokens(100).temperature(0.0).build());
        call.validate();
        ResponseFunctionToolCall fc = call.output().stream().flatMap(i -> i.functionCall().stream()).findFirst()
                .orElseThrow(() -> new AssertionError(call.output().toString()));
        assertEquals("get_weather", fc.name());
        assertTrue(fc.callId().startsWith("call_"), fc.callId());
        assertTrue(fc.arguments().contains("\"city\""), fc.arguments());
        Response answer = client.responses().create(ResponseCreateParams.builder().model("m").previousResponseId(call.id())
                .inputOfResponse(List.of(ResponseInputItem.ofFunctionCallOutput(ResponseInputItem.FunctionCallOutput
                        .builder().callId(fc.callId()).output("sunny, 24 C").build())))
                .addTool(weather).toolChoice(ToolChoiceOptions.NONE).maxOutputTokens(8).temperature(0.0).build());
        answer.validate();
        assertTrue(answer.output().stream().anyMatch(i -> i.message().isPresent()), answer.output().toString());
        assertEquals(1, client.responses().inputItems().list(answer.id()).data().size(),
                "this response's own input: the function call output");
    }

    @Test
    void aBackgroundResponseIsQueuedFinishesInTheStoreAndCanBeCancelled() throws Exception {
        Response queued = client.responses().create(greedy("Once upon a time", 6).background(true).build());
        assertEquals(ResponseStatus.QUEUED, queued.status().orElseThrow());
        Response done = queued;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (done.status().orElseThrow().equals(ResponseStatus.QUEUED)
                || done.status().orElseThrow().equals(ResponseStatus.IN_PROGRESS)) {
            assertTrue(System.nanoTime() < deadline);
            Thread.sleep(20);
            done = client.responses().retrieve(queued.id());
        }
        assertEquals(ResponseStatus.INCOMPLETE, done.status().orElseThrow());
        assertEquals(text(client.responses().create(greedy("Once upon a time", 6).store(false).build())), text(done));

        backend[0].holdNext();
        Response slow = client.responses().create(greedy("Once upon a time", 60).background(true).build());
        backend[0].awaitHeld();
        CompletableFuture<Response> cancelled = CompletableFuture.supplyAsync(() -> client.responses().cancel(slow.id()));
        Thread.sleep(50);   // the cancel is asked while the forward pass is held
        backend[0].release();
        Response c = cancelled.get(60, TimeUnit.SECONDS);
        assertEquals(ResponseStatus.CANCELLED, c.status().orElseThrow());
        assertEquals(ResponseStatus.CANCELLED, client.responses().retrieve(slow.id()).status().orElseThrow());
        // deleted while it runs: it stays deleted when it ends
        backend[0].holdNext();
        Response doomed = client.responses().create(greedy("Once upon a time", 60).background(true).build());
        backend[0].awaitHeld();
        client.responses().delete(doomed.id());
        backend[0].release();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (server.server().inflight() > 0) {   // it ended (cancelled) and made its last write
            assertTrue(System.nanoTime() < end);
            Thread.sleep(10);
        }
        assertThrows(NotFoundException.class, () -> client.responses().retrieve(doomed.id()));
        BadRequestException notBackground = assertThrows(BadRequestException.class, () -> client.responses().cancel(
                client.responses().create(greedy("x", 2).build()).id()));
        assertTrue(notBackground.getMessage().contains("only background"), notBackground.getMessage());
    }

    @Test
    void theWireFormatIsTypedServerSentEventsWithoutDone() throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(server.url("/v1/responses")))
                .header("Authorization", "Bearer secret").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"input\":\"Hi\",\"max_output_tokens\":3,"
                        + "\"stream\":true}")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        assertTrue(r.headers().firstValue("content-type").orElse("").startsWith("text/event-stream"));
        assertTrue(r.body().startsWith("event: response.created\ndata: {\"type\":\"response.created\""), r.body());
        assertFalse(r.body().contains("[DONE]"));
        assertTrue(r.body().stripTrailing().endsWith("}"), r.body());
        // a streamed function call: its item, argument deltas, then done
        HttpResponse<String> call = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                server.url("/v1/responses"))).header("Authorization", "Bearer secret").header("Content-Type",
                "application/json").POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"input\":\"Weather in Paris?\","
                + "\"max_output_tokens\":100,\"temperature\":0,\"stream\":true,\"tool_choice\":\"required\",\"parallel_tool_calls\":false,\"tools\":"
                + "[{\"type\":\"function\",\"name\":\"get_weather\",\"strict\":true,\"parameters\":{\"type\":\"object\",\"properties\":"
                + "{\"city\":{\"enum\":[\"Paris\",\"Rome\"]}},\"required\":[\"city\"],\"additionalProperties\":false}}]}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        List<String> events = call.body().lines().filter(l -> l.startsWith("event: ")).map(l -> l.substring(7)).toList();
        int added = events.indexOf("response.output_item.added");
        assertTrue(added >= 0 && call.body().contains("\"type\":\"function_call\""), call.body());
        assertTrue(events.contains("response.function_call_arguments.delta"), events.toString());
        assertEquals(List.of("response.function_call_arguments.done", "response.output_item.done"),
                events.subList(events.size() - 3, events.size() - 1), events.toString());
        // this tiny model may not close the call within 100 tokens: then the response (and the call) are incomplete
        assertTrue(List.of("response.completed", "response.incomplete").contains(events.getLast()), events.toString());
        for (String bad : List.of("{\"model\":\"m\"}", "{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":"
                + "[{\"type\":\"input_image\",\"image_url\":\"x\"}]}]}", "{\"model\":\"m\",\"input\":\"x\",\"tools\":"
                + "[{\"type\":\"web_search\"}]}", "{\"model\":\"m\",\"input\":\"x\",\"max_output_tokens\":-1}",
                "{\"model\":\"m\",\"input\":\"x\",\"background\":true,\"store\":false}",
                "{\"model\":\"m\",\"input\":\"x\",\"text\":{\"format\":{\"type\":\"xml\"}}}")) {
            HttpResponse<String> e = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                    server.url("/v1/responses"))).header("Authorization", "Bearer secret")
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(bad)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(400, e.statusCode(), bad + " -> " + e.body());
            JsonNode err = JSON.readTree(e.body()).get("error");
            assertEquals("invalid_request_error", err.get("type").asText(), e.body());
        }
    }

    @Test
    void logprobsAsIncludedEqualThoseOfTheSameChatCompletion() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(server.url("/v1/responses")))
                .header("Authorization", "Bearer secret").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"input\":\"Once upon a time\","
                        + "\"max_output_tokens\":5,\"temperature\":0,\"store\":false,\"top_logprobs\":2,"
                        + "\"include\":[\"message.output_text.logprobs\"]}")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        JsonNode part = JSON.readTree(r.body()).at("/output/0/content/0");
        JsonNode lps = part.get("logprobs");
        assertEquals(5, lps.size(), r.body());
        assertEquals(2, lps.get(0).get("top_logprobs").size());
        assertEquals(2, JSON.readTree(r.body()).get("top_logprobs").asInt());
        HttpResponse<String> c = http.send(HttpRequest.newBuilder(URI.create(server.url("/v1/chat/completions")))
                .header("Authorization", "Bearer secret").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"messages\":[{\"role\":\"user\","
                        + "\"content\":\"Once upon a time\"}],\"max_completion_tokens\":5,\"temperature\":0,"
                        + "\"logprobs\":true,\"top_logprobs\":2}")).build(), HttpResponse.BodyHandlers.ofString());
        JsonNode chat = JSON.readTree(c.body()).at("/choices/0/logprobs/content");
        for (int i = 0; i < 5; i++) {
            assertEquals(chat.get(i).get("token").asText(), lps.get(i).get("token").asText());
            assertEquals(chat.get(i).get("logprob").asDouble(), lps.get(i).get("logprob").asDouble());
        }
        HttpResponse<String> bad = http.send(HttpRequest.newBuilder(URI.create(server.url("/v1/responses")))
                .header("Authorization", "Bearer secret").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"input\":\"x\",\"top_logprobs\":2}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(400, bad.statusCode(), bad.body());
    }

    @Test
    void aStoredResponseSurvivesARestart(@TempDir Path dir) throws Exception {
        String file = dir.resolve("responses").toString();
        String id;
        String text;
        try (TestServer first = TestServer.start("--served-model-name", "m", "--chat-template", template, "--threads", "1",
                "--responses-store", file)) {
            OpenAIClient c = client(first, "x");
            Response r = c.responses().create(greedy("Once upon a time", 5).build());
            id = r.id();
            text = text(r);
            c.close();
        }
        try (TestServer second = TestServer.start("--served-model-name", "m", "--chat-template", template, "--threads",
                "1", "--responses-store", file)) {
            OpenAIClient c = client(second, "x");
            Response r = c.responses().retrieve(id);
            assertEquals(text, text(r));
            Response next = c.responses().create(greedy("Then?", 4).previousResponseId(id).build());
            assertEquals(id, next.previousResponseId().orElseThrow());
            c.close();
        }
    }
}
