-- Files the search index has taken in, and how many files the chunk that took each one held.
ALTER TABLE file ADD COLUMN indexed_at timestamptz;
ALTER TABLE file ADD COLUMN index_chunk integer;
