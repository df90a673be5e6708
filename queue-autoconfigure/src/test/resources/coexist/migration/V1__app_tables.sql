CREATE TABLE customer (id bigint PRIMARY KEY, name text NOT NULL);
