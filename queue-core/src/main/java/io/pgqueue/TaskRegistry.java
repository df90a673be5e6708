package io.pgqueue;

import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The task types known to a queue. Jobs can only be enqueued for a declared task.
 */
public final class TaskRegistry {

    private final Map<String, TaskDefinition> tasks;

    private final Map<Class<?>, TaskDefinition> byHandler;

    private TaskRegistry(Map<String, TaskDefinition> tasks) {
        this.tasks = tasks;
        Map<Class<?>, TaskDefinition> byHandler = new HashMap<>();
        for (TaskDefinition task : tasks.values()) {
            if (task.handlerType() != null && byHandler.putIfAbsent(task.handlerType(), task) != null) {
                throw new IllegalArgumentException("Handler " + task.handlerType().getName() + " is bound to two tasks");
            }
        }
        this.byHandler = Map.copyOf(byHandler);
    }

    /**
     * Creates a registry.
     * @param definitions the task definitions
     * @return the registry
     * @throws IllegalArgumentException if two definitions share a name
     */
    public static TaskRegistry of(Collection<TaskDefinition> definitions) {
        Map<String, TaskDefinition> tasks = new LinkedHashMap<>();
        for (TaskDefinition definition : definitions) {
            if (tasks.putIfAbsent(definition.name(), definition) != null) {
                throw new IllegalArgumentException("Task '" + definition.name() + "' is declared twice");
            }
        }
        return new TaskRegistry(Map.copyOf(tasks));
    }

    /**
     * Creates a registry.
     * @param definitions the task definitions
     * @return the registry
     */
    public static TaskRegistry of(TaskDefinition... definitions) {
        return of(List.of(definitions));
    }

    /**
     * Returns the definition of a task.
     * @param name the task name
     * @return the definition
     * @throws InvalidJobException if the name is blank or malformed
     * @throws UnknownTaskException if no such task is declared
     */
    public TaskDefinition require(String name) {
        TaskDefinition.validateName(name);
        TaskDefinition definition = this.tasks.get(name);
        if (definition == null) {
            throw new UnknownTaskException(name, this.tasks.keySet());
        }
        return definition;
    }

    /**
     * Returns the definition of the task a handler class is bound to.
     * @param handlerType the handler class
     * @return the definition
     * @throws UnknownTaskException if no task is bound to the class
     */
    public TaskDefinition require(Class<?> handlerType) {
        TaskDefinition definition = this.byHandler.get(handlerType);
        if (definition == null) {
            throw new UnknownTaskException(handlerType.getName(), this.tasks.keySet());
        }
        return definition;
    }

    /**
     * Looks up the definition of a task.
     * @param name the task name
     * @return the definition, or empty if no such task is declared
     */
    public Optional<TaskDefinition> find(String name) {
        return Optional.ofNullable(this.tasks.get(name));
    }

    /** @return all definitions */
    public Collection<TaskDefinition> all() {
        return this.tasks.values();
    }
}
