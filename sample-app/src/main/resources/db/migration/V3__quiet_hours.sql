-- Users who asked not to be disturbed until a time: their pushes wait (snoozed) until then.
CREATE TABLE quiet_hours (
    owner text        PRIMARY KEY,
    until timestamptz NOT NULL
);
