package io.pgqueue.internal.store;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collection;

import org.springframework.jdbc.core.support.AbstractSqlTypeValue;

/**
 * Binds Java arrays as PostgreSQL arrays, so that one statement can carry many rows
 * ({@code unnest(:ids)}) instead of one statement per row.
 */
public final class SqlArrays {

    private SqlArrays() {
    }

    static AbstractSqlTypeValue of(String elementType, Object[] values) {
        return new AbstractSqlTypeValue() {
            @Override
            protected Object createTypeValue(Connection connection, int sqlType, String typeName) throws SQLException {
                return connection.createArrayOf(elementType, values);
            }
        };
    }

    static AbstractSqlTypeValue bigints(Collection<Long> values) {
        return of("bigint", values.toArray(Long[]::new));
    }

    static AbstractSqlTypeValue ints(Collection<Integer> values) {
        return of("integer", values.toArray(Integer[]::new));
    }

    static AbstractSqlTypeValue texts(Collection<String> values) {
        return of("text", values.toArray(String[]::new));
    }

    static AbstractSqlTypeValue booleans(Collection<Boolean> values) {
        return of("boolean", values.toArray(Boolean[]::new));
    }
}
