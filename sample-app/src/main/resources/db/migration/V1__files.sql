-- The sample application's own tables (its own Flyway, schema "public"); the queue's tables live
-- in the "pgqueue" schema, migrated by the queue's own Flyway.
CREATE TABLE file (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner       text        NOT NULL,
    folder      text        NOT NULL,
    name        text        NOT NULL,
    size_bytes  bigint      NOT NULL,
    thumbnail   text,
    uploaded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX file_folder_idx ON file (owner, folder);

CREATE TABLE notification (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner   text        NOT NULL,
    message text        NOT NULL,
    sent_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memory (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner        text        NOT NULL,
    title        text        NOT NULL,
    published_at timestamptz
);

CREATE TABLE device_sync (
    owner     text        PRIMARY KEY,
    runs      integer     NOT NULL DEFAULT 0,
    last_seen text,
    synced_at timestamptz
);
