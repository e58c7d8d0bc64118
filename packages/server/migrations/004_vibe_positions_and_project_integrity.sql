-- A project's vibe positions are unique. Checked at commit, so a reorder may pass through duplicates
-- inside its transaction but can never commit them.
drop index vibes_project_id_idx;
alter table vibes add constraint vibes_project_position_key unique (project_id, position) deferrable initially deferred;

-- A cut belongs to a vibe of its own project, and a file to a cut of its own project: the database itself
-- refuses a cross-project move or a file filed under another project.
alter table vibes add constraint vibes_id_project_key unique (id, project_id);
alter table cuts add constraint cuts_vibe_same_project_fkey
  foreign key (vibe_id, project_id) references vibes (id, project_id) on delete cascade;
alter table cuts add constraint cuts_id_project_key unique (id, project_id);
alter table files add constraint files_cut_same_project_fkey
  foreign key (cut_id, project_id) references cuts (id, project_id) on delete cascade;
