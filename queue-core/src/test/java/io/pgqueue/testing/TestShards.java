package io.pgqueue.testing;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fresh databases for the shards of a sharded queue, with the queue's schema migrated (the sharded
 * installation is set up on it when a queue first opens), created before each test and dropped after
 * it (after the test's own {@code @AfterEach} methods, which stop the queues on them):
 * {@code @RegisterExtension final TestShards shards = TestShards.perTest("move", 2);}.
 */
public final class TestShards implements BeforeEachCallback, AfterEachCallback {

    private final String prefix;

    private final int count;

    private final List<TestDatabase> databases = new ArrayList<>();

    private TestShards(String prefix, int count) {
        this.prefix = prefix;
        this.count = count;
    }

    /**
     * @param prefix prefix of the databases' names
     * @param count how many databases (the main shard's included)
     * @return the extension; register it as an instance field
     */
    public static TestShards perTest(String prefix, int count) {
        return new TestShards(prefix, count);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        for (int i = 0; i < this.count; i++) {
            this.databases.add(TestDatabase.createMigrated(this.prefix + "_" + (i == 0 ? "main" : (char) ('a' + i))));
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        this.databases.forEach(TestDatabase::close);
        this.databases.clear();
    }

    /**
     * @param index 0 for the main shard's database, then the others in order
     * @return the database
     */
    public TestDatabase get(int index) {
        return this.databases.get(index);
    }
}
