-- The sha256 of each project cover and vibe image, recorded at upload: it is the image's ETag, so a GET or
-- HEAD no longer hashes the bytes. Images stored before this are null here and hashed once, on first read.
alter table projects add column image_sha256 text;
alter table vibes add column image_sha256 text;
