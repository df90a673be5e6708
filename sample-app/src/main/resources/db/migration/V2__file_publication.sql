-- An upload is published after its thumbnail was rendered and a virus scan found it clean.
ALTER TABLE file ADD COLUMN scan_verdict text;
ALTER TABLE file ADD COLUMN published_at timestamptz;
