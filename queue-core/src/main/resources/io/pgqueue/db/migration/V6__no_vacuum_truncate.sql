-- pgqueue schema, version 6: VACUUM leaves the active-job table's empty tail pages in place.
--
-- The table's tail empties and refills every few seconds (at 200 jobs/s a VACUUM found it at
-- 15 pages and truncated it to 1, to be extended again at once). Truncating takes an ACCESS
-- EXCLUSIVE lock: enqueues, claims and outcome writes wait behind it while the truncation's WAL
-- record is flushed, and on a hot standby its replay cancels queries that read the table. The
-- pages are kept for the next jobs instead; the free space map hands them out.
ALTER TABLE job SET (vacuum_truncate = false);
