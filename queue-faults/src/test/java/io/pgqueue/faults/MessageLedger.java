package io.pgqueue.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What the message senders and receivers of a run recorded ({@code FaultMessageSender},
 * {@code FaultMessageReceiver}): the messages sent (committed), every receive, and what the
 * deletes answered, with the checks of a message scenario.
 */
final class MessageLedger {

    /** A message a send committed: its queue and body. */
    record Sent(String queue, String body) {
    }

    /** One receive of a message, in microseconds since the epoch. */
    record Receive(String queue, String messageId, int count, String body, long at, String node) {
    }

    final Map<String, Sent> sent = new LinkedHashMap<>();

    /** Bodies of sends that failed: such a send wrote nothing, unless its commit's answer was lost. */
    final Set<String> failedBodies = new HashSet<>();

    final List<Receive> receives = new ArrayList<>();

    final Set<String> deleted = new HashSet<>();

    /** Delete entries refused: message id and error code. */
    final List<String> refused = new ArrayList<>();

    /** Whether every sender ended its sends. */
    boolean sendersDone;

    static MessageLedger read(Path records) {
        MessageLedger ledger = new MessageLedger();
        int senders = 0;
        int ended = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(records, "*.{sends,receives}")) {
            for (Path file : files) {
                boolean sends = file.getFileName().toString().endsWith(".sends");
                senders += sends ? 1 : 0;
                String node = file.getFileName().toString().substring(0, file.getFileName().toString().lastIndexOf('-'));
                for (String line : Files.readAllLines(file)) {
                    String[] words = line.split(" ");
                    switch (words[0]) {
                        case "S" -> ledger.sent.put(words[2], new Sent(words[1], words[3]));
                        case "F" -> ledger.failedBodies.add(words[2]);
                        case "E" -> ended += sends ? 1 : 0;
                        case "R" -> ledger.receives.add(new Receive(words[1], words[2], Integer.parseInt(words[3]),
                                words[4], Long.parseLong(words[5]), node));
                        case "D" -> ledger.deleted.add(words[1]);
                        case "X" -> ledger.refused.add(words[1] + " " + words[2]);
                        default -> {
                        }
                    }
                }
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        ledger.sendersDone = senders > 0 && ended == senders;
        ledger.receives.sort(Comparator.comparingLong(Receive::at));
        return ledger;
    }

    /** @return messages sent and never received */
    List<String> lost() {
        Set<String> received = this.receives.stream().map(Receive::messageId).collect(Collectors.toSet());
        return this.sent.keySet().stream().filter(id -> !received.contains(id)).toList();
    }

    /** @return messages received that no send recorded, but for those of a send whose answer was an error */
    List<String> unknown() {
        return this.receives.stream().filter(receive -> !this.sent.containsKey(receive.messageId())
                && !this.failedBodies.contains(receive.body())).map(Receive::messageId).distinct().toList();
    }

    /** @return second and later receives of a message */
    List<Receive> receivedAgain() {
        Set<String> seen = new HashSet<>();
        return this.receives.stream().filter(receive -> !seen.add(receive.messageId())).toList();
    }

    /**
     * @param visibilityMicros the visibility timeout
     * @return receives that came within the visibility timeout of the message's receive before
     */
    List<Receive> receivedWithinVisibility(long visibilityMicros) {
        Map<String, Long> last = new LinkedHashMap<>();
        List<Receive> early = new ArrayList<>();
        for (Receive receive : this.receives) {
            Long before = last.put(receive.messageId(), receive.at());
            if (before != null && receive.at() - before < visibilityMicros) {
                early.add(receive);
            }
        }
        return early;
    }

    /**
     * @param queue a FIFO queue whose bodies are {@code <group>:<n>}
     * @return per group whose first receives did not come in the order of n, the order they came in
     */
    Map<String, List<Integer>> fifoOutOfOrder(String queue) {
        Map<String, List<Integer>> orders = new LinkedHashMap<>();
        Set<String> first = new HashSet<>();
        for (Receive receive : this.receives) {
            if (receive.queue().equals(queue) && first.add(receive.messageId())) {
                String[] parts = receive.body().split(":");
                orders.computeIfAbsent(parts[0], group -> new ArrayList<>()).add(Integer.parseInt(parts[1]));
            }
        }
        Map<String, List<Integer>> wrong = new LinkedHashMap<>();
        orders.forEach((group, order) -> {
            for (int i = 1; i < order.size(); i++) {
                if (order.get(i) <= order.get(i - 1)) {
                    wrong.put(group, order);
                    return;
                }
            }
        });
        return wrong;
    }
}
