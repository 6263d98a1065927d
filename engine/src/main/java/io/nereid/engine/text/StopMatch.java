package io.nereid.engine.text;

import java.util.Objects;

/**
 * What {@link StopStringMatcher#push(String)} decided for one text delta: the text that may be sent
 * now, and whether a stop string ended the sequence.
 */
public sealed interface StopMatch {

    /** Text that may be sent now, possibly "". */
    String text();

    /** No stop string completed; more text may follow. */
    record Continue(String text) implements StopMatch {
        public Continue {
            Objects.requireNonNull(text, "text");
        }
    }

    /**
     * A stop string completed: {@code text} is what came before it (not yet sent); the stop string
     * and everything after it are never sent.
     *
     * @param stopIndex index of the stop string in the list the matcher was built with (vLLM's
     *                  {@code stop_reason} is {@code stop})
     * @param stop      the stop string itself
     */
    record Stop(String text, int stopIndex, String stop) implements StopMatch {
        public Stop {
            Objects.requireNonNull(text, "text");
            Objects.requireNonNull(stop, "stop");
        }
    }
}
