-- pgqueue schema, version 20: a job's result is what its completing attempt recorded, read only once
-- the job completed.
--
-- A result is written under the lease of the attempt that records it, and only while that lease
-- holds (WorkflowStatements.RECORD_RESULT); lease_epoch says which claim wrote it. The transaction
-- that ends the job marks the result completed when the job completed under that same claim
-- (end_jobs, R__workflows.sql); dependents read completed results only. The value of an attempt that
-- then failed, was retried, lost its lease or was cancelled is never read.
ALTER TABLE job_result ADD COLUMN lease_epoch integer;

ALTER TABLE job_result ADD COLUMN completed boolean NOT NULL DEFAULT false;

-- Results recorded before this version stay readable, as they were, unless their job is still in
-- the queue (its end marks its result when it completes) or ended otherwise than completed. The
-- table holds small values of kept workflows and recent jobs: the update reads it once.
UPDATE job_result AS r SET completed = true
WHERE NOT EXISTS (SELECT 1 FROM job AS j WHERE j.id = r.id)
  AND NOT EXISTS (SELECT 1 FROM job_finished AS f WHERE f.id = r.id AND f.state <> 'COMPLETED');
