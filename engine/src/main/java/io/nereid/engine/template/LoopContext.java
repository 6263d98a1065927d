package io.nereid.engine.template;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The {@code loop} variable of a {@code for} block: {@code index}, {@code index0},
 * {@code revindex}, {@code revindex0}, {@code first}, {@code last}, {@code length},
 * {@code previtem}, {@code nextitem}, {@code depth}, {@code depth0}, {@code cycle(...)},
 * {@code changed(...)}, and for {@code recursive} loops {@code loop(children)}. The evaluator
 * advances {@link #index0} as it iterates. Lives within one render; not thread-safe.
 */
final class LoopContext implements PyCallable {

    private final List<Object> items;
    private final int depth0;
    private final Node.For node;      // for recursive calls; null when not recursive
    private final Frame frame;        // the frame the loop started in
    int index0;
    private Object[] lastChanged;

    LoopContext(List<Object> items, int depth0, Node.For node, Frame frame) {
        this.items = items;
        this.depth0 = depth0;
        this.node = node;
        this.frame = frame;
    }

    List<Object> items() {
        return items;
    }

    int length() {
        return items.size();
    }

    Object attribute(String name) {
        int n = items.size();
        return switch (name) {
            case "index" -> (long) index0 + 1;
            case "index0" -> (long) index0;
            case "revindex" -> (long) (n - index0);
            case "revindex0" -> (long) (n - index0 - 1);
            case "first" -> index0 == 0;
            case "last" -> index0 == n - 1;
            case "length" -> (long) n;
            case "depth" -> (long) depth0 + 1;
            case "depth0" -> (long) depth0;
            case "previtem" -> index0 > 0 ? items.get(index0 - 1) : Undefined.withHint("there is no previous item");
            case "nextitem" -> index0 < n - 1 ? items.get(index0 + 1) : Undefined.withHint("there is no next item");
            case "cycle", "changed" -> new BoundMethod(this, name);
            default -> Undefined.member(this, name);
        };
    }

    Object method(String name, List<Object> args) {
        if (name.equals("cycle")) {
            if (args.isEmpty()) {
                throw PyError.type("no items for cycling given");
            }
            return args.get(index0 % args.size());
        }
        Object[] value = args.toArray();
        if (lastChanged == null || !PyValues.eq(Arrays.asList(lastChanged), Arrays.asList(value))) {
            lastChanged = value;
            return true;
        }
        return false;
    }

    @Override
    public Object call(Evaluator ev, List<Object> args, Map<String, Object> kwargs) {
        if (node == null) {
            throw PyError.type("The loop must have the 'recursive' marker to be called recursively.");
        }
        if (args.size() != 1 || !kwargs.isEmpty()) {
            throw PyError.type("loop() takes exactly one argument");
        }
        return ev.recurseLoop(node, frame, args.getFirst(), depth0 + 1);
    }

    @Override
    public String name() {
        return "loop";
    }

    @Override
    public String toString() {
        return "<LoopContext " + (index0 + 1) + "/" + items.size() + ">";
    }
}
