package io.pgqueue.autoconfigure;

import javax.sql.DataSource;

import org.springframework.beans.factory.ObjectProvider;

/**
 * The queue's database, resolved once: the DataSource qualified {@link QueueDataSource}, or else
 * the application's only (or primary) one.
 *
 * @param dataSource the queue's DataSource
 */
record QueueDatabase(DataSource dataSource) {

    static QueueDatabase resolve(ObjectProvider<DataSource> dataSource, ObjectProvider<DataSource> queueDataSource) {
        DataSource qualified = queueDataSource.getIfUnique();
        if (qualified != null) {
            return new QueueDatabase(qualified);
        }
        DataSource unique = dataSource.getIfUnique();
        if (unique == null) {
            throw new QueueConfigurationException("The application has several DataSources and pgqueue cannot tell "
                    + "which one to use", "Mark the queue's DataSource with @QueueDataSource, or one DataSource with "
                    + "@Primary.");
        }
        return new QueueDatabase(unique);
    }
}
