package io.nereid.engine.template;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The object {@code namespace(...)} returns: the one value a template may assign attributes to
 * ({@code {% set ns.x = 1 %}}), which is how state escapes loop scopes. Lives within one render;
 * not thread-safe.
 */
final class Namespace {

    private final Map<String, Object> attributes = new LinkedHashMap<>();

    Map<String, Object> attributes() {
        return attributes;
    }

    @Override
    public String toString() {
        return "<Namespace " + PyValues.repr(attributes) + ">";
    }
}
