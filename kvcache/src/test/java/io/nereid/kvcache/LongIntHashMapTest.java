package io.nereid.kvcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LongIntHashMapTest {

    @Test
    void agreesWithHashMapUnderRandomInsertsAndRemovesWithCollidingKeys() {
        Random random = new Random(7);
        LongIntHashMap map = new LongIntHashMap(64);
        Map<Long, Integer> reference = new HashMap<>();
        List<Long> keys = new ArrayList<>();
        for (int step = 0; step < 20_000; step++) {
            if (reference.size() < 64 && (keys.isEmpty() || random.nextBoolean())) {
                // Few distinct low bits: long probe runs that wrap around the table.
                long key = ((long) random.nextInt(1 << 20) << 32) | random.nextInt(4) | 0x7c;
                if (!reference.containsKey(key)) {
                    int value = 1 + random.nextInt(1000);
                    map.putNew(key, value);
                    reference.put(key, value);
                    keys.add(key);
                }
            } else {
                long key = keys.remove(random.nextInt(keys.size()));
                int value = reference.remove(key);
                assertFalse(map.remove(key, value + 1), "remove with the wrong value must not remove");
                assertTrue(map.remove(key, value));
                assertEquals(0, map.get(key));
            }
            assertEquals(reference.size(), map.size());
            for (Map.Entry<Long, Integer> e : reference.entrySet()) {
                assertEquals(e.getValue(), map.get(e.getKey()));
            }
        }
    }
}
