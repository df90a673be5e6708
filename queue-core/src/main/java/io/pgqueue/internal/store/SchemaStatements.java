package io.pgqueue.internal.store;

/**
 * The SQL that inspects the queue's schema through the system catalogs rather than its tables.
 */
public final class SchemaStatements {

    private SchemaStatements() {
    }

    /**
     * The functions and tables of two lists that do not exist, functions first, each list in its
     * order. Takes qualified names (functions with their argument types, as {@code to_regprocedure}
     * reads them), so the answer does not depend on the connection's search_path; the {@code to_reg*}
     * functions return null for a name that does not resolve instead of failing, except
     * {@code to_regprocedure} for an argument type that does not exist (finished_job takes the job
     * table's row type): without the job table every function counts as missing, and the CASE
     * keeps {@code to_regprocedure} from being called then.
     */
    static final String MISSING_OBJECTS = """
            SELECT missing FROM (
                SELECT 1 AS kind, ord, 'function ' || f AS missing
                FROM unnest(CAST(:functions AS text[])) WITH ORDINALITY AS t(f, ord)
                WHERE CASE WHEN to_regclass(:jobTable) IS NULL THEN true ELSE to_regprocedure(f) IS NULL END
                UNION ALL
                SELECT 2, ord, 'table ' || f
                FROM unnest(CAST(:tables AS text[])) WITH ORDINALITY AS t(f, ord) WHERE to_regclass(f) IS NULL
                UNION ALL
                -- schema.table.column; a column of a missing table is left to the table's line.
                SELECT 3, ord, 'column ' || c
                FROM unnest(CAST(:columns AS text[])) WITH ORDINALITY AS t(c, ord)
                WHERE to_regclass(substring(c FROM '^(.*)[.][^.]+$')) IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM pg_attribute AS a
                                  WHERE a.attrelid = to_regclass(substring(c FROM '^(.*)[.][^.]+$'))
                                    AND a.attname = substring(c FROM '[^.]+$') AND NOT a.attisdropped)
            ) AS m
            ORDER BY kind, ord
            """;

    /**
     * The functions of a list whose comment names an older revision than the one this release's
     * code relies on ({@code "... revision <n>: ..."}): a repeatable migration changed them, and the
     * schema still holds an older body. A newer revision serves the release before too (a function
     * that changes what its callers must do gets a new signature), so nodes of two consecutive
     * releases run side by side on the newer schema.
     */
    static final String OUTDATED_FUNCTIONS = """
            SELECT f
            FROM unnest(CAST(:functions AS text[]), CAST(:revisions AS text[])) WITH ORDINALITY AS t(f, revision, ord)
            WHERE coalesce(CAST(substring(obj_description(to_regprocedure(f), 'pg_proc') FROM 'revision ([0-9]+)') AS integer), 0)
                  < CAST(substring(revision FROM 'revision ([0-9]+)') AS integer)
            ORDER BY ord
            """;
}
