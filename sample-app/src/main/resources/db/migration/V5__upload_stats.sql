-- How many files each user uploaded, counted by the count-upload task from the FileUploaded event
-- that every upload publishes. Every 100th upload sends the owner a push, enqueued by this trigger
-- straight from SQL (pgqueue.enqueue_job), in the transaction that counted it.
CREATE TABLE upload_stats (
    owner   text    PRIMARY KEY,
    uploads integer NOT NULL
);

CREATE FUNCTION upload_milestone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.uploads % 100 = 0 THEN
        PERFORM pgqueue.enqueue_job('send-push',
                                    jsonb_build_object('owner', NEW.owner,
                                                       'message', 'You uploaded ' || NEW.uploads || ' files'),
                                    dedup_key => 'milestone-' || NEW.owner || '-' || NEW.uploads,
                                    tags => ARRAY['owner:' || NEW.owner]);
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER upload_milestone AFTER INSERT OR UPDATE OF uploads ON upload_stats
    FOR EACH ROW EXECUTE FUNCTION upload_milestone();
