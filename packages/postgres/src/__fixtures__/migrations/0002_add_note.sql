ALTER TABLE thing ADD COLUMN note text;
