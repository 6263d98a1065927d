package io.nereid.engine.template;

import java.util.List;
import java.util.Map;

/**
 * Python's arithmetic and membership operators with CPython's results and error messages:
 * int/float promotion (bool counts as int), true division, floor division and modulo with the
 * sign of the divisor, {@code str}/{@code list}/{@code tuple} concatenation and repetition,
 * {@code str % args} formatting, {@code in}. Ints are 64-bit here: a result that would need more
 * raises {@code OverflowError} instead of growing like a Python int. Stateless; thread-safe.
 */
final class PyOps {

    /** Upper bound on a string or list built by repetition, against runaway templates. */
    static final long MAX_REPEAT_LENGTH = 100_000_000L;

    private PyOps() {
    }

    static Object binary(String op, Object a, Object b) {
        if (a instanceof Undefined u) {
            throw u.error();
        }
        if (b instanceof Undefined u) {
            throw u.error();
        }
        return switch (op) {
            case "+" -> add(a, b);
            case "-" -> arithmetic(op, a, b);
            case "*" -> multiply(a, b);
            case "/" -> divide(a, b);
            case "//" -> floorDivide(a, b);
            case "%" -> a instanceof String s ? PyFormat.percent(s, b) : arithmetic(op, a, b);
            case "**" -> power(a, b);
            default -> throw new IllegalArgumentException("operator " + op);
        };
    }

    private static PyError unsupported(String op, Object a, Object b) {
        return PyError.type("unsupported operand type(s) for " + op + ": '" + PyValues.typeName(a) + "' and '"
                + PyValues.typeName(b) + "'");
    }

    private static Object add(Object a, Object b) {
        if (PyValues.isNumber(a) && PyValues.isNumber(b)) {
            return arithmetic("+", a, b);
        }
        if (a instanceof String s) {
            if (b instanceof String t) {
                return s.concat(t);
            }
            throw PyError.type("can only concatenate str (not \"" + PyValues.typeName(b) + "\") to str");
        }
        if (a instanceof List<?> l) {
            if (b instanceof List<?> m) {
                MutableList out = new MutableList(l.size() + m.size());
                out.addAll(l);
                out.addAll(m);
                return out;
            }
            throw PyError.type("can only concatenate list (not \"" + PyValues.typeName(b) + "\") to list");
        }
        if (a instanceof PyTuple t) {
            if (b instanceof PyTuple u) {
                MutableList out = new MutableList(t.items());
                out.addAll(u.items());
                return PyTuple.copyOf(out);
            }
            throw PyError.type("can only concatenate tuple (not \"" + PyValues.typeName(b) + "\") to tuple");
        }
        throw unsupported("+", a, b);
    }

    /** {@code + - %} on numbers. */
    private static Object arithmetic(String op, Object a, Object b) {
        if (!PyValues.isNumber(a) || !PyValues.isNumber(b)) {
            throw unsupported(op, a, b);
        }
        if (PyValues.isFloat(a) || PyValues.isFloat(b)) {
            double x = PyValues.toDouble(a);
            double y = PyValues.toDouble(b);
            return switch (op) {
                case "+" -> x + y;
                case "-" -> x - y;
                default -> floatMod(x, y);
            };
        }
        long x = PyValues.toLong(a);
        long y = PyValues.toLong(b);
        try {
            return switch (op) {
                case "+" -> Math.addExact(x, y);
                case "-" -> Math.subtractExact(x, y);
                default -> {
                    if (y == 0) {
                        throw PyError.zeroDivision("integer modulo by zero");
                    }
                    yield Math.floorMod(x, y);
                }
            };
        } catch (ArithmeticException e) {
            throw overflow();
        }
    }

    private static double floatMod(double x, double y) {
        if (y == 0) {
            throw PyError.zeroDivision("float modulo");
        }
        double r = x % y;
        if (r != 0 && (r < 0) != (y < 0)) {
            r += y;
        }
        return r == 0 ? Math.copySign(0.0, y) : r;
    }

    private static PyError overflow() {
        return PyError.overflow("integer result does not fit in 64 bits");
    }

    private static Object multiply(Object a, Object b) {
        if (PyValues.isNumber(a) && PyValues.isNumber(b)) {
            if (PyValues.isFloat(a) || PyValues.isFloat(b)) {
                return PyValues.toDouble(a) * PyValues.toDouble(b);
            }
            try {
                return Math.multiplyExact(PyValues.toLong(a), PyValues.toLong(b));
            } catch (ArithmeticException e) {
                throw overflow();
            }
        }
        if (PyValues.isIntegral(b) && !PyValues.isIntegral(a)) {
            return repeat(a, PyValues.toLong(b), b);
        }
        if (PyValues.isIntegral(a)) {
            return repeat(b, PyValues.toLong(a), a);
        }
        throw PyError.type("can't multiply sequence by non-int of type '" + PyValues.typeName(b) + "'");
    }

