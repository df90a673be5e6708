/*
 * Thread wake-up probe (docs/design-notes.md, "The latency floor"): one thread signals another
 * through a Condition every 5 ms, 4,000 times, and the woken thread records how long the signal
 * took to reach it.
 *   javac Wake.java && java Wake
 */
import java.util.*;
import java.util.concurrent.locks.*;
public class Wake {
    static volatile long sent;
    public static void main(String[] a) throws Exception {
        int n = 4000; long[] lat = new long[n];
        ReentrantLock lock = new ReentrantLock(); Condition c = lock.newCondition();
        final boolean[] flag = {false};
        Thread b = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                lock.lock();
                try { while (!flag[0]) c.awaitUninterruptibly(); flag[0] = false; } finally { lock.unlock(); }
                lat[i] = System.nanoTime() - sent;
            }
        });
        b.start();
        for (int i = 0; i < n; i++) {
            Thread.sleep(5);
            lock.lock();
            try { sent = System.nanoTime(); flag[0] = true; c.signal(); } finally { lock.unlock(); }
        }
        b.join();
        Arrays.sort(lat);
        System.out.printf("wake p50=%.1fus p90=%.1fus p99=%.1fus%n", lat[n/2]/1e3, lat[n*9/10]/1e3, lat[n*99/100]/1e3);
    }
}
