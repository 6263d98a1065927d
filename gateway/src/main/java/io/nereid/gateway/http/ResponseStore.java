package io.nereid.gateway.http;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Where {@code /v1/responses} keeps the responses it stores: an embedded H2 database, in a file
 * that survives restarts ({@code --responses-store}) or in memory. One row per response: its
 * owner (a digest of the API key that made it; one key never reads another's), creation time,
 * status, the response object as returned, this request's input items, and the conversation a
 * {@code previous_response_id} continues (chat messages: the earlier turns, this input, this
 * output). Rows older than the TTL go, and the oldest go first when the stored JSON passes the
 * size limit. JDBC blocks: call from worker threads only. Thread-safe (one connection, used under
 * this object's lock).
 */
final class ResponseStore implements AutoCloseable {

    /** One stored response. {@code response}, {@code inputItems} and {@code conversation} are JSON. */
    record Stored(String id, String owner, long createdAt, String status, String response, String inputItems,
            String conversation) {
        long bytes() {
            return (long) response.length() + inputItems.length() + conversation.length();
        }
    }

    private final Connection db;
    private final GatewayOptions.ResponsesStore options;
    private long bytes;          // the stored JSON's length, all rows
    private long lastExpiry;     // System.nanoTime() of the last TTL sweep

    /** @throws IllegalStateException naming the file when the database cannot be opened (in use by another process) */
    ResponseStore(GatewayOptions.ResponsesStore options) {
        this.options = options;
        String url;
        if (options.file() == null) {
            url = "jdbc:h2:mem:nereid-responses-" + Long.toHexString(ThreadLocalRandom.current().nextLong())
                    + ";DB_CLOSE_DELAY=-1";
        } else {
            Path file = options.file().toAbsolutePath();
            try {
                Files.createDirectories(file.getParent());
            } catch (IOException e) {
                throw new IllegalStateException("--responses-store " + file + ": cannot create its folder: " + e.getMessage());
            }
            url = "jdbc:h2:file:" + file;
        }
        try {
            db = DriverManager.getConnection(url, "sa", "");
            try (Statement s = db.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS responses (id VARCHAR(80) PRIMARY KEY, owner VARCHAR(80) NOT NULL,"
                        + " created_at BIGINT NOT NULL, status VARCHAR(20) NOT NULL, response CLOB NOT NULL,"
                        + " input_items CLOB NOT NULL, conversation CLOB NOT NULL, bytes BIGINT NOT NULL)");
                s.execute("CREATE INDEX IF NOT EXISTS responses_created ON responses(created_at)");
                try (ResultSet r = s.executeQuery("SELECT COALESCE(SUM(bytes), 0) FROM responses")) {
                    r.next();
                    bytes = r.getLong(1);
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("--responses-store " + (options.file() == null ? "memory" : options.file()
                    + ".mv.db") + ": cannot open the database (another server using it?): " + e.getMessage(), e);
        }
    }

    /** Stores (or replaces) {@code s}, then drops what is past the TTL or over the size limit. */
    synchronized void put(Stored s) {
        try {
            Stored old = get(s.id());
            try (PreparedStatement p = db.prepareStatement("MERGE INTO responses KEY(id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
                p.setString(1, s.id());
                p.setString(2, s.owner());
                p.setLong(3, s.createdAt());
                p.setString(4, s.status());
                p.setString(5, s.response());
                p.setString(6, s.inputItems());
                p.setString(7, s.conversation());
                p.setLong(8, s.bytes());
                p.executeUpdate();
            }
            bytes += s.bytes() - (old == null ? 0 : old.bytes());
            prune();
        } catch (SQLException e) {
            throw new IllegalStateException("the responses store failed: " + e.getMessage(), e);
        }
    }

    /** The response {@code id} made with {@code owner}'s key, or null (none, another key's, or expired). */
    synchronized Stored get(String owner, String id) {
        Stored s = get(id);
        return s == null || !s.owner().equals(owner) || expired(s) ? null : s;
    }

    private boolean expired(Stored s) {
        return s.createdAt() < System.currentTimeMillis() / 1000 - options.ttl().toSeconds();
    }

    private Stored get(String id) {
        try (PreparedStatement p = db.prepareStatement("SELECT id, owner, created_at, status, response, input_items,"
                + " conversation FROM responses WHERE id = ?")) {
            p.setString(1, id);
            try (ResultSet r = p.executeQuery()) {
                return r.next() ? new Stored(r.getString(1), r.getString(2), r.getLong(3), r.getString(4), r.getString(5),
                        r.getString(6), r.getString(7)) : null;
            }
        } catch (SQLException e) {
            throw new IllegalStateException("the responses store failed: " + e.getMessage(), e);
        }
    }

    /** Deletes response {@code id} of {@code owner}; false when there was none. */
    synchronized boolean delete(String owner, String id) {
        Stored s = get(owner, id);
        if (s == null) {
            return false;
        }
        try (PreparedStatement p = db.prepareStatement("DELETE FROM responses WHERE id = ?")) {
            p.setString(1, id);
            p.executeUpdate();
            bytes -= s.bytes();
            return true;
        } catch (SQLException e) {
            throw new IllegalStateException("the responses store failed: " + e.getMessage(), e);
        }
    }

    /** Rows past the TTL (at most once a minute), then the oldest while the JSON is over the size limit. */
    private void prune() throws SQLException {
        long now = System.nanoTime();
        if (lastExpiry == 0 || now - lastExpiry > 60_000_000_000L) {
            lastExpiry = now;
            try (PreparedStatement p = db.prepareStatement("DELETE FROM responses WHERE created_at < ?")) {
                p.setLong(1, System.currentTimeMillis() / 1000 - options.ttl().toSeconds());
                if (p.executeUpdate() > 0) {
                    try (Statement s = db.createStatement(); ResultSet r = s.executeQuery(
                            "SELECT COALESCE(SUM(bytes), 0) FROM responses")) {
                        r.next();
                        bytes = r.getLong(1);
                    }
                }
            }
        }
        if (bytes <= options.maxBytes()) {
            return;
        }
        List<String> drop = new ArrayList<>();
        long over = bytes - options.maxBytes();
        try (Statement s = db.createStatement();
                ResultSet r = s.executeQuery("SELECT id, bytes FROM responses ORDER BY created_at, id")) {
            while (over > 0 && r.next()) {
                drop.add(r.getString(1));
                over -= r.getLong(2);
                bytes -= r.getLong(2);
            }
        }
        try (PreparedStatement p = db.prepareStatement("DELETE FROM responses WHERE id = ?")) {
            for (String id : drop) {
                p.setString(1, id);
                p.executeUpdate();
            }
        }
    }

    @Override
    public synchronized void close() {
        try {
            if (options.file() == null) {
                try (Statement s = db.createStatement()) {
                    s.execute("SHUTDOWN");
                }
            }
            db.close();
        } catch (SQLException e) {
            // closing at shutdown: nothing more to do
        }
    }
}
