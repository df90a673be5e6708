-- pgqueue schema, version 28: each worker node records the schema version its release was built
-- for, so that operators (the doctor, the endpoint) see when nodes of two releases run side by side
-- during a rolling deploy. Nodes of releases before this one leave it empty.
ALTER TABLE node ADD COLUMN schema_version integer;