    private static Object repeat(Object seq, long times, Object count) {
        long n = Math.max(0, times);
        if (seq instanceof String s) {
            checkSize((long) s.length() * n);
            return s.repeat((int) n);
        }
        List<?> items = seq instanceof List<?> l ? l : seq instanceof PyTuple t ? t.items() : null;
        if (items == null) {
            throw unsupported("*", count, seq);
        }
        checkSize((long) items.size() * n);
        MutableList out = new MutableList();
        for (long i = 0; i < n; i++) {
            out.addAll(items);
        }
        return seq instanceof PyTuple ? PyTuple.copyOf(out) : out;
    }

    private static void checkSize(long size) {
        if (size > MAX_REPEAT_LENGTH) {
            throw PyError.overflow("repeated sequence would have " + size + " items");
        }
    }

    private static Object divide(Object a, Object b) {
        if (!PyValues.isNumber(a) || !PyValues.isNumber(b)) {
            throw unsupported("/", a, b);
        }
        double y = PyValues.toDouble(b);
        if (y == 0) {
            throw PyError.zeroDivision("division by zero");
        }
        if (!PyValues.isFloat(a) && !PyValues.isFloat(b)) {
            return (double) PyValues.toLong(a) / PyValues.toLong(b);
        }
        return PyValues.toDouble(a) / y;
    }

    private static Object floorDivide(Object a, Object b) {
        if (!PyValues.isNumber(a) || !PyValues.isNumber(b)) {
            throw unsupported("//", a, b);
        }
        if (PyValues.isFloat(a) || PyValues.isFloat(b)) {
            double y = PyValues.toDouble(b);
            if (y == 0) {
                throw PyError.zeroDivision("float floor division by zero");
            }
            double x = PyValues.toDouble(a);
            return (x - floatMod(x, y)) / y;
        }
        long y = PyValues.toLong(b);
        if (y == 0) {
            throw PyError.zeroDivision("integer division or modulo by zero");
        }
        long x = PyValues.toLong(a);
        if (x == Long.MIN_VALUE && y == -1) {
            throw overflow();
        }
        return Math.floorDiv(x, y);
    }

    private static Object power(Object a, Object b) {
        if (!PyValues.isNumber(a) || !PyValues.isNumber(b)) {
            throw unsupported("** or pow()", a, b);
        }
        if (PyValues.isFloat(a) || PyValues.isFloat(b) || PyValues.toLong(b) < 0) {
            double x = PyValues.toDouble(a);
            double y = PyValues.toDouble(b);
            if (x == 0 && y < 0) {
                throw PyError.zeroDivision("0.0 cannot be raised to a negative power");
            }
            return Math.pow(x, y);
        }
        long base = PyValues.toLong(a);
        long exp = PyValues.toLong(b);
        long result = 1;
        try {
            while (exp > 0) {
                if ((exp & 1) == 1) {
                    result = Math.multiplyExact(result, base);
                }
                exp >>= 1;
                if (exp > 0) {
                    base = Math.multiplyExact(base, base);
                }
            }
        } catch (ArithmeticException e) {
            throw overflow();
        }
        return result;
    }

    static Object negate(Object a) {
        if (a instanceof Undefined u) {
            throw u.error();
        }
        if (PyValues.isFloat(a)) {
            return -PyValues.toDouble(a);
        }
        if (PyValues.isIntegral(a)) {
            long v = PyValues.toLong(a);
            if (v == Long.MIN_VALUE) {
                throw overflow();
            }
            return -v;
        }
        throw PyError.type("bad operand type for unary -: '" + PyValues.typeName(a) + "'");
    }

    static Object plus(Object a) {
        if (a instanceof Undefined u) {
            throw u.error();
        }
        if (PyValues.isFloat(a)) {
            return PyValues.toDouble(a);
        }
        if (PyValues.isIntegral(a)) {
            return PyValues.toLong(a);
        }
        throw PyError.type("bad operand type for unary +: '" + PyValues.typeName(a) + "'");
    }

    /** Python {@code item in container}. */
    static boolean contains(Object container, Object item) {
        switch (container) {
            case String s -> {
                if (!(item instanceof String t)) {
                    throw PyError.type("'in <string>' requires string as left operand, not " + PyValues.typeName(item));
                }
                return s.contains(t);
            }
            case List<?> l -> {
                for (Object o : l) {
                    if (PyValues.eq(o, item)) {
                        return true;
                    }
                }
                return false;
            }
            case PyTuple t -> {
                return contains(t.items(), item);
            }
            case Map<?, ?> m -> {
                if (item instanceof String || item == null) {
                    return m.containsKey(item);
                }
                if (item instanceof List<?> || item instanceof Map<?, ?>) {
                    throw PyError.type("unhashable type: '" + PyValues.typeName(item) + "'");
                }
                for (Object k : m.keySet()) {
                    if (PyValues.eq(k, item)) {
                        return true;
                    }
                }
                return false;
            }
            case Undefined u -> {
                return false;
            }
            case LoopContext l -> {
                return contains(l.items(), item);
            }
            case null, default -> throw PyError.type("argument of type '" + PyValues.typeName(container)
                    + "' is not iterable");
        }
    }
}
