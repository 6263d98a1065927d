package io.nereid.engine.tokenizer;

import java.util.Arrays;

/** A growable int array for building token id sequences without boxing. Not thread-safe. */
final class IntList {

    private int[] a;
    private int size;

    IntList(int capacity) {
        a = new int[Math.max(4, capacity)];
    }

    void add(int v) {
        if (size == a.length) {
            a = Arrays.copyOf(a, size * 2);
        }
        a[size++] = v;
    }

    void addAll(int[] values) {
        if (size + values.length > a.length) {
            a = Arrays.copyOf(a, Math.max(size + values.length, a.length * 2));
        }
        System.arraycopy(values, 0, a, size, values.length);
        size += values.length;
    }

    int size() {
        return size;
    }

    int get(int i) {
        return a[i];
    }

    int[] toArray() {
        return Arrays.copyOf(a, size);
    }
}
