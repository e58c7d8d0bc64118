-- §14: a resumable upload may be the next version of a series (Upload-Metadata versionOf). The series is
-- resolved when the upload is created and kept by id (its first file may be deleted meanwhile); an upload of a
-- series deleted before it completes goes with it, as one of a deleted cut does.
alter table resumable_uploads add column series_id uuid references file_series (id) on delete cascade;
