-- A probe release's contract migration: removes what the release before still uses.
DROP TABLE ${flyway:defaultSchema}.probe_old;
