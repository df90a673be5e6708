package io.pgqueue.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy in front of the server that can stop carrying bytes, both ways, on every connection
 * at once and carry on later: a network stall as a node sees it. The server's processes keep
 * running and answer into the void until the stall ends.
 */
final class StallingProxy implements AutoCloseable {

    private final ServerSocket listener;

    private final int serverPort;

    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    private volatile boolean stalled;

    StallingProxy(int serverPort) throws IOException {
        this.serverPort = serverPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "stalling-proxy");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return this.listener.getLocalPort();
    }

    void stall() {
        this.stalled = true;
    }

    void resume() {
        this.stalled = false;
    }

    private void accept() {
        while (!this.listener.isClosed()) {
            try {
                Socket client = this.listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), this.serverPort);
                this.sockets.add(client);
                this.sockets.add(server);
                pump(client, server);
                pump(server, client);
            }
            catch (IOException ex) {
                // closed
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    while (this.stalled) {
                        Thread.sleep(5);
                    }
                    out.write(buffer, 0, read);
                    out.flush();
                }
            }
            catch (IOException | InterruptedException ex) {
                // either side went away
            }
            finally {
                close(from);
                close(to);
            }
        }, "stalling-proxy-pump");
        thread.setDaemon(true);
        thread.start();
    }

    private static void close(Socket socket) {
        try {
            socket.close();
        }
        catch (IOException ex) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        this.listener.close();
        this.sockets.forEach(StallingProxy::close);
    }
}
