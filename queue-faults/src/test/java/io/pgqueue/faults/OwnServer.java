package io.pgqueue.faults;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A PostgreSQL server of a scenario class's own ({@code @RegisterExtension static final OwnServer
 * server = new OwnServer();}): started before its first scenario, stopped after its last, so that
 * the classes can run side by side and restart their server without touching another's.
 */
final class OwnServer implements BeforeAllCallback, AfterAllCallback {

    private final boolean fsync;

    private FaultServer server;

    /** A server with fsync off (the embedded server's default), which makes writes cheaper. */
    OwnServer() {
        this(false);
    }

    /** @param fsync whether the server flushes its writes to disk, as a production server does */
    OwnServer(boolean fsync) {
        this.fsync = fsync;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        this.server = FaultServer.start(this.fsync);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        this.server.close();
    }

    /** @return the running server */
    FaultServer get() {
        return this.server;
    }
}
