-- A probe release's expand migration: what both releases can live with.
CREATE TABLE ${flyway:defaultSchema}.probe_old (id integer);
CREATE TABLE ${flyway:defaultSchema}.probe_new (id integer);
