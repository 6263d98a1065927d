package io.nereid.gateway.http;

import io.nereid.engine.api.TokenLogprob;
import io.nereid.openapi.Logprobs;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * Turns the engine's {@link TokenLogprob}s into OpenAI's two wire shapes. A token's text is its
 * bytes as UTF-8 (a token holding part of a character shows U+FFFD; {@code bytes} keeps the exact
 * bytes, as OpenAI does). Pure; thread-safe.
 */
final class LogprobFormat {

    private final IntFunction<byte[]> tokenBytes;

    LogprobFormat(IntFunction<byte[]> tokenBytes) {
        this.tokenBytes = tokenBytes;
    }

    String text(int id) {
        return new String(tokenBytes.apply(id), StandardCharsets.UTF_8);
    }

    private int[] bytes(int id) {
        byte[] b = tokenBytes.apply(id);
        int[] out = new int[b.length];
        for (int i = 0; i < b.length; i++) {
            out[i] = b[i] & 0xff;
        }
        return out;
    }

    Logprobs.Chat chat(List<TokenLogprob> tokens) {
        List<Logprobs.Token> content = new ArrayList<>(tokens.size());
        for (TokenLogprob t : tokens) {
            List<Logprobs.TopToken> top = new ArrayList<>(t.topIds().length);
            for (int k = 0; k < t.topIds().length; k++) {
                top.add(new Logprobs.TopToken(text(t.topIds()[k]), t.topLogprobs()[k], bytes(t.topIds()[k])));
            }
            content.add(new Logprobs.Token(text(t.tokenId()), t.logprob(), bytes(t.tokenId()), top));
        }
        return new Logprobs.Chat(content);
    }

    /** The legacy shape, offsets counted from {@code startOffset} (the characters of the choice's earlier tokens). */
    Logprobs.Completion completion(List<TokenLogprob> tokens, int startOffset) {
        List<String> texts = new ArrayList<>();
        List<Float> lps = new ArrayList<>();
        List<Map<String, Float>> tops = new ArrayList<>();
        List<Integer> offsets = new ArrayList<>();
        int offset = startOffset;
        for (TokenLogprob t : tokens) {
            String s = text(t.tokenId());
            texts.add(s);
            lps.add(t.logprob());
            Map<String, Float> top = new LinkedHashMap<>();
            for (int k = 0; k < t.topIds().length; k++) {
                top.putIfAbsent(text(t.topIds()[k]), t.topLogprobs()[k]);
            }
            tops.add(top);
            offsets.add(offset);
            offset += s.length();
        }
        return new Logprobs.Completion(texts, lps, tops, offsets);
    }

    /** Characters the tokens' texts add up to. */
    int chars(List<TokenLogprob> tokens) {
        int n = 0;
        for (TokenLogprob t : tokens) {
            n += text(t.tokenId()).length();
        }
        return n;
    }
}
