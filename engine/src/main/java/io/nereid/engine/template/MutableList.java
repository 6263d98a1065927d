package io.nereid.engine.template;

import java.util.ArrayList;
import java.util.Collection;

/**
 * A list created by the template itself (a literal, {@code |list}, a slice, a concatenation).
 * Only such lists accept {@code append}/{@code extend}/...: lists passed in by the caller (the
 * messages) are never mutated. Lives within one render; not thread-safe.
 */
final class MutableList extends ArrayList<Object> {

    private static final long serialVersionUID = 1L;

    MutableList() {
    }

    MutableList(int capacity) {
        super(capacity);
    }

    MutableList(Collection<?> items) {
        super(items);
    }
}
