package io.pgqueue.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What producers recorded about their transactions ({@code *.enqueues}, written by
 * {@link FaultProducer}): the jobs of the transactions whose commit returned, of those rolled back on
 * purpose, and of those whose outcome the producer never learnt (killed between enqueue and commit,
 * or a commit that failed), which committed entirely or not at all.
 */
final class EnqueueLedger {

    /** Job id → when its transaction's commit returned (epoch millis). */
    final Map<Long, Long> committed = new HashMap<>();

    final Set<Long> rolledBack = new HashSet<>();

    /** Per transaction of unknown outcome, its jobs. */
    final List<List<Long>> inDoubt = new ArrayList<>();

    int transactions;

    int committedTransactions;

    int rolledBackTransactions;

    /** Transactions that failed before any job was enqueued (nothing written), e.g. a partition that did not settle. */
    int failedEnqueues;

    private EnqueueLedger() {
    }

    static EnqueueLedger read(Path records) {
        EnqueueLedger ledger = new EnqueueLedger();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(records, "*.enqueues")) {
            for (Path file : files) {
                Map<String, List<Long>> open = new LinkedHashMap<>();
                for (String line : Files.readAllLines(file)) {
                    String[] words = line.split(" ");
                    switch (words[0]) {
                        case "T" -> open.put(words[1], Arrays.stream(words, 2, words.length).map(Long::valueOf).toList());
                        case "C" -> {
                            open.remove(words[1]).forEach(id -> ledger.committed.put(id, Long.valueOf(words[2])));
                            ledger.committedTransactions++;
                        }
                        case "R" -> {
                            ledger.rolledBack.addAll(open.remove(words[1]));
                            ledger.rolledBackTransactions++;
                        }
                        case "F" -> {
                            List<Long> jobs = open.remove(words[1]);
                            if (jobs == null) {
                                ledger.failedEnqueues++;
                            }
                            else {
                                ledger.inDoubt.add(jobs);
                            }
                        }
                        default -> throw new IllegalStateException("Unexpected line in " + file + ": " + line);
                    }
                    if (!words[0].equals("T")) {
                        ledger.transactions++;
                    }
                }
                ledger.inDoubt.addAll(open.values());
                ledger.transactions += open.size();
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return ledger;
    }
}
