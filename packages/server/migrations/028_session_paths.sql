-- §16 session folders. A series has a path in its cut's folder (NFC; null for files uploaded without one): every
-- version shows it, and a version uploaded with another path moves the series there (a rename). `path_key` is
-- what paths are compared by (NFC with Unicode case folding, computed by the server): unique within a cut, so two
-- concurrent uploads can never both take one path, whatever the server checked before.
alter table file_series add column path text;
alter table file_series add column path_key text;
alter table file_series add constraint file_series_path_pair check ((path is null) = (path_key is null));
create unique index file_series_cut_path_key on file_series (cut_id, path_key) where path_key is not null;

-- A fourth type: any other extension uploaded with a path.
alter table files drop constraint files_type_check;
alter table files add constraint files_type_check check (type in ('CUT', 'STEM', 'IMAGE', 'SESSION'));

-- A resumable upload's path (Upload-Metadata path), NFC, applied when it completes.
alter table resumable_uploads add column path text;
