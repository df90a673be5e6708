package io.pgqueue.autoconfigure;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;

/**
 * Checks every {@code pgqueue.*} setting and every {@code @QueueTask} bean before any bean is
 * created, so that a bad value stops the start-up before anything touches the database (neither
 * the queue's migration nor the application's own). It also refuses keys under
 * {@code pgqueue.tasks.<name>} that no task setting has (a typo would otherwise be ignored),
 * suggesting the nearest one.
 */
final class QueueSettingsCheck implements BeanFactoryPostProcessor {

    private static final ConfigurationPropertyName TASKS = ConfigurationPropertyName.of("pgqueue.tasks");

    /** The settings of a task under {@code pgqueue.tasks.<name>}. */
    private static final List<String> TASK_KEYS = List.of("pool", "concurrency", "timeout", "max-attempts", "priority",
            "delay-tolerance", "dedup-key", "dedup-policy", "unique-period", "unique-states", "max-lag", "global-concurrency", "rate", "rate-burst", "groups", "group-key", "group-concurrency",
            "sequence-on-failure", "history", "tags", "encrypted", "chunk-size", "chunk-linger", "cron", "zone", "catch-up", "retry.kind", "retry.delay", "retry.step",
            "retry.multiplier", "retry.max-delay", "retry.jitter", "retry.policy-bean");

    private final Environment environment;

    QueueSettingsCheck(Environment environment) {
        this.environment = environment;
    }

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
        checkTaskKeys(this.environment);
        QueueProperties properties = Binder.get(this.environment).bindOrCreate("pgqueue", QueueProperties.class);
        QueueSettingsMapper.RawValues raw = this.environment::getProperty;
        QueueSettingsMapper.queueConfig(properties, raw);
        QueueSettingsMapper.statsInterval(properties, raw);
        if (properties.getWorkers().isEnabled()) {
            QueueSettingsMapper.workerSettings(properties, raw);
        }
        QueueTaskBindings.discover(beanFactory, properties);
    }

    /**
     * Refuses keys under {@code pgqueue.tasks.<name>} that are not task settings.
     * @throws QueueConfigurationException naming the key and the nearest setting
     */
    static void checkTaskKeys(Environment environment) {
        List<ConfigurationPropertyName> known = TASK_KEYS.stream().map(ConfigurationPropertyName::of).toList();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (!(source instanceof IterableConfigurationPropertySource iterable)) {
                continue;
            }
            try (Stream<ConfigurationPropertyName> names = iterable.stream()) {
                names.filter(TASKS::isAncestorOf)
                    .filter(name -> name.getNumberOfElements() > 3)
                    .filter(name -> !known(known, name.subName(3)))
                    .findFirst()
                    .ifPresent(name -> {
                        throw unknownTaskKey(name);
                    });
            }
        }
    }

    /** Whether a task's key is a setting, or an element of a setting's list ({@code tags[0]}). */
    private static boolean known(List<ConfigurationPropertyName> known, ConfigurationPropertyName key) {
        return known.contains(key) || (key.isLastElementIndexed() && known.contains(key.getParent()));
    }

    private static QueueConfigurationException unknownTaskKey(ConfigurationPropertyName name) {
        String key = name.subName(3).toString();
        String task = name.getElement(2, ConfigurationPropertyName.Form.ORIGINAL);
        Optional<String> nearest = TASK_KEYS.stream().min(Comparator.comparingInt(known -> distance(known, key)))
            .filter(known -> distance(known, key) <= 3);
        return new QueueConfigurationException("'" + name + "' is not a task setting" + nearest
            .map(known -> "; did you mean 'pgqueue.tasks." + task + "." + known + "'?").orElse(""),
                "Fix the key. The settings of a task are " + String.join(", ", TASK_KEYS) + ".");
    }

    /**
     * Returns the edit distance between two names (insertions, deletions, substitutions).
     * @param a one name
     * @param b another
     * @return the distance
     */
    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
