package io.nereid.engine.template;

import java.util.List;

/**
 * A Python tuple: what {@code (a, b)}, {@code dict.items()} pairs and {@code varargs} produce.
 * Prints as {@code (1, 'a')}; serializes as a JSON array; never equal to a list. Immutable.
 */
record PyTuple(List<Object> items) {

    static PyTuple of(Object... items) {
        return new PyTuple(java.util.Arrays.asList(items));
    }

    /** An immutable copy that, unlike {@code List.copyOf}, accepts None (null) items. */
    static PyTuple copyOf(List<?> items) {
        return new PyTuple(java.util.Collections.unmodifiableList(new java.util.ArrayList<Object>(items)));
    }
}
