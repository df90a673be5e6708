-- A migration after the contract one, held back with it.
ALTER TABLE ${flyway:defaultSchema}.probe_new ADD COLUMN note text;
