package io.pgqueue.autoconfigure.sqs;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import io.pgqueue.autoconfigure.QueueConfigurationException;
import io.pgqueue.message.MessageQueueAttributes;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueueInfo;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.message.RedrivePolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;

/**
 * Creates the queues declared under {@code pgqueue.sqs.queues} at start-up, or brings the existing
 * ones to the declared settings (their messages stay; attributes not declared keep their values;
 * declared tags are added). Every declaration is checked before anything is written: an unknown
 * attribute, a value out of range, a name SQS would refuse, or a dead-letter queue that is neither
 * declared nor existing stops the start-up naming the property, with no queue created or changed.
 * Dead-letter queues are set after every queue exists, so a queue may name one declared after it.
 */
final class SqsDeclaredQueues implements InitializingBean {

    private static final Logger log = LoggerFactory.getLogger(SqsDeclaredQueues.class);

    private final MessageQueues queues;

    private final Map<String, QueueSqsProperties.DeclaredQueue> declared;

    SqsDeclaredQueues(MessageQueues queues, Map<String, QueueSqsProperties.DeclaredQueue> declared) {
        this.queues = queues;
        this.declared = declared;
    }

    @Override
    public void afterPropertiesSet() {
        Map<String, Plan> plans = new LinkedHashMap<>();
        this.declared.forEach((name, queue) -> plans.put(name, plan(name, queue)));
        plans.values().forEach(plan -> checkDeadLetterQueue(plan, plans));
        // First every queue, with the dead-letter queue it has (none when new); then the declared ones.
        plans.values().forEach(plan -> {
            MessageQueueAttributes first = plan.attributes
                .withRedrivePolicy(plan.existing.map(queue -> queue.attributes().redrivePolicy()).orElse(null));
            if (plan.existing.isEmpty()) {
                this.queues.createQueue(plan.name, first, plan.tags);
                log.info("Message queue {} created as pgqueue.sqs.queues declares it", plan.name);
            }
            else {
                if (!first.equals(plan.existing.get().attributes())) {
                    this.queues.setAttributes(plan.name, first);
                    log.info("Message queue {} updated to the attributes pgqueue.sqs.queues declares", plan.name);
                }
                if (!plan.tags.isEmpty()) {
                    this.queues.tagQueue(plan.name, plan.tags);
                }
            }
        });
        plans.values().stream()
            .filter(plan -> !Objects.equals(plan.attributes.redrivePolicy(),
                    plan.existing.map(queue -> queue.attributes().redrivePolicy()).orElse(null)))
            .forEach(plan -> this.queues.setAttributes(plan.name, this.queues.getQueue(plan.name).attributes()
                .withRedrivePolicy(plan.attributes.redrivePolicy())));
    }

    private Plan plan(String name, QueueSqsProperties.DeclaredQueue queue) {
        String property = "pgqueue.sqs.queues." + name;
        try {
            this.queues.check(name, queue.getTags());
            Optional<MessageQueueInfo> existing = SqsActions.existing(this.queues, name);
            Map<String, String> values = new LinkedHashMap<>(queue.getAttributes());
            boolean structured = queue.getDeadLetterQueue() != null || queue.getMaxReceiveCount() != null;
            if (structured && values.containsKey("RedrivePolicy")) {
                throw new QueueConfigurationException(property + " declares its dead-letter queue twice: with "
                        + "dead-letter-queue and max-receive-count, and with the attribute RedrivePolicy",
                        "Keep one of them");
            }
            MessageQueueAttributes attributes = SqsActions.attributes(values,
                    existing.map(MessageQueueInfo::attributes).orElse(MessageQueueAttributes.defaults()), name);
            if (structured) {
                if (queue.getDeadLetterQueue() == null || queue.getMaxReceiveCount() == null) {
                    throw new QueueConfigurationException(property + " sets only one of dead-letter-queue and "
                            + "max-receive-count", "Set both " + property + ".dead-letter-queue and " + property
                                    + ".max-receive-count, or neither");
                }
                attributes = attributes.withRedrivePolicy(new RedrivePolicy(queue.getDeadLetterQueue(),
                        queue.getMaxReceiveCount()));
            }
            return new Plan(name, property, attributes, Map.copyOf(queue.getTags()), existing);
        }
        catch (MessageQueueException ex) {
            throw new QueueConfigurationException(property + " is not a valid queue: " + ex.getMessage(),
                    "Correct " + property + " (attributes take the values SQS's CreateQueue takes, see docs/sqs.md)");
        }
    }

    private void checkDeadLetterQueue(Plan plan, Map<String, Plan> plans) {
        RedrivePolicy policy = plan.attributes.redrivePolicy();
        if (policy == null) {
            return;
        }
        String target = policy.deadLetterQueue();
        if (!plans.containsKey(target) && SqsActions.existing(this.queues, target).isEmpty()) {
            throw new QueueConfigurationException(plan.property + " names the dead-letter queue " + target
                    + ", which is neither declared nor existing", "Declare " + target + " under pgqueue.sqs.queues, or "
                            + "name an existing queue");
        }
        if (target.endsWith(".fifo") != plan.name.endsWith(".fifo") || target.equals(plan.name)) {
            throw new QueueConfigurationException(plan.property + " names the dead-letter queue " + target
                    + ", which cannot take its messages", "A FIFO queue's dead-letter queue is a FIFO queue, a standard "
                            + "queue's a standard queue, and no queue is its own");
        }
    }

    /** What start-up does to one declared queue, checked before anything is written. */
    private record Plan(String name, String property, MessageQueueAttributes attributes, Map<String, String> tags,
            Optional<MessageQueueInfo> existing) {
    }
}
