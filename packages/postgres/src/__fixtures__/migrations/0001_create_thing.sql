CREATE TABLE thing (
  id integer PRIMARY KEY,
  label text NOT NULL
);
